// @ts-check
/* global process, console */
/**
 * Runs every gemini-cli conformance scenario against the real CLI (0.61.0), checks what the real
 * client did, replays each run's telemetry outfile with our `replay` (profile auto-detected) and
 * requires the decisions the design gives, written in the scenario. With the guard hook registered
 * the hook's own decisions must be the same (or, where a scenario names a blind spot of the hook
 * path, `expectedHookDecisions`), and its effects must show on the wire: the reminder reaches the
 * model exactly once, with the warned batch's results; after `stopped` no model request follows.
 *
 * Usage: node conformance/gemini-cli/run-all.mjs [--out <dir>] [--record <dir>] [scenario-name ...]
 *
 * `--record <dir>` writes each run's telemetry, reduced to what the `gemini-cli` profile reads, and
 * the hook inputs gemini-cli sent, reduced to what the hook reads (`fixture.mjs`), into `<dir>`
 * (used to refresh fixtures/gemini-cli-0.61.0/). Exit code: 0 when
 * every selected scenario passed; 1 when one failed or the CLI or our build is missing; 2 on bad
 * usage.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { selectScenarios } from '../scenario-files.mjs';
import { isIsolated, reexecIsolated } from '../run-scenario.mjs';
import { readOutfile } from '../outfile.mjs';
import { fixtureOf, hookInputFixture } from './fixture.mjs';
import { compact, compareDecisions, parseDecisions, tableLines } from '../decisions.mjs';
import {
  GEMINI_CLI,
  geminiVersion,
  loadGeminiScenario,
  missingGeminiCli,
  OUR_CLI,
  PINNED_VERSION,
  runGeminiScenario,
} from './run-scenario.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** No scenario starts after this much time (a scenario takes 10-60 s per prompt on a loaded 2-core machine). */
const START_BUDGET_MILLIS = 540_000;
const ISOLATED_RUN_TIMEOUT_MILLIS = 660_000;
const REPLAY_TIMEOUT_MILLIS = 20_000;

/**
 * The 1-based prompt of a decision's prompt id: `<session>` is prompt 1, `<session>/<k>` prompt k.
 * @param {string} promptId
 */
function promptOf(promptId) {
  const m = /\/(\d+)$/.exec(promptId);
  return m ? Number(m[1]) : 1;
}

/**
 * Runs `replay` (no `--profile`: auto-detection) on the outfile.
 * @param {string} file
 * @param {string} mode
 */
function runReplay(file, mode) {
  const r = spawnSync(process.execPath, [OUR_CLI, 'replay', '--mode', mode, '--format', 'json', file], {
    encoding: 'utf8',
    timeout: REPLAY_TIMEOUT_MILLIS,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { stdout: r.stdout ?? '', stderr: r.stderr ?? '', status: r.status, error: r.error };
}

/**
 * Checks the real client's behaviour against the scenario (independent of our guard).
 * @param {import('./run-scenario.mjs').GeminiScenario} scenario
 * @param {import('./run-scenario.mjs').GeminiRun} run
 * @param {any[]} logs the outfile's log records
 * @returns {string[]}
 */
function checkRealClient(scenario, run, logs) {
  /** @type {string[]} */
  const problems = [];
  const exp = scenario.expectedOutcome;
  const main = run.requests.filter((r) => r.kind === 'main');
  const perPrompt = scenario.prompts.map((_, i) => main.filter((r) => r.prompt === i + 1).length);
  if (perPrompt.join(',') !== exp.mainRequests.join(',')) {
    problems.push(`main model requests per prompt [${perPrompt.join(',')}] != [${exp.mainRequests.join(',')}]`);
  }
  run.prompts.forEach((p, i) => {
    if (p.forcedKill) problems.push(`prompt ${i + 1}: the CLI did not exit by itself and was killed`);
    if (!p.result) problems.push(`prompt ${i + 1}: no stream-json result line (exit ${p.exitCode ?? p.signal})`);
  });
  const reminders = Math.max(0, ...main.map((r) => r.reminderExact));
  if (reminders !== (exp.remindersToModel ?? 0)) problems.push(`${reminders} reminder copies reached the model != ${exp.remindersToModel ?? 0}`);
  if (main.some((r) => r.stopTextExact > 0)) problems.push('the stop text reached the model');
  /** @param {string} name */
  const events = (name) => logs.filter((l) => l.attributes?.['event.name'] === name);
  const calls = events('gemini_cli.tool_call');
  const failed = calls.filter((l) => l.attributes.success === false);
  if (exp.failedToolCalls !== undefined && failed.length !== exp.failedToolCalls) {
    problems.push(`${failed.length} gemini_cli.tool_call logs with success=false != ${exp.failedToolCalls}`);
  }
  if (exp.shellNonZeroExits !== undefined) {
    // The exit status is in the tool's output only; the harness reads it from the model's history.
    const shellOk = calls.filter((l) => l.attributes.function_name === 'run_shell_command' && l.attributes.success === true).length;
    const nonZero = run.requests.reduce((n, r) => n + r.nonZeroExitResults, 0);
    if (nonZero !== exp.shellNonZeroExits || shellOk !== exp.shellNonZeroExits) {
      problems.push(`${nonZero} shell results with a non-zero exit code / ${shellOk} logged success != ${exp.shellNonZeroExits}`);
    }
  }
  const loops = events('loop_detected').length;
  if (loops !== (exp.loopDetected ?? 0)) problems.push(`${loops} loop_detected logs != ${exp.loopDetected ?? 0}`);
  for (const l of calls) {
    if (!l.attributes.prompt_id || !l.attributes['session.id']) problems.push('a tool_call log without prompt_id or session.id');
    if (!l.spanContext?.spanId) problems.push('a tool_call log without span context');
  }
  // Every call of one model response carries the same span (the batch span), and no other response's.
  const spansPerBatch = new Set(calls.map((l) => l.spanContext?.spanId));
  const batches = run.requests.filter((r) => r.kind === 'main' && r.callIds.length > 0 && r.round !== undefined).length;
  if (exp.loopDetected === undefined && spansPerBatch.size !== batches) problems.push(`${spansPerBatch.size} batch spans on tool_call logs != ${batches} tool-call responses`);
  const last = run.prompts.at(-1);
  const stopped = /Automatic continuation stopped/.test(last?.stdout ?? '') || /Automatic continuation stopped/.test(last?.stderr ?? '');
  if (Boolean(exp.stoppedByHook) !== stopped) problems.push(`the stop text was ${stopped ? '' : 'not '}shown to the user`);
  return problems;
}

/**
 * Checks the hook's effects on the wire at the batches the expected decisions name.
 * @param {import('./run-scenario.mjs').GeminiScenario} scenario
 * @param {import('./run-scenario.mjs').GeminiRun} run
 * @param {import('../decisions.mjs').Decision[]} expected
 * @returns {string[]}
 */
function checkHookEffects(scenario, run, expected) {
  /** @type {string[]} */
  const problems = [];
  const main = run.requests.filter((r) => r.kind === 'main');
  for (const [pi] of scenario.prompts.entries()) {
    const prompt = pi + 1;
    const warned = new Set(expected.filter((d) => (d.prompt ?? 1) === prompt && d.decision === 'warned').map((d) => Number(d.batch) + 1));
    let previous = 0;
    for (const r of main.filter((x) => x.prompt === prompt)) {
      const wanted = r.round !== undefined && warned.has(r.round) ? 1 : 0;
      if (r.reminderExact - previous !== wanted) {
        problems.push(`prompt ${prompt} request ${r.round}: reminder copies went ${previous} -> ${r.reminderExact}, expected +${wanted}`);
      }
      previous = r.reminderExact;
    }
    const stop = expected.find((d) => (d.prompt ?? 1) === prompt && d.decision === 'stopped');
    if (stop) {
      const after = main.filter((r) => r.prompt === prompt && (r.round ?? 0) > Number(stop.batch));
      if (after.length > 0) problems.push(`prompt ${prompt}: ${after.length} model request(s) after the stop at batch ${stop.batch}`);
    }
  }
  return problems;
}

/**
 * @param {string[]} argv
 */
async function main(argv) {
  /** @type {{ values: { out?: string, record?: string }, positionals: string[] }} */
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { out: { type: 'string' }, record: { type: 'string' } }, allowPositionals: true });
  } catch {
    console.error('usage: node conformance/gemini-cli/run-all.mjs [--out <dir>] [--record <dir>] [scenario-name ...]');
    return 2;
  }
  let outdir = parsed.values.out ?? process.env.CONFORMANCE_OUT ?? join(tmpdir(), `rtfg-conformance-gemini-cli-${Date.now()}`);
  const record = parsed.values.record;
  if (!existsSync(OUR_CLI)) {
    console.error(`conformance: ${OUR_CLI} does not exist; build it first (npm run build), or run npm run test:conformance`);
    return 1;
  }
  outdir = resolve(outdir);
  mkdirSync(outdir, { recursive: true });
  if (record) mkdirSync(resolve(record), { recursive: true });
  const dir = join(here, 'scenarios');
  const files = selectScenarios(dir, parsed.positionals);
  if (files === undefined) return 2;
  const version = geminiVersion();
  console.error(
    `conformance: ${files.length} gemini-cli scenarios, gemini-cli ${version} (${GEMINI_CLI}), network ${isIsolated() ? 'loopback-only namespace' : 'NOT isolated (offline settings only)'}, output ${outdir}`,
  );
  if (version !== PINNED_VERSION) console.error(`conformance: expected values were observed with ${PINNED_VERSION} only; this is ${version}`);

  const started = Date.now();
  /** @type {Record<string, any>[]} */
  const rows = [];
  for (const [n, file] of files.entries()) {
    const scenario = loadGeminiScenario(join(dir, file));
    /** @type {Record<string, any>} */
    const row = { name: scenario.name, mode: scenario.mode, hooks: scenario.hooks ?? 'none', ours: [], hook: [], problems: [] };
    rows.push(row);
    if (Date.now() - started > START_BUDGET_MILLIS) {
      row.problems.push('not run: time budget exhausted');
      continue;
    }
    console.error(`[${n + 1}/${files.length}] ${scenario.name} (${scenario.mode}, hooks ${row.hooks}) ...`);
    /** @type {string[]} */
    const problems = row.problems;
    try {
      const run = await runGeminiScenario(scenario, { outdir, log: (l) => console.error(`    ${l}`) });
      row.seconds = Math.round(run.durationMillis / 100) / 10;
      const records = readOutfile(run.outfile);
      const logs = records.filter((r) => r.attributes?.['event.name'] !== undefined && r.name === undefined);
      problems.push(...checkRealClient(scenario, run, logs));
      row.batches = run.requests.filter((r) => r.kind === 'main' && r.callIds.length > 0).length;

      const replay = runReplay(run.outfile, scenario.mode);
      if (replay.error) problems.push(`replay did not run to the end: ${replay.error.message}`);
      if (replay.status !== 0 && !(replay.status === 3 && scenario.expectedDecisions.length === 0)) {
        problems.push(`replay exited ${replay.status}: ${replay.stderr.split('\n').slice(-5).join(' | ')}`);
      }
      if (/VIOLATED/.test(replay.stderr)) problems.push(`replay invariant VIOLATED: ${replay.stderr.split('\n').filter((l) => /VIOLATED/.test(l)).join(' | ')}`);
      if (!/profile: gemini-cli/.test(replay.stderr)) problems.push('replay did not report `profile: gemini-cli` (auto-detection)');
      const ours = parseDecisions(replay.stdout, promptOf, problems, 'replay');
      row.ours = ours.map(compact);
      problems.push(...compareDecisions('replay vs expected', scenario.expectedDecisions, ours, scenario.mode));

      const hookText = readFileSync(run.hookDecisionsFile, 'utf8');
      if (scenario.hooks === 'guard') {
        /** @type {import('../decisions.mjs').Decision[]} */
        const expectedHook = /** @type {any} */ (scenario).expectedHookDecisions ?? scenario.expectedDecisions;
        const hook = parseDecisions(hookText, promptOf, problems, 'hook');
        row.hook = hook.map(compact);
        problems.push(...compareDecisions('hook vs expected', expectedHook, hook, scenario.mode));
        problems.push(...checkHookEffects(scenario, run, expectedHook));
      } else if (hookText.trim()) {
        problems.push('the guard hook wrote decisions although it was not registered');
      }
      if (record) {
        writeFileSync(join(resolve(record), `${scenario.name}.outfile.json`), fixtureOf(records));
        if (scenario.hooks === 'guard') {
          const hookLines = readFileSync(run.hookFile, 'utf8').split('\n').filter((l) => l.trim());
          const inputs = hookLines.map((l) => JSON.stringify(hookInputFixture(JSON.parse(l).input)));
          writeFileSync(join(resolve(record), `${scenario.name}.hooks.jsonl`), inputs.map((l) => `${l}\n`).join(''));
        }
      }
    } catch (err) {
      problems.push(`harness error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    row.ok = problems.length === 0;
    console.error(`    ${row.ok ? 'ok' : 'FAIL'} in ${row.seconds ?? '?'}s: ${row.ours.join(' ') || '(no decisions)'}`);
    for (const p of problems) console.error(`    - ${p}`);
  }
  const totalSeconds = Math.round((Date.now() - started) / 100) / 10;
  writeFileSync(join(outdir, 'summary.json'), JSON.stringify({ geminiCli: version, cli: GEMINI_CLI, isolated: isIsolated(), totalSeconds, rows }, null, 2));

  const table = [['scenario', 'mode', 'hooks', 'batches', 'replay decisions (= expected)', 'hook decisions']];
  for (const r of rows) {
    table.push([
      `${r.ok ? '' : 'FAIL '}${r.name}`,
      r.mode,
      r.hooks,
      String(r.batches ?? '-'),
      r.ours.join(' ') || '-',
      r.hooks === 'guard' ? r.hook.join(' ') || '-' : 'n/a',
    ]);
  }
  console.log('gemini-cli');
  for (const line of tableLines(table)) console.log(line);
  const failed = rows.filter((r) => !r.ok);
  console.log('');
  for (const r of failed) console.log(`FAIL ${r.name}:\n  - ${r.problems.join('\n  - ')}`);
  console.log(`gemini-cli ${version}, network ${isIsolated() ? 'loopback-only namespace' : 'not isolated'}, ${totalSeconds}s, details in ${join(outdir, 'summary.json')}`);
  console.log(`gemini-cli: ${rows.length - failed.length} passed, ${failed.length} failed`);
  return failed.length === 0 ? 0 : 1;
}

const missing = missingGeminiCli();
if (missing) {
  console.error(missing);
  process.exit(1);
}
const code = reexecIsolated(ISOLATED_RUN_TIMEOUT_MILLIS);
process.exit(code ?? (await main(process.argv.slice(2))));

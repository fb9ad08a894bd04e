// @ts-check
/* global process */
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
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readOutfile } from '../outfile.mjs';
import { fixtureOf, hookInputFixture } from './fixture.mjs';
import { agentConformanceMain, replayProblems } from '../agent-runs.mjs';
import { compact, compareDecisions, parseDecisions, runReplay } from '../decisions.mjs';
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
 * One scenario against the real CLI: its run, the real client's behaviour, replay of its
 * telemetry, and with the guard hook its decisions and effects.
 * @param {import('./run-scenario.mjs').GeminiScenario} scenario
 * @param {import('../agent-runs.mjs').AgentRow} row
 * @param {{ outdir: string, record: string | undefined, log: (line: string) => void }} ctx
 */
async function runOne(scenario, row, { outdir, record, log }) {
  const problems = row.problems;
  const run = await runGeminiScenario(scenario, { outdir, log });
  row.seconds = Math.round(run.durationMillis / 100) / 10;
  const records = readOutfile(run.outfile);
  const logs = records.filter((r) => r.attributes?.['event.name'] !== undefined && r.name === undefined);
  problems.push(...checkRealClient(scenario, run, logs));
  row.batches = run.requests.filter((r) => r.kind === 'main' && r.callIds.length > 0).length;

  const replay = runReplay(OUR_CLI, run.outfile, scenario.mode, REPLAY_TIMEOUT_MILLIS);
  problems.push(...replayProblems(replay, 'gemini-cli', scenario.expectedDecisions.length === 0));
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
    writeFileSync(join(record, `${scenario.name}.outfile.json`), fixtureOf(records));
    if (scenario.hooks === 'guard') {
      const hookLines = readFileSync(run.hookFile, 'utf8').split('\n').filter((l) => l.trim());
      const inputs = hookLines.map((l) => JSON.stringify(hookInputFixture(JSON.parse(l))));
      writeFileSync(join(record, `${scenario.name}.hooks.jsonl`), inputs.map((l) => `${l}\n`).join(''));
    }
  }
}

await agentConformanceMain(
  {
    agent: 'gemini-cli',
    usage: 'conformance/gemini-cli/run-all.mjs',
    scenariosDir: join(here, 'scenarios'),
    ourCli: OUR_CLI,
    cliPath: GEMINI_CLI,
    version: geminiVersion,
    pinned: PINNED_VERSION,
    startBudgetMillis: START_BUDGET_MILLIS,
    load: loadGeminiScenario,
    run: runOne,
    missing: missingGeminiCli,
    isolatedRunTimeoutMillis: ISOLATED_RUN_TIMEOUT_MILLIS,
  },
  process.argv.slice(2),
);

// @ts-check
/* global process, console */
/**
 * Runs every Claude Code conformance scenario against the real CLI (2.1.328), checks what the real
 * client did, replays each run's telemetry with our `replay` (profile auto-detected) and requires
 * the decisions the design gives, written in the scenario. With the guard hook registered, the
 * hook's own decisions must be the same, and its effects must show on the wire: the reminder
 * reaches the model exactly once, after the warned batch; after `stopped` no model request follows
 * and the run ends with `terminal_reason: "hook_stopped"`.
 *
 * Usage: node conformance/claude-code/run-all.mjs [--out <dir>] [--record <dir>] [scenario-name ...]
 *
 * `--record <dir>` copies each run's OTLP JSON lines and hook inputs into `<dir>` (used to refresh
 * fixtures/claude-code-2.1.328/). Exit code: 0 when every selected scenario passed; 1 when one
 * failed or the CLI or our build is missing; 2 on bad usage.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runReplay } from '../decisions.mjs';
import { selectScenarios } from '../scenario-files.mjs';
import { isIsolated, reexecIsolated } from '../run-scenario.mjs';
import { STOP_TEXT } from './fake-anthropic.mjs';
import { readOtlpLines } from './otlp-lines.mjs';
import {
  CLAUDE_CLI,
  claudeVersion,
  loadClaudeScenario,
  missingClaudeCli,
  OUR_CLI,
  PINNED_VERSION,
  runClaudeScenario,
} from './run-scenario.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** No scenario starts after this much time (a scenario is bounded by about 70 s per prompt). */
const START_BUDGET_MILLIS = 900_000;
const ISOLATED_RUN_TIMEOUT_MILLIS = 1_020_000;
const REPLAY_TIMEOUT_MILLIS = 20_000;

const COMPARED = /** @type {const} */ ([
  'mode',
  'decision',
  'phaseBefore',
  'phaseAfter',
  'failureCountBucket',
  'batchCountBucket',
  'candidateOrdinal',
  'resetReason',
]);

/**
 * @typedef {Record<string, any>} Decision
 */

/**
 * A compact rendering: `tracked(1-2,1)#1`, `reset:success(3-4,2)#1`, prefixed `p2/` for prompt 2.
 * @param {Decision} d
 */
function compact(d) {
  const head = d.decision === 'reset' ? `reset:${d.resetReason}` : d.decision;
  return `${d.prompt > 1 ? `p${d.prompt}/` : ''}b${d.batch}:${head}(${d.failureCountBucket},${d.batchCountBucket})#${d.candidateOrdinal}`;
}

/**
 * Parses decision JSON lines; `prompt` is the 1-based order of the prompt id among `promptOrder`.
 * @param {string} text
 * @param {string[]} promptOrder
 * @param {string[]} problems
 * @param {string} label
 * @returns {Decision[]}
 */
function parseDecisions(text, promptOrder, problems, label) {
  /** @type {Decision[]} */
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const d = JSON.parse(line);
      // Only the failure guard's decisions: not the identical-call breaker's lines, not unjudged batches.
      if (d.guard !== 'repeated_tool_failure' || !('decision' in d)) continue;
      const prompt = promptOrder.indexOf(String(d.promptId)) + 1;
      if (prompt === 0) problems.push(`${label}: decision on an unknown prompt id ${d.promptId}`);
      out.push({ ...d, prompt });
    } catch {
      problems.push(`${label}: a non-JSON line: ${line.slice(0, 120)}`);
    }
  }
  return out;
}

/**
 * Compares decisions with the expected ones, position by position.
 * @param {string} label
 * @param {Decision[]} expected
 * @param {Decision[]} actual
 * @param {string} mode
 * @returns {string[]}
 */
function compareDecisions(label, expected, actual, mode) {
  /** @type {string[]} */
  const diffs = [];
  for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
    /** @type {Decision | undefined} */
    const e = expected[i] ? { mode, ...expected[i] } : undefined;
    const a = actual[i];
    if (!e || !a) {
      diffs.push(`${label} #${i + 1}: expected ${e ? compact(e) : '(nothing)'}, got ${a ? compact(a) : '(nothing)'}`);
      continue;
    }
    const bad = [...COMPARED, 'prompt', 'batch'].filter((k) => k in e || k in a).filter((k) => String(e[k]) !== String(a[k]));
    if (bad.length > 0) diffs.push(`${label} #${i + 1}: expected ${compact(e)} ${e.mode}, got ${compact(a)} ${a.mode} (${bad.join(', ')})`);
  }
  return diffs;
}

/**
 * Log events no profile reads and no check needs; left out of recorded fixtures to keep them small.
 * `hook_execution_complete` is kept for scenarios with the guard hook (it shows `num_blocking`).
 */
const NOISE_EVENTS = new Set([
  'claude_code.hook_registered',
  'claude_code.hook_execution_start',
  'claude_code.plugin_loaded',
  'claude_code.managed_settings_resolved',
  'claude_code.retention_sweep',
]);

/**
 * OTLP JSON lines without {@link NOISE_EVENTS} log records (everything else byte-for-byte as received,
 * re-serialised per line).
 * @param {string} text
 * @param {boolean} keepHookExecutions
 */
function withoutNoise(text, keepHookExecutions) {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => {
      const req = JSON.parse(line);
      for (const rl of req.resourceLogs ?? []) {
        for (const sl of rl.scopeLogs ?? []) {
          sl.logRecords = (sl.logRecords ?? []).filter(
            (/** @type {any} */ r) =>
              !NOISE_EVENTS.has(r.body?.stringValue) && (keepHookExecutions || r.body?.stringValue !== 'claude_code.hook_execution_complete'),
          );
        }
      }
      return `${JSON.stringify(req)}\n`;
    })
    .join('');
}

/**
 * OTLP JSON lines without their trace export requests.
 * @param {string} text
 */
function withoutSpans(text) {
  return text
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('{"resourceSpans"'))
    .map((l) => `${l}\n`)
    .join('');
}

/**
 * Checks the real client's behaviour against the scenario (independent of our guard).
 * @param {import('./run-scenario.mjs').ClaudeScenario} scenario
 * @param {import('./run-scenario.mjs').ClaudeRun} run
 * @param {ReturnType<typeof readOtlpLines>} otlp
 * @returns {string[]}
 */
function checkRealClient(scenario, run, otlp) {
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
    const want = exp.terminalReasons?.[i];
    if (want !== undefined && p.result?.terminal_reason !== want) {
      problems.push(`prompt ${i + 1}: terminal_reason ${p.result?.terminal_reason} != ${want}`);
    }
  });
  const reminders = Math.max(0, ...main.map((r) => r.reminderExact));
  if (exp.remindersToModel !== undefined && reminders !== exp.remindersToModel) {
    problems.push(`${reminders} reminder copies reached the model != ${exp.remindersToModel}`);
  }
  if (main.some((r) => r.stopTextExact > 0)) problems.push('the stop text reached the model');
  const repetitionWarnings = Math.max(0, ...main.map((r) => r.repetitionWarningExact));
  if (repetitionWarnings !== (exp.repetitionWarningsToModel ?? 0)) {
    problems.push(`${repetitionWarnings} identical-call warnings reached the model != ${exp.repetitionWarningsToModel ?? 0}`);
  }
  const results = otlp.logs.filter((l) => l.eventName === 'claude_code.tool_result');
  const failed = results.filter((l) => l.attributes.success === 'false');
  if (exp.failedToolResults !== undefined && failed.length !== exp.failedToolResults) {
    problems.push(`${failed.length} claude_code.tool_result events with success=false != ${exp.failedToolResults}`);
  }
  const subagent = run.requests.filter((r) => r.kind === 'subagent');
  if (exp.subagentRequests !== undefined && subagent.length !== exp.subagentRequests) {
    problems.push(`${subagent.length} subagent model requests != ${exp.subagentRequests}`);
  }
  if (exp.recordsBeforeApiRequest !== undefined) {
    /** @type {Map<string, bigint>} */
    const apiTime = new Map();
    for (const l of otlp.logs) if (l.eventName === 'claude_code.api_request') apiTime.set(String(l.attributes.request_id), BigInt(l.timeUnixNano));
    const early = otlp.logs.filter(
      (l) =>
        (l.eventName === 'claude_code.tool_result' || l.eventName === 'claude_code.tool_decision') &&
        BigInt(l.timeUnixNano) < (apiTime.get(String(l.attributes.request_id)) ?? 0n),
    ).length;
    if (early < exp.recordsBeforeApiRequest) {
      problems.push(`${early} tool events came before their response's api_request (the streamed shape) < ${exp.recordsBeforeApiRequest}`);
    }
  }
  if (exp.invisibleFailedCalls !== undefined) {
    const answeredWithError = run.requests.reduce((n, r) => n + r.errorResults, 0);
    const invisible = answeredWithError - failed.length;
    if (invisible !== exp.invisibleFailedCalls) {
      problems.push(`${invisible} failed calls left no tool_result event (${answeredWithError} is_error results) != ${exp.invisibleFailedCalls}`);
    }
  }
  // Wire facts the profile relies on: every tool event carries the request_id of the response that
  // asked for the call, and prompt.id / session.id.
  /** @type {Map<string, string>} */
  const requestOfCall = new Map();
  for (const r of run.requests) for (const id of r.callIds) requestOfCall.set(id, r.requestId);
  for (const l of otlp.logs.filter((x) => x.eventName === 'claude_code.tool_result' || x.eventName === 'claude_code.tool_decision')) {
    const id = String(l.attributes.tool_use_id);
    if (requestOfCall.get(id) !== l.attributes.request_id) {
      problems.push(`${l.eventName} ${id}: request_id ${l.attributes.request_id} != the provider's ${requestOfCall.get(id)}`);
    }
    if (!l.attributes['prompt.id'] || !l.attributes['session.id']) problems.push(`${l.eventName} ${id}: no prompt.id or session.id`);
  }
  if (!otlp.logs.some((l) => l.resource['service.name'] === 'claude-code')) problems.push('no log with resource service.name=claude-code');
  return problems;
}

/**
 * Checks the hook's effects on the wire at the batches the expected decisions name.
 * @param {import('./run-scenario.mjs').ClaudeScenario} scenario
 * @param {import('./run-scenario.mjs').ClaudeRun} run
 * @returns {string[]}
 */
function checkHookEffects(scenario, run) {
  /** @type {string[]} */
  const problems = [];
  const main = run.requests.filter((r) => r.kind === 'main');
  for (const [pi] of scenario.prompts.entries()) {
    const prompt = pi + 1;
    const warned = new Set(
      scenario.expectedDecisions.filter((d) => (d.prompt ?? 1) === prompt && d.decision === 'warned').map((d) => Number(d.batch) + 1),
    );
    let previous = 0;
    for (const r of main.filter((x) => x.prompt === prompt)) {
      const wanted = r.round !== undefined && warned.has(r.round) ? 1 : 0;
      if (r.reminderExact - previous !== wanted) {
        problems.push(`prompt ${prompt} request ${r.round}: reminder copies went ${previous} -> ${r.reminderExact}, expected +${wanted}`);
      }
      previous = r.reminderExact;
    }
    const stop = scenario.expectedDecisions.find((d) => (d.prompt ?? 1) === prompt && d.decision === 'stopped');
    if (stop) {
      const after = main.filter((r) => r.prompt === prompt && (r.round ?? 0) > Number(stop.batch));
      if (after.length > 0) problems.push(`prompt ${prompt}: ${after.length} model request(s) after the stop at batch ${stop.batch}`);
      // The user sees why the run stopped: the hook's systemMessage, printed by stream-json.
      const shown = run.prompts[pi]?.informational ?? [];
      if (!shown.some((m) => m.includes(STOP_TEXT))) problems.push(`prompt ${prompt}: the stop text was not shown to the user (stream-json informational: ${JSON.stringify(shown)})`);
    }
  }
  return problems;
}

/**
 * @param {string[]} argv
 */
/**
 * The expected decisions without the last batch of each prompt that ended `hook_stopped` (what the
 * telemetry can judge when the stop came from an HTTP hook).
 * @param {import('./run-scenario.mjs').ClaudeScenario} scenario
 */
function withoutHookStoppedFinalBatches(scenario) {
  const stopped = new Set((scenario.expectedOutcome.terminalReasons ?? []).flatMap((r, i) => (r === 'hook_stopped' ? [i + 1] : [])));
  /** @type {Map<number, number>} */
  const last = new Map();
  for (const d of scenario.expectedDecisions) last.set(d.prompt ?? 1, Math.max(last.get(d.prompt ?? 1) ?? 0, d.batch));
  return scenario.expectedDecisions.filter((d) => !(stopped.has(d.prompt ?? 1) && d.batch === last.get(d.prompt ?? 1)));
}

async function main(argv) {
  /** @type {{ values: { out?: string, record?: string }, positionals: string[] }} */
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { out: { type: 'string' }, record: { type: 'string' } }, allowPositionals: true });
  } catch {
    console.error('usage: node conformance/claude-code/run-all.mjs [--out <dir>] [--record <dir>] [scenario-name ...]');
    return 2;
  }
  let outdir = parsed.values.out ?? process.env.CONFORMANCE_OUT ?? join(tmpdir(), `rtfg-conformance-claude-code-${Date.now()}`);
  const record = parsed.values.record;
  const only = parsed.positionals;
  if (!existsSync(OUR_CLI)) {
    console.error(`conformance: ${OUR_CLI} does not exist; build it first (npm run build), or run npm run test:conformance`);
    return 1;
  }
  outdir = resolve(outdir);
  mkdirSync(outdir, { recursive: true });
  if (record) mkdirSync(resolve(record), { recursive: true });
  const dir = join(here, 'scenarios');
  const files = selectScenarios(dir, only);
  if (files === undefined) return 2;
  const version = claudeVersion();
  console.error(
    `conformance: ${files.length} Claude Code scenarios, claude ${version} (${CLAUDE_CLI}), network ${isIsolated() ? 'loopback-only namespace' : 'NOT isolated (offline settings only)'}, output ${outdir}`,
  );
  if (version !== PINNED_VERSION) console.error(`conformance: expected values were observed with ${PINNED_VERSION} only; this is ${version}`);

  const started = Date.now();
  /** @type {Record<string, any>[]} */
  const rows = [];
  // Every guard-hook scenario runs twice: the command hook, then the HTTP hook answered by
  // `serve --claude-code-hook-port` (CONFORMANCE_HOOK_TRANSPORT=command or http: one of them only).
  const transports = process.env.CONFORMANCE_HOOK_TRANSPORT === 'command' ? ['command'] : process.env.CONFORMANCE_HOOK_TRANSPORT === 'http' ? ['http'] : ['command', 'http'];
  /** @type {{ file: string, transport: 'command' | 'http' }[]} */
  const runs = files.flatMap((file) =>
    loadClaudeScenario(join(dir, file)).hooks === 'guard'
      ? transports.map((t) => ({ file, transport: /** @type {'command' | 'http'} */ (t) }))
      : [{ file, transport: /** @type {'command'} */ ('command') }],
  );
  for (const [n, { file, transport }] of runs.entries()) {
    const scenario = loadClaudeScenario(join(dir, file));
    const hooks = scenario.hooks !== 'guard' ? 'none' : transport === 'http' ? 'guard (http)' : 'guard';
    /** @type {Record<string, any>} */
    const row = { name: scenario.name, mode: scenario.mode, hooks, ours: [], logsOnly: [], hook: [], problems: [] };
    rows.push(row);
    if (Date.now() - started > START_BUDGET_MILLIS) {
      row.problems.push('not run: time budget exhausted');
      continue;
    }
    console.error(`[${n + 1}/${runs.length}] ${scenario.name} (${scenario.mode}, hooks ${row.hooks}) ...`);
    /** @type {string[]} */
    const problems = row.problems;
    try {
      const run = await runClaudeScenario(scenario, { outdir: transport === 'http' ? join(outdir, 'http') : outdir, log: (l) => console.error(`    ${l}`), hookTransport: transport });
      row.seconds = Math.round(run.durationMillis / 100) / 10;
      const otlp = readOtlpLines(run.otlpFile);
      problems.push(...checkRealClient(scenario, run, otlp));
      const promptOrder = [...new Set(otlp.logs.filter((l) => l.eventName === 'claude_code.user_prompt').map((l) => String(l.attributes['prompt.id'])))];
      if (promptOrder.length !== scenario.prompts.length) problems.push(`${promptOrder.length} user_prompt events != ${scenario.prompts.length} prompts`);
      row.batches = run.requests.filter((r) => r.kind === 'main' && r.callIds.length > 0).length;

      const replay = runReplay(OUR_CLI, run.otlpFile, scenario.mode, REPLAY_TIMEOUT_MILLIS);
      if (replay.error) problems.push(`replay did not run to the end: ${replay.error.message}`);
      if (replay.status !== 0) problems.push(`replay exited ${replay.status}: ${replay.stderr.split('\n').slice(-5).join(' | ')}`);
      if (/VIOLATED/.test(replay.stderr)) problems.push(`replay invariant VIOLATED: ${replay.stderr.split('\n').filter((l) => /VIOLATED/.test(l)).join(' | ')}`);
      if (!/profile: claude-code/.test(replay.stderr)) problems.push('replay did not report `profile: claude-code` (auto-detection)');
      const ours = parseDecisions(replay.stdout, promptOrder, problems, 'replay');
      row.ours = ours.map(compact);
      // 2.1.328 logs a `type: "http"` hook's PostToolBatch block with `num_blocking` 0, so the
      // telemetry cannot tell that stop from a cut turn: with the HTTP hook, the final batch of a
      // prompt the hook stopped is left unjudged (`turn_cancelled`; docs/claude-code.md). The hook's
      // own decisions, compared below, still have it.
      const replayExpected = transport === 'http' ? withoutHookStoppedFinalBatches(scenario) : scenario.expectedDecisions;
      problems.push(...compareDecisions('replay vs expected', replayExpected, ours, scenario.mode));
      if (replayExpected.length < scenario.expectedDecisions.length && !/final batch of \S+ not judged: the turn ended first \(turn cancelled\)/.test(replay.stderr)) {
        problems.push('with the HTTP hook, the replay did not say the stopped final batch was not judged');
      }

      // The same telemetry without its spans (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA unset): the logs
      // alone must give the design's decisions too.
      const logsOnlyFile = join(outdir, `${scenario.name}.logs-only.otlp.jsonl`);
      writeFileSync(logsOnlyFile, withoutSpans(readFileSync(run.otlpFile, 'utf8')));
      const logsOnly = runReplay(OUR_CLI, logsOnlyFile, scenario.mode, REPLAY_TIMEOUT_MILLIS);
      if (logsOnly.status !== 0) problems.push(`logs-only replay exited ${logsOnly.status}: ${logsOnly.stderr.split('\n').slice(-5).join(' | ')}`);
      if (/VIOLATED/.test(logsOnly.stderr)) problems.push(`logs-only replay invariant VIOLATED: ${logsOnly.stderr.split('\n').filter((l) => /VIOLATED/.test(l)).join(' | ')}`);
      const oursLogsOnly = parseDecisions(logsOnly.stdout, promptOrder, problems, 'logs-only replay');
      row.logsOnly = oursLogsOnly.map(compact);
      const logsOnlyExpected = scenario.expectedDecisionsLogsOnly ?? scenario.expectedDecisions;
      problems.push(...compareDecisions('logs-only replay vs expected', transport === 'http' ? withoutHookStoppedFinalBatches({ ...scenario, expectedDecisions: logsOnlyExpected }) : logsOnlyExpected, oursLogsOnly, scenario.mode));

      const hookText = readFileSync(run.hookDecisionsFile, 'utf8');
      if (scenario.hooks === 'guard') {
        const hook = parseDecisions(hookText, promptOrder, problems, 'hook');
        row.hook = hook.map(compact);
        problems.push(...compareDecisions('hook vs expected', scenario.expectedDecisions, hook, scenario.mode));
        problems.push(...checkHookEffects(scenario, run));
        // The hook's own telemetry (exported through Claude Code's OTEL_* environment) lands in the
        // same sink: one claude-code.repeated_tool_failure_guard log per decision.
        const exported = otlp.logs
          .filter((l) => l.eventName === 'claude-code.repeated_tool_failure_guard' || l.attributes['event.name'] === 'claude-code.repeated_tool_failure_guard')
          .map((l) => {
            const a = l.attributes;
            return `p${promptOrder.indexOf(String(a.prompt_id)) + 1}:${a.decision}${a.reset_reason ? `:${a.reset_reason}` : ''}(${a.failure_count_bucket},${a.batch_count_bucket})#${a.candidate_ordinal} ${a.mode} ${a.phase_before}->${a.phase_after}`;
          });
        const wanted = scenario.expectedDecisions.map(
          (d) =>
            `p${d.prompt ?? 1}:${d.decision}${d.resetReason ? `:${d.resetReason}` : ''}(${d.failureCountBucket},${d.batchCountBucket})#${d.candidateOrdinal} ${scenario.mode} ${d.phaseBefore}->${d.phaseAfter}`,
        );
        if (exported.join(' | ') !== wanted.join(' | ')) {
          problems.push(`the hook's exported guard logs [${exported.join(' | ')}] != expected [${wanted.join(' | ')}]`);
        }
      } else if (hookText.trim()) {
        problems.push('the guard hook wrote decisions although it was not registered');
      }
      if (record && transport === 'command') {
        writeFileSync(join(resolve(record), `${scenario.name}.otlp.jsonl`), withoutNoise(readFileSync(run.otlpFile, 'utf8'), scenario.hooks === 'guard'));
        copyFileSync(run.hookFile, join(resolve(record), `${scenario.name}.hooks.jsonl`));
        if (scenario.hooks === 'guard') copyFileSync(run.hookDecisionsFile, join(resolve(record), `${scenario.name}.hook-decisions.jsonl`));
      }
    } catch (err) {
      problems.push(`harness error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    row.ok = problems.length === 0;
    console.error(`    ${row.ok ? 'ok' : 'FAIL'} in ${row.seconds ?? '?'}s: ${row.ours.join(' ') || '(no decisions)'}`);
    for (const p of problems) console.error(`    - ${p}`);
  }
  const totalSeconds = Math.round((Date.now() - started) / 100) / 10;
  writeFileSync(join(outdir, 'summary.json'), JSON.stringify({ claudeCode: version, cli: CLAUDE_CLI, isolated: isIsolated(), totalSeconds, rows }, null, 2));

  const table = [['scenario', 'mode', 'hooks', 'batches', 'replay decisions (= expected)', 'logs only (= expected)', 'hook decisions']];
  for (const r of rows) {
    table.push([
      `${r.ok ? '' : 'FAIL '}${r.name}`,
      r.mode,
      r.hooks,
      String(r.batches ?? '-'),
      r.ours.join(' ') || '-',
      r.logsOnly.join(' ') === r.ours.join(' ') ? 'same' : r.logsOnly.join(' ') || '-',
      r.hooks.startsWith('guard') ? r.hook.join(' ') || '-' : 'n/a',
    ]);
  }
  const widths = table[0]?.map((_, c) => Math.max(...table.map((row) => (row[c] ?? '').length))) ?? [];
  console.log('Claude Code');
  for (const row of table) console.log(row.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(' | ').trimEnd());
  const failed = rows.filter((r) => !r.ok);
  console.log('');
  for (const r of failed) console.log(`FAIL ${r.name}:\n  - ${r.problems.join('\n  - ')}`);
  console.log(`claude-code ${version}, network ${isIsolated() ? 'loopback-only namespace' : 'not isolated'}, ${totalSeconds}s, details in ${join(outdir, 'summary.json')}`);
  console.log(`claude-code: ${rows.length - failed.length} passed, ${failed.length} failed`);
  return failed.length === 0 ? 0 : 1;
}

const missing = missingClaudeCli();
if (missing) {
  console.error(missing);
  process.exit(1);
}
const code = reexecIsolated(ISOLATED_RUN_TIMEOUT_MILLIS);
process.exit(code ?? (await main(process.argv.slice(2))));

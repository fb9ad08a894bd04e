// @ts-check
/* global process */
/**
 * Runs every Codex conformance scenario against the real Codex CLI (0.169.0), checks what the real
 * client did, replays each run's telemetry with our `replay` (profile auto-detected) and requires
 * the decisions the design gives, written in the scenario. With the guard hook registered
 * (`hooks: "guard"`), the hook's own decisions must match `expectedHookDecisions`, and its effects
 * must show on the wire: the reminder reaches the model once, after the warned batch; after the
 * stop no model request of the prompt follows.
 *
 * Usage: node conformance/codex/run-all.mjs [--out <dir>] [--record <dir>] [scenario-name ...]
 *
 * `--record <dir>` writes each run's telemetry, privacy-cleaned (the free-text attributes
 * `arguments`, `output`, `prompt` and every span but the ones the profile reads are dropped), and
 * its hook inputs without `tool_input`/`tool_response`, into `<dir>` (fixtures/codex-0.169.0/).
 * Exit code: 0 when every selected scenario passed; 1 when one failed or the CLI or our build is
 * missing; 2 on bad usage.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentConformanceMain, replayProblems } from '../agent-runs.mjs';
import { compact, compareDecisions, parseDecisions, runReplay } from '../decisions.mjs';
import { mapOtlpRequests, readOtlpLines } from '../claude-code/otlp-lines.mjs';
import { STOP_TEXT } from './fake-responses.mjs';
import { CODEX_CLI, codexVersion, loadCodexScenario, missingCodexCli, OUR_CLI, PINNED_VERSION, runCodexScenario } from './run-scenario.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** No scenario starts after this much time. */
const START_BUDGET_MILLIS = 420_000;
const ISOLATED_RUN_TIMEOUT_MILLIS = 540_000;
// Replay of one capture takes about 1 s; a loaded CI machine may need far more.
const REPLAY_TIMEOUT_MILLIS = 60_000;

/** Span names kept in recorded fixtures: what the `codex` profile reads. */
const KEPT_SPANS = new Set(['mcp.tools.call', 'session_task.turn']);
/** Log attributes never written to a fixture (free text). */
const DROPPED_LOG_ATTRIBUTES = new Set(['arguments', 'output', 'prompt']);
/** Span attributes kept in fixtures. */
const KEPT_SPAN_ATTRIBUTES = new Set(['tool.call_id', 'conversation.id', 'turn.id', 'error.type', 'codex.mcp.error.code', 'mcp.server.name', 'tool.name']);

/**
 * Privacy-clean OTLP JSON lines: logs without free-text attributes; spans reduced to the ones the
 * profile reads, with their structured attributes; no span events.
 * @param {string} text
 */
function cleanOtlp(text) {
  /** @param {any[] | undefined} attrs @param {(key: string) => boolean} keep */
  const only = (attrs, keep) => (attrs ?? []).filter((a) => keep(a.key));
  return mapOtlpRequests(text, (req) => {
    for (const r of (req.resourceLogs ?? []).flatMap((/** @type {any} */ rl) => rl.scopeLogs ?? []).flatMap((/** @type {any} */ sl) => sl.logRecords ?? [])) {
      r.attributes = only(r.attributes, (k) => !DROPPED_LOG_ATTRIBUTES.has(k));
    }
    /** @type {any[]} */
    const resourceSpans = [];
    for (const rs of req.resourceSpans ?? []) {
      const scopeSpans = (rs.scopeSpans ?? [])
        .map((/** @type {any} */ ss) => ({
          ...ss,
          spans: (ss.spans ?? []).filter((/** @type {any} */ s) => KEPT_SPANS.has(s.name)).map((/** @type {any} */ s) => ({ ...s, events: [], attributes: only(s.attributes, (k) => KEPT_SPAN_ATTRIBUTES.has(k)) })),
        }))
        .filter((/** @type {any} */ ss) => ss.spans.length > 0);
      if (scopeSpans.length > 0) resourceSpans.push({ ...rs, scopeSpans });
    }
    if (resourceSpans.length > 0) return { ...req, resourceSpans };
    return req.resourceLogs ? { resourceLogs: req.resourceLogs } : undefined;
  });
}

/**
 * A transcript line reduced to the structured fields `codex-hook` reads (`{}` for any other line,
 * so that line counts stay those of the real file): calls (name, namespace, call id), outputs (call
 * id), response ends, turn starts, and completed shell and MCP items (id, status, exit code,
 * whether the result is an error).
 * @param {string} line
 */
function cleanTranscriptLine(line) {
  /** @type {any} */
  let d;
  try {
    d = JSON.parse(line);
  } catch {
    return '{}';
  }
  const p = d?.payload ?? {};
  if (d?.type === 'token_usage_record') return JSON.stringify({ type: 'token_usage_record' });
  if (d?.type === 'response_item' && ['function_call', 'custom_tool_call'].includes(p.type)) {
    return JSON.stringify({ type: 'response_item', payload: { type: p.type, name: p.name, ...(p.namespace ? { namespace: p.namespace } : {}), call_id: p.call_id } });
  }
  if (d?.type === 'response_item' && ['function_call_output', 'custom_tool_call_output'].includes(p.type)) {
    return JSON.stringify({ type: 'response_item', payload: { type: p.type, call_id: p.call_id } });
  }
  if (d?.type === 'event_msg' && p.type === 'task_started') return JSON.stringify({ type: 'event_msg', payload: { type: 'task_started', turn_id: p.turn_id } });
  if (d?.type === 'event_msg' && p.type === 'item_completed' && ['CommandExecution', 'McpToolCall'].includes(p.item?.type)) {
    const it = p.item;
    const item = {
      type: it.type,
      id: it.id,
      status: it.status,
      ...(it.exit_code !== undefined ? { exit_code: it.exit_code } : {}),
      ...(it.result ? { result: { isError: it.result.isError === true } } : {}),
      ...(it.error ? { error: {} } : {}),
    };
    return JSON.stringify({ type: 'event_msg', payload: { type: 'item_completed', item } });
  }
  return '{}';
}

/**
 * Hook inputs without the call's input and output (free text).
 * @param {string} text
 */
function cleanHooks(text) {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => {
      const { receivedMillis, transcriptLines, input } = JSON.parse(line);
      /** @type {Record<string, unknown>} */
      const rest = { ...(input ?? {}) };
      const response = rest.tool_response;
      // The call's input only as a short digest: identical calls stay identical (the breaker's input).
      const digest = rest.tool_input === undefined ? {} : { tool_input_digest: createHash('sha256').update(JSON.stringify(rest.tool_input)).digest('hex').slice(0, 16) };
      for (const k of ['tool_input', 'tool_response', 'prompt', 'last_assistant_message', 'transcript_path', 'cwd']) delete rest[k];
      const shape =
        response === undefined
          ? {}
          : {
              tool_response_kind: typeof response === 'string' ? 'string' : Array.isArray(response) ? 'array' : typeof response,
              ...(response && typeof response === 'object' && 'isError' in response ? { tool_response_is_error: /** @type {any} */ (response).isError } : {}),
            };
      return `${JSON.stringify({ receivedMillis, transcriptLines, input: { ...rest, ...digest, ...shape } })}\n`;
    })
    .join('');
}

/**
 * The trace ids of the `codex.user_prompt` records, in order: the prompt ids the `codex` profile gives.
 * @param {string} text OTLP JSON lines
 */
function userPromptTraceIds(text) {
  /** @type {string[]} */
  const ids = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    for (const rl of JSON.parse(line).resourceLogs ?? []) {
      for (const sl of rl.scopeLogs ?? []) {
        for (const r of sl.logRecords ?? []) {
          const name = (r.attributes ?? []).find((/** @type {any} */ a) => a.key === 'event.name')?.value?.stringValue;
          if (name === 'codex.user_prompt' && r.traceId && !ids.includes(r.traceId)) ids.push(r.traceId);
        }
      }
    }
  }
  return ids;
}


/**
 * The real client's behaviour against the scenario (independent of our guard).
 * @param {import('./run-scenario.mjs').CodexScenario} scenario
 * @param {import('./run-scenario.mjs').CodexRun} run
 * @param {ReturnType<typeof readOtlpLines>} otlp
 */
function checkRealClient(scenario, run, otlp) {
  /** @type {string[]} */
  const problems = [];
  const exp = scenario.expectedOutcome;
  const perPrompt = scenario.prompts.map((_, i) => run.requests.filter((r) => r.prompt === i + 1).length);
  if (exp.modelRequests && perPrompt.join(',') !== exp.modelRequests.join(',')) {
    problems.push(`model requests per prompt [${perPrompt.join(',')}] != [${exp.modelRequests.join(',')}]`);
  }
  run.prompts.forEach((p, i) => {
    if (p.forcedKill) problems.push(`prompt ${i + 1}: codex exec did not exit by itself and was killed`);
    if (!p.eventTypes.includes('turn.completed') && !exp.turnEndsWithoutCompletion) problems.push(`prompt ${i + 1}: no turn.completed event (exit ${p.exitCode ?? p.signal})`);
  });
  const results = otlp.logs.filter((l) => l.attributes['event.name'] === 'codex.tool_result');
  const failed = results.filter((l) => l.attributes.success === 'false').length;
  if (exp.failedToolResults !== undefined && failed !== exp.failedToolResults) problems.push(`${failed} codex.tool_result with success=false != ${exp.failedToolResults}`);
  const denied = otlp.logs.filter((l) => l.attributes['event.name'] === 'codex.sandbox_outcome' && l.attributes.outcome === 'denied').length;
  if (exp.sandboxDenied !== undefined && denied !== exp.sandboxDenied) problems.push(`${denied} codex.sandbox_outcome denied != ${exp.sandboxDenied}`);
  if (!otlp.logs.some((l) => String(l.resource['service.name']).startsWith('codex'))) problems.push('no log with a codex service.name');
  for (const l of results) if (!l.attributes['conversation.id']) problems.push('a codex.tool_result without conversation.id');
  return problems;
}

/**
 * The hook's effects on the wire.
 * @param {import('./run-scenario.mjs').CodexScenario} scenario
 * @param {import('./run-scenario.mjs').CodexRun} run
 */
function checkHookEffects(scenario, run) {
  /** @type {string[]} */
  const problems = [];
  const exp = scenario.expectedOutcome;
  const reminders = Math.max(0, ...run.requests.map((r) => r.reminderExact));
  if (exp.remindersToModel !== undefined && reminders !== exp.remindersToModel) problems.push(`${reminders} reminder copies reached the model != ${exp.remindersToModel}`);
  if (exp.reminderFirstAtRound !== undefined) {
    const first = run.requests.find((r) => r.reminderExact > 0);
    if (first?.round !== exp.reminderFirstAtRound) problems.push(`the reminder first reached the model at round ${first?.round} != ${exp.reminderFirstAtRound}`);
  }
  if (run.requests.some((r) => r.stopTextExact > 0) !== Boolean(exp.stopTextToModel)) problems.push(`the stop text ${exp.stopTextToModel ? 'never reached' : 'reached'} the model`);
  // What the user of `codex exec` sees: each call denied after the stop, with the stop text, on stderr.
  if (exp.stopTextToModel && exp.noToolRunAfterRound !== undefined && !run.prompts.some((p) => p.stderr.includes(`blocked by PreToolUse hook: ${STOP_TEXT}`))) {
    problems.push('codex exec did not show the user the stop text with a denied call (stderr)');
  }
  if (exp.stopTextFirstAtRound !== undefined) {
    const first = run.requests.find((r) => r.stopTextExact > 0);
    if (first?.round !== exp.stopTextFirstAtRound) problems.push(`the stop text first reached the model at round ${first?.round} != ${exp.stopTextFirstAtRound}`);
  }
  if (exp.noToolRunAfterRound !== undefined) {
    // A tool that ran leaves a PostToolUse (shell, MCP success) or a completed item; a denied call neither.
    const ran = readFileSync(run.hookFile, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l).input)
      .filter((i) => i?.hook_event_name === 'PostToolUse' && Number(/^call_p\d+r(\d+)_/.exec(String(i.tool_use_id))?.[1]) > exp.noToolRunAfterRound);
    const items = run.transcriptFile ? readFileSync(run.transcriptFile, 'utf8').split('\n').filter((l) => /"item_completed"/.test(l) && /"(CommandExecution|McpToolCall)"/.test(l)).map((l) => String(JSON.parse(l).payload?.item?.id)) : [];
    const late = items.filter((id) => Number(/^call_p\d+r(\d+)_/.exec(id)?.[1]) > exp.noToolRunAfterRound);
    if (ran.length + late.length > 0) problems.push(`${ran.length + late.length} tool call(s) ran after round ${exp.noToolRunAfterRound} (the stop)`);
  }
  const warnings = Math.max(0, ...run.requests.map((r) => r.repetitionWarningExact));
  if (warnings !== (exp.repetitionWarningsToModel ?? 0)) problems.push(`${warnings} identical-call warnings reached the model != ${exp.repetitionWarningsToModel ?? 0}`);
  return problems;
}

/**
 * One scenario against the real CLI: its run, the real client's behaviour, replay of its
 * telemetry, and with the guard hook its decisions and effects.
 * @param {import('./run-scenario.mjs').CodexScenario} scenario
 * @param {import('../agent-runs.mjs').AgentRow} row
 * @param {{ outdir: string, record: string | undefined, log: (line: string) => void }} ctx
 */
async function runOne(scenario, row, { outdir, record, log }) {
  const problems = row.problems;
  const run = await runCodexScenario(scenario, { outdir, log });
  row.seconds = Math.round(run.durationMillis / 100) / 10;
  row.batches = run.requests.filter((r) => r.callIds.length > 0).length;
  const otlp = readOtlpLines(run.otlpFile);
  problems.push(...checkRealClient(scenario, run, otlp));
  const file = record ? join(record, `${scenario.name}.otlp.jsonl`) : join(run.dir, 'otlp.clean.jsonl');
  writeFileSync(file, cleanOtlp(readFileSync(run.otlpFile, 'utf8')));
  // Prompt order: the turn trace ids of codex.user_prompt, as the profile names prompts.
  const promptOrder = userPromptTraceIds(readFileSync(run.otlpFile, 'utf8'));
  if (promptOrder.length !== scenario.prompts.length) problems.push(`${promptOrder.length} codex.user_prompt events != ${scenario.prompts.length} prompts`);
  // The guard reads the cleaned file: what it decides must not need the free text.
  const replay = runReplay(OUR_CLI, file, scenario.mode, REPLAY_TIMEOUT_MILLIS);
  problems.push(...replayProblems(replay, 'codex', false));
  const ours = parseDecisions(replay.stdout, (id) => promptOrder.indexOf(id) + 1, problems, 'replay');
  row.ours = ours.map(compact);
  // `expectedDecisions: null`: the run's telemetry signals vary from run to run (the scenario says why).
  if (scenario.expectedDecisions !== null) problems.push(...compareDecisions('replay vs expected', scenario.expectedDecisions, ours, scenario.mode));
  else row.ours.push('(not compared)');
  // Every scenario runs the guard's hook too (shadow prints nothing): both paths are compared.
  const hookText = readFileSync(run.hookDecisionsFile, 'utf8');
  const hookPrompts = [...new Set(readFileSync(run.hookFile, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).input?.turn_id).filter(Boolean))];
  const hook = parseDecisions(hookText, (id) => hookPrompts.indexOf(id) + 1, problems, 'hook');
  row.hook = hook.map(compact);
  const wanted = scenario.expectedHookDecisions === undefined ? scenario.expectedDecisions : scenario.expectedHookDecisions;
  if (wanted !== null) problems.push(...compareDecisions('hook vs expected', wanted, hook, scenario.mode));
  else row.hook.push('(not compared)');
  problems.push(...checkHookEffects(scenario, run));
  if (record) writeFileSync(join(record, `${scenario.name}.hook-decisions.jsonl`), hookText);
  if (record) {
    writeFileSync(join(record, `${scenario.name}.hooks.jsonl`), cleanHooks(readFileSync(run.hookFile, 'utf8')));
    if (run.transcriptFile) {
      const lines = readFileSync(run.transcriptFile, 'utf8').split('\n').filter((l) => l !== '');
      writeFileSync(join(record, `${scenario.name}.transcript.jsonl`), lines.map((l) => `${cleanTranscriptLine(l)}\n`).join(''));
    }
  }
}

await agentConformanceMain(
  {
    agent: 'codex',
    defaultHooks: 'guard',
    usage: 'conformance/codex/run-all.mjs',
    scenariosDir: join(here, 'scenarios'),
    ourCli: OUR_CLI,
    cliPath: CODEX_CLI,
    version: codexVersion,
    pinned: PINNED_VERSION,
    startBudgetMillis: START_BUDGET_MILLIS,
    load: loadCodexScenario,
    run: runOne,
    missing: missingCodexCli,
    isolatedRunTimeoutMillis: ISOLATED_RUN_TIMEOUT_MILLIS,
  },
  process.argv.slice(2),
);

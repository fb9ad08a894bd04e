// @ts-check
/* global process, console */
/**
 * Runs every conformance scenario against the real qwen-code CLI, checks what the real client did,
 * and compares our replay (`dist/bin/repeated-tool-failure-guard.js replay --compare --format json`) with the in-tree
 * guard's own decisions (ACP) or with the decisions the design requires (headless).
 *
 * Usage: node conformance/run-all.mjs [--out <dir>] [scenario-name ...]
 *
 * Prints a table and `N passed, M failed` on stdout, progress and problems on stderr.
 * Exit code: 0 when every selected scenario passed; 1 when one failed, the qwen-code CLI or our
 * build is missing; 2 on bad usage.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { selectScenarios } from './scenario-files.mjs';
import { formatDecision, inTreeGuardDecisions, logEvents, readOutfile } from './outfile.mjs';
import {
  CLI_ENTRY,
  cliVersion,
  isIsolated,
  loadScenario,
  missingCli,
  reexecIsolated,
  runScenario,
} from './run-scenario.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
/** Our CLI; `RTFG_REPLAY_CLI` points the comparison at another build. */
const OUR_CLI = resolve(process.env.RTFG_REPLAY_CLI ?? join(repoRoot, 'dist/bin/repeated-tool-failure-guard.js'));
/** The only qwen-code version agreement is claimed for. */
const PINNED_VERSION = '0.24.4';
/**
 * No scenario starts after this much time (`CONFORMANCE_BUDGET_MILLIS`, default 600 s). One scenario
 * is bounded by about 60 s (prompt 40 s, exit 10 s, signals 6 s, replay 20 s at worst), so a whole
 * run ends within about 11 minutes even when everything hangs; a normal run takes 60-90 s alone on 2
 * cores, and several times that on a loaded machine.
 */
const START_BUDGET_MILLIS = Number(process.env.CONFORMANCE_BUDGET_MILLIS) > 0 ? Number(process.env.CONFORMANCE_BUDGET_MILLIS) : 600_000;
/** Hard bound of the re-executed (network-isolated) run. */
const ISOLATED_RUN_TIMEOUT_MILLIS = 290_000;
const REPLAY_TIMEOUT_MILLIS = 20_000;
const LOOP_DETECTED = 'LOOP_DETECTED';

/** Keys `replay --format json` prints, per the CLI's contract. */
const JSON_KEYS = new Set([
  'guard',
  'promptId',
  'batch',
  'mode',
  'decision',
  'phaseBefore',
  'phaseAfter',
  'failureCountBucket',
  'batchCountBucket',
  'candidateOrdinal',
  'resetReason',
]);

/** Fields compared decision by decision. */
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
 * What one `replay --compare --format json` run gave.
 * @typedef {object} ReplayResult
 * @property {Decision[]} decisions The JSON lines on stdout.
 * @property {string[]} report The report lines on stderr.
 * @property {string[]} problems Contract breaches (non-JSON stdout, unknown keys, ...).
 * @property {number | null} exitCode
 * @property {string | undefined} agreement `N/M` from the `agreement:` line.
 * @property {number | undefined} batches From the `summary:` line.
 * @property {string[]} notCompared Prompt ids of `not compared:` lines.
 * @property {string[]} violated `VIOLATED` invariant lines.
 * @property {string[]} differs `differs:` lines.
 */

/**
 * Runs our replay on an outfile.
 * @param {string} outfile
 * @returns {ReplayResult}
 */
function runOurReplay(outfile) {
  const r = spawnSync(process.execPath, [OUR_CLI, 'replay', '--compare', '--format', 'json', outfile], {
    encoding: 'utf8',
    timeout: REPLAY_TIMEOUT_MILLIS,
    killSignal: 'SIGKILL',
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
  /** @type {string[]} */
  const problems = [];
  if (r.error) problems.push(`replay did not run to the end: ${r.error.message}`);
  /** @type {Decision[]} */
  const decisions = [];
  for (const line of (r.stdout ?? '').split('\n')) {
    if (!line.trim()) continue;
    /** @type {any} */
    let v;
    try {
      v = JSON.parse(line);
    } catch {
      problems.push(`replay stdout has a non-JSON line: ${line.slice(0, 120)}`);
      continue;
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      problems.push(`replay stdout has a JSON line that is not an object: ${line.slice(0, 120)}`);
      continue;
    }
    // The identical-call breaker's records and unjudged-batch records (no `decision`) are not the
    // failure guard's decisions, which this harness compares with the in-tree guard.
    if (v.guard === 'identical_call') continue;
    if (!('decision' in v)) {
      if (v.judged === false && typeof v.reason === 'string') continue;
      problems.push(`replay stdout has a JSON line that is not a decision: ${line.slice(0, 120)}`);
      continue;
    }
    if (v.guard !== 'repeated_tool_failure') problems.push(`replay decision has guard ${JSON.stringify(v.guard)}`);
    const unknown = Object.keys(v).filter((k) => !JSON_KEYS.has(k));
    if (unknown.length > 0) problems.push(`replay decision has undocumented keys ${unknown.join(', ')}`);
    if ((v.decision === 'reset') !== ('resetReason' in v)) {
      problems.push(`replay decision ${v.decision} ${'resetReason' in v ? 'has' : 'lacks'} resetReason`);
    }
    decisions.push(v);
  }
  const report = (r.stderr ?? '').split('\n').filter((l) => l.trim());
  const agreement = report.map((l) => /^agreement: (\d+\/\d+) batches$/.exec(l.trim())?.[1]).find(Boolean);
  const batches = report.map((l) => /^summary: \d+ prompt\(s\), (\d+) batch\(es\)/.exec(l.trim())?.[1]).find(Boolean);
  if (agreement === undefined && !r.error) problems.push('replay report has no `agreement: N/M batches` line');
  return {
    decisions,
    report,
    problems,
    exitCode: r.status,
    agreement,
    batches: batches === undefined ? undefined : Number(batches),
    notCompared: report.map((l) => /^not compared: (\S+)/.exec(l.trim())?.[1]).filter((x) => x !== undefined),
    violated: report.filter((l) => /^\s*VIOLATED\b/.test(l)),
    differs: report.filter((l) => /^\s*differs:/.test(l)).map((l) => l.trim()),
  };
}

/**
 * Renders a decision with its phases, for messages.
 * @param {Decision | undefined} d
 */
function show(d) {
  if (!d) return '(nothing)';
  const batch = d.batch === undefined ? '' : `batch ${d.batch} `;
  return `${batch}${d.mode ?? '?'} ${formatDecision(/** @type {any} */ (d))} ${d.phaseBefore}->${d.phaseAfter}`;
}

/**
 * Compares two decision lists position by position on {@link COMPARED} plus `extra` keys (a
 * missing `resetReason` equals an absent one).
 * @param {string} label
 * @param {Decision[]} expected
 * @param {Decision[]} actual
 * @param {string[]} [extra]
 * @returns {{ matched: number, total: number, diffs: string[] }}
 */
function compareSequences(label, expected, actual, extra = []) {
  const total = Math.max(expected.length, actual.length);
  /** @type {string[]} */
  const diffs = [];
  let matched = 0;
  for (let i = 0; i < total; i++) {
    const e = expected[i];
    const a = actual[i];
    const bad = e && a ? [...COMPARED, ...extra].filter((k) => k in e || k in a).filter((k) => String(e[k]) !== String(a[k])) : ['all'];
    if (bad.length === 0) matched++;
    else diffs.push(`${label} #${i + 1}: expected ${show(e)}, got ${show(a)}${e && a ? ` (${bad.join(', ')})` : ''}`);
  }
  return { matched, total, diffs };
}

/**
 * The `response_id`s of the outfile's `qwen-code.tool_call` logs, distinct, in time order.
 * @param {any[]} records
 * @returns {string[]}
 */
function toolCallResponseIds(records) {
  /** @type {string[]} */
  const ids = [];
  for (const r of logEvents(records, 'qwen-code.tool_call')) {
    const id = String(r.attributes?.response_id);
    if (ids.at(-1) !== id) ids.push(id);
  }
  return ids;
}

/**
 * Whether a `qwen-code.tool_call` log is a subagent's own call (the fake provider's `sub_…` ids).
 * @param {any} record
 */
function isSubagentCall(record) {
  return String(record?.attributes?.call_id ?? '').startsWith('sub_');
}

/**
 * The `qwen-code.tool_call` logs of subagents' own calls, in time order.
 * @param {any[]} records
 * @returns {any[]}
 */
function subagentToolCalls(records) {
  return logEvents(records, 'qwen-code.tool_call').filter(isSubagentCall);
}

/**
 * Checks the scenario's expectations on the real client's behaviour (independent of our replay).
 * @param {import('./run-scenario.mjs').Scenario} scenario
 * @param {import('./run-scenario.mjs').ScenarioRun} run
 * @param {import('./outfile.mjs').FailureDecision[]} inTree
 * @param {any[]} records
 * @returns {string[]} Problems; empty when all hold.
 */
function checkRealClient(scenario, run, inTree, records) {
  /** @type {string[]} */
  const problems = [];
  if (run.promptResult.kind === 'failure') problems.push(`run failed: ${run.promptResult.message}`);
  if (records.length === 0) problems.push('the telemetry outfile is empty');
  if (scenario.expectedInTree) {
    const got = inTree.map((d) => formatDecision(d)).join(' ');
    const want = scenario.expectedInTree.join(' ');
    if (got !== want) problems.push(`in-tree decisions [${got || '-'}] != expected [${want || '-'}]`);
  }
  if (scenario.expectedInTreeDecisions) {
    problems.push(...compareSequences('in-tree vs expectedInTreeDecisions', scenario.expectedInTreeDecisions, inTree).diffs);
  }
  const pr = /** @type {any} */ (run.promptResult);
  const main = run.providerRequests.filter((r) => r.main);
  const exp = scenario.expectedOutcome;
  if (exp) {
    if (exp.promptErrorCode !== undefined && pr.error?.data?.code !== exp.promptErrorCode) {
      problems.push(`prompt error code ${pr.error?.data?.code ?? '(none)'} != ${exp.promptErrorCode} (${JSON.stringify(pr)})`);
    }
    if (exp.stopReason !== undefined && pr.stopReason !== exp.stopReason) {
      problems.push(`stopReason ${pr.stopReason ?? '(none)'} != ${exp.stopReason} (${JSON.stringify(pr)})`);
    }
    if (exp.exitCode !== undefined && run.exitCode !== exp.exitCode) {
      problems.push(`exit code ${run.exitCode} != ${exp.exitCode}`);
    }
    if (exp.mainRequests !== undefined && main.length !== exp.mainRequests) {
      problems.push(`${main.length} main model requests != ${exp.mainRequests}`);
    }
    const reminders = Math.max(0, ...main.map((r) => r.reminderExact));
    if (exp.remindersInHistory !== undefined && reminders !== exp.remindersInHistory) {
      problems.push(`${reminders} reminders reached the model != ${exp.remindersInHistory}`);
    }
    const subagent = run.providerRequests.filter((r) => r.kind === 'subagent');
    if (exp.subagentRequests !== undefined && subagent.length !== exp.subagentRequests) {
      problems.push(`${subagent.length} subagent model requests != ${exp.subagentRequests}`);
    }
    if (exp.subagentFailedCalls !== undefined) {
      const failed = subagentToolCalls(records).filter((r) => r.attributes?.status === 'error');
      if (failed.length !== exp.subagentFailedCalls) {
        problems.push(`${failed.length} failed subagent tool calls in the telemetry != ${exp.subagentFailedCalls}`);
      }
    }
  }
  // A subagent's own calls run under its own prompt id (`<session>#<agent>-<callId>#<k>`), never the
  // main one, and the in-tree guard never decides on them.
  const mainPrompts = new Set(logEvents(records, 'qwen-code.tool_call').filter((r) => !isSubagentCall(r)).map((r) => r.attributes?.prompt_id));
  for (const r of subagentToolCalls(records)) {
    if (mainPrompts.has(r.attributes?.prompt_id)) {
      problems.push(`subagent call ${r.attributes?.call_id} is logged under a main prompt id ${r.attributes?.prompt_id}`);
    }
  }
  const subPrompts = new Set(subagentToolCalls(records).map((r) => r.attributes?.prompt_id));
  for (const d of inTree) {
    if (subPrompts.has(d.promptId)) problems.push(`the in-tree guard decided on subagent prompt ${d.promptId}`);
  }
  for (const r of main) {
    if (r.reminderCount !== r.reminderExact) {
      problems.push(`main request #${r.seq}: ${r.reminderCount} reminder-like messages but ${r.reminderExact} exact reminder texts`);
    }
  }
  if (scenario.transport === 'acp') {
    const stopped = inTree.some((d) => d.decision === 'stopped');
    const code = pr.error?.data?.code;
    if (stopped && code !== LOOP_DETECTED) problems.push(`in-tree stopped, but the prompt ended with ${JSON.stringify(pr)}, not ${LOOP_DETECTED}`);
    if (!stopped && code === LOOP_DETECTED) problems.push(`the prompt was rejected with ${LOOP_DETECTED} without an in-tree stop`);
    const late = main.filter((r) => run.promptSettledMillis !== undefined && r.timeMillis > run.promptSettledMillis);
    if (late.length > 0) problems.push(`${late.length} main model request(s) after the prompt ended (rounds ${late.map((r) => r.round).join(', ')})`);
    if (scenario.mode === 'shadow' && main.some((r) => r.reminderExact > 0)) problems.push('a reminder reached the model in shadow mode');
  } else {
    if (main.some((r) => r.reminderExact > 0)) problems.push('a reminder reached the model on the headless route');
    // Batches are keyed by the response_id of the tool_call logs: one id per tool-call round.
    const served = main.filter((r) => r.callIds.length > 0).map((r) => r.responseId);
    const logged = toolCallResponseIds(records);
    if (logged.join(' ') !== served.join(' ')) {
      problems.push(`tool_call response_ids [${logged.join(' ')}] != the provider's tool-call responses [${served.join(' ')}]`);
    }
  }
  return problems;
}

/**
 * Checks the warn / enforce effects at the batches our replay places the decisions on: the
 * reminder's full text reaches the provider once per warned candidate, first in the request right
 * after the warned batch; after a stop, no further main request.
 * @param {import('./run-scenario.mjs').ScenarioRun} run
 * @param {Decision[]} ours
 * @returns {string[]}
 */
function checkEffects(run, ours) {
  /** @type {string[]} */
  const problems = [];
  const main = run.providerRequests.filter((r) => r.main);
  const warnedAfter = new Set(ours.filter((d) => d.decision === 'warned').map((d) => Number(d.batch) + 1));
  let previous = 0;
  for (const r of main) {
    const delta = r.reminderExact - previous;
    const wanted = r.round !== undefined && warnedAfter.has(r.round) ? 1 : 0;
    if (delta !== wanted) {
      problems.push(
        `main request round ${r.round}: reminder copies went ${previous} -> ${r.reminderExact}, expected +${wanted}` +
          ` (warned batches: ${[...warnedAfter].map((b) => b - 1).join(', ') || 'none'})`,
      );
    }
    previous = r.reminderExact;
  }
  const warnedRounds = [...warnedAfter].filter((round) => round <= (main.at(-1)?.round ?? 0));
  const reminded = main.filter((r) => r.round !== undefined && warnedAfter.has(r.round)).length;
  if (reminded !== warnedRounds.length) problems.push(`${warnedRounds.length} warned candidate(s) but ${reminded} request(s) carried a new reminder`);
  const stop = ours.find((d) => d.decision === 'stopped');
  if (stop) {
    const after = main.filter((r) => (r.round ?? 0) > Number(stop.batch));
    if (after.length > 0) problems.push(`the provider saw ${after.length} main request(s) after the stop at batch ${stop.batch}`);
    if (main.length !== Number(stop.batch)) problems.push(`${main.length} main requests, expected ${stop.batch} (one per batch up to the stop)`);
  }
  return problems;
}

/**
 * @param {string[]} argv
 */
async function main(argv) {
  /** @type {{ values: { out?: string }, positionals: string[] }} */
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { out: { type: 'string' } }, allowPositionals: true });
  } catch {
    console.error('usage: node conformance/run-all.mjs [--out <dir>] [scenario-name ...]');
    return 2;
  }
  let outdir = parsed.values.out ?? process.env.CONFORMANCE_OUT ?? join(tmpdir(), `rtfg-conformance-${Date.now()}`);
  const only = parsed.positionals;
  if (!existsSync(OUR_CLI)) {
    console.error(`conformance: ${OUR_CLI} does not exist; build it first (npm run build), or run npm run test:conformance`);
    return 1;
  }
  outdir = resolve(outdir);
  mkdirSync(outdir, { recursive: true });
  const dir = join(here, 'scenarios');
  const files = selectScenarios(dir, only);
  if (files === undefined) return 2;
  const version = cliVersion();
  console.error(
    `conformance: ${files.length} scenarios, qwen-code ${version} (${CLI_ENTRY}), network ${isIsolated() ? 'loopback-only namespace' : 'NOT isolated (offline settings only)'}, output ${outdir}`,
  );
  if (version !== PINNED_VERSION) {
    console.error(`conformance: agreement is only claimed for qwen-code ${PINNED_VERSION}; expect differences with ${version}`);
  }

  const started = Date.now();
  /** @type {Record<string, any>[]} */
  const rows = [];
  for (const [n, file] of files.entries()) {
    const scenario = loadScenario(join(dir, file));
    /** @type {Record<string, any>} */
    const row = {
      name: scenario.name,
      transport: scenario.transport,
      mode: scenario.mode,
      batches: undefined,
      agreement: '-',
      inTree: [],
      ours: undefined,
      problems: [],
    };
    rows.push(row);
    if (Date.now() - started > START_BUDGET_MILLIS) {
      row.problems.push('not run: time budget exhausted');
      continue;
    }
    console.error(`[${n + 1}/${files.length}] ${scenario.name} (${scenario.transport}, ${scenario.mode}) ...`);
    /** @type {string[]} */
    const problems = row.problems;
    try {
      const run = await runScenario(scenario, { outdir, log: (l) => console.error(`    ${l}`) });
      const records = readOutfile(run.outfile);
      const inTree = inTreeGuardDecisions(records);
      problems.push(...checkRealClient(scenario, run, inTree, records));
      row.batches = run.providerRequests.filter((r) => r.main && r.callIds.length > 0).length;
      row.seconds = Math.round(run.durationMillis / 100) / 10;
      row.inTree = inTree.map((d) => formatDecision(d));
      row.promptResult = run.promptResult;
      row.exit = { code: run.exitCode, signal: run.exitSignal, forcedKill: run.forcedKill };
      row.agentRequests = run.agentRequests.filter((a) => a.method !== 'craft/drainMidTurnQueue');
      row.sideRequests = run.providerRequests.filter((r) => r.kind === 'side').map((r) => r.reason);
      row.subagentRequests = run.providerRequests.filter((r) => r.kind === 'subagent').length;
      if (run.forcedKill) console.error('    warning: the CLI did not exit by itself and was signalled');

      const replay = runOurReplay(run.outfile);
      row.ours = replay.decisions.map((d) => formatDecision(/** @type {any} */ (d)));
      row.replayReport = replay.report;
      problems.push(...replay.problems);
      problems.push(...replay.violated.map((l) => `replay invariant ${l.trim()}`));
      if (scenario.transport === 'headless') {
        const expected = scenario.expectedDecisions ?? [];
        const cmp = compareSequences('ours vs expectedDecisions', expected, replay.decisions);
        problems.push(...cmp.diffs);
        // The replay numbers batches per prompt; batch N must be the N-th response_id.
        const ids = toolCallResponseIds(records);
        replay.decisions.forEach((d, i) => {
          const key = ids[Number(d.batch) - 1];
          const want = expected[i]?.batch;
          if (want !== undefined && key !== want) problems.push(`ours #${i + 1} is on batch ${d.batch} = response_id ${key}, expected ${want}`);
        });
        const prompts = [...new Set(replay.decisions.map((d) => String(d.promptId)))];
        const skipped = prompts.filter((p) => !replay.notCompared.includes(p));
        if (skipped.length > 0) problems.push(`replay did not say "not compared" for headless prompt(s) ${skipped.join(', ')}`);
        if (replay.agreement !== '0/0') problems.push(`replay compared headless batches: agreement ${replay.agreement}`);
        if (replay.exitCode !== 0) problems.push(`replay --compare exited ${replay.exitCode}`);
        if (replay.batches !== row.batches) problems.push(`replay saw ${replay.batches} batches, the provider served ${row.batches}`);
        row.agreement = `${cmp.matched}/${cmp.total} vs design`;
      } else if (scenario.knownDifference) {
        problems.push(...compareSequences('ours vs expectedReplayDecisions', scenario.expectedReplayDecisions ?? [], replay.decisions, ['batch']).diffs);
        if (!scenario.expectedInTreeDecisions) problems.push('a knownDifference scenario needs expectedInTreeDecisions');
        if (replay.agreement !== scenario.expectedAgreement) {
          problems.push(`replay agreement ${replay.agreement} != the known ${scenario.expectedAgreement}`);
        }
        if (replay.exitCode !== 1) problems.push(`replay --compare exited ${replay.exitCode}, expected 1 (the known difference)`);
        row.agreement = `${replay.agreement} known diff`;
        row.knownDifference = scenario.knownDifference;
      } else {
        const cmp = compareSequences('in-tree vs ours', inTree, replay.decisions, ['promptId']);
        problems.push(...cmp.diffs);
        const [agreeing, total] = (replay.agreement ?? '').split('/');
        if (agreeing !== total) problems.push(`replay --compare: agreement ${replay.agreement}; ${replay.differs.join(' | ')}`);
        if (replay.exitCode !== 0) problems.push(`replay --compare exited ${replay.exitCode}`);
        const wantBatches = scenario.expectedReplayBatches ?? row.batches;
        if (Number(total) !== wantBatches) problems.push(`replay compared ${total} batches, expected ${wantBatches}`);
        problems.push(...checkEffects(run, replay.decisions));
        row.agreement = `${replay.agreement ?? '?'}`;
      }
    } catch (err) {
      problems.push(`harness error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    row.ok = problems.length === 0;
    console.error(`    ${row.ok ? 'ok' : 'FAIL'} in ${row.seconds ?? '?'}s: ${row.inTree.join(' ') || '(no in-tree events)'}`);
    for (const p of problems) console.error(`    - ${p}`);
  }
  const totalSeconds = Math.round((Date.now() - started) / 100) / 10;
  writeFileSync(join(outdir, 'summary.json'), JSON.stringify({ qwenCode: version, cli: CLI_ENTRY, isolated: isIsolated(), totalSeconds, rows }, null, 2));

  const table = [['scenario', 'transport', 'mode', 'batches', 'agreement', 'in-tree decisions', 'ours']];
  for (const r of rows) {
    table.push([
      `${r.ok ? '' : 'FAIL '}${r.name}`,
      r.transport,
      r.mode,
      String(r.batches ?? '-'),
      r.agreement,
      r.transport === 'headless' ? 'n/a (no in-tree guard)' : r.inTree.join(' ') || '-',
      r.ours ? r.ours.join(' ') || '-' : '-',
    ]);
  }
  const widths = table[0]?.map((_, c) => Math.max(...table.map((row) => (row[c] ?? '').length))) ?? [];
  for (const row of table) console.log(row.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(' | ').trimEnd());
  const failed = rows.filter((r) => !r.ok);
  console.log('');
  for (const r of rows.filter((x) => x.ok && x.knownDifference)) console.log(`known difference in ${r.name}: ${r.knownDifference}`);
  for (const r of failed) console.log(`FAIL ${r.name}:\n  - ${r.problems.join('\n  - ')}`);
  console.log(
    `qwen-code ${version}, network ${isIsolated() ? 'loopback-only namespace' : 'not isolated'}, ${totalSeconds}s, details in ${join(outdir, 'summary.json')}`,
  );
  console.log(`${rows.length - failed.length} passed, ${failed.length} failed`);
  return failed.length === 0 ? 0 : 1;
}

const missing = missingCli();
if (missing) {
  console.error(missing);
  process.exit(1);
}
const code = reexecIsolated(ISOLATED_RUN_TIMEOUT_MILLIS);
process.exit(code ?? (await main(process.argv.slice(2))));

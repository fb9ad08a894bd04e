// @ts-check
/* global process, console */
/**
 * Runs every conformance scenario against the real qwen-code CLI, then compares the in-tree
 * guard's own decisions (ACP) or the hand-derived expectations (headless) with ours.
 *
 * Usage: node conformance/run-all.mjs [--out <dir>] [scenario-name ...]
 *
 * Exit code: 0 when every scenario ran, the in-tree guard behaved as the scenario expects, and (if
 * `dist/cli/main.js` exists) our replay agreed everywhere; 1 otherwise; 2 on bad usage.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatDecision, inTreeGuardDecisions, readOutfile } from './outfile.mjs';
import { CLI_ENTRY, cliVersion, isIsolated, loadScenario, reexecIsolated, runScenario } from './run-scenario.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
/** Our CLI; `RTFG_REPLAY_CLI` points the comparison at another build (or a stub). */
const OUR_CLI = resolve(process.env.RTFG_REPLAY_CLI ?? join(repoRoot, 'dist/cli/main.js'));
/** Overall budget; scenarios that would start after it are reported as not run. */
const TOTAL_BUDGET_MILLIS = 300_000;
const REPLAY_TIMEOUT_MILLIS = 60_000;

/** Fields compared decision by decision. */
const COMPARED = /** @type {const} */ ([
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
 * Runs our replay on an outfile. Lines that parse as JSON objects with a `decision` key are
 * decisions; anything else is a summary line.
 * @param {string} outfile
 * @returns {{ decisions: Decision[], summary: string[], exitCode: number | null, error?: string }}
 */
function runOurReplay(outfile) {
  const r = spawnSync(process.execPath, [OUR_CLI, 'replay', '--compare', '--format', 'json', outfile], {
    encoding: 'utf8',
    timeout: REPLAY_TIMEOUT_MILLIS,
    cwd: repoRoot,
  });
  /** @type {Decision[]} */
  const decisions = [];
  /** @type {string[]} */
  const summary = [];
  for (const line of (r.stdout ?? '').split('\n')) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line);
      if (v && typeof v === 'object' && !Array.isArray(v) && 'decision' in v) {
        decisions.push(v);
        continue;
      }
    } catch {
      // a summary line
    }
    summary.push(line);
  }
  return {
    decisions,
    summary,
    exitCode: r.status,
    ...(r.error ? { error: r.error.message } : {}),
  };
}

/**
 * Compares two decision lists pairwise on {@link COMPARED} (a missing `resetReason` equals
 * `undefined`). Returns the number of matching pairs and the differences.
 * @param {Decision[]} expected
 * @param {Decision[]} actual
 * @returns {{ matched: number, total: number, diffs: string[] }}
 */
function compareSequences(expected, actual) {
  const total = Math.max(expected.length, actual.length);
  /** @type {string[]} */
  const diffs = [];
  let matched = 0;
  for (let i = 0; i < total; i++) {
    const e = expected[i];
    const a = actual[i];
    if (!e || !a) {
      diffs.push(`#${i + 1}: ${e ? formatDecision(/** @type {any} */ (e)) : '-'} vs ${a ? formatDecision(/** @type {any} */ (a)) : '-'}`);
      continue;
    }
    const bad = COMPARED.filter((k) => String(e[k] ?? '') !== String(a[k] ?? ''));
    if (bad.length === 0) matched++;
    else diffs.push(`#${i + 1}${a.batch ? ` (${a.batch})` : ''}: ${bad.map((k) => `${k} ${e[k]} vs ${a[k]}`).join(', ')}`);
  }
  return { matched, total, diffs };
}

/**
 * Orders our headless decisions by the expected batch keys: expected batches first, in their
 * order, then any batch we decided that was not expected.
 * @param {Decision[]} expected
 * @param {Decision[]} ours
 * @returns {Decision[]}
 */
function alignByBatch(expected, ours) {
  const byBatch = new Map(ours.map((d) => [String(d.batch), d]));
  /** @type {Decision[]} */
  const aligned = [];
  for (const e of expected) {
    const d = byBatch.get(String(e.batch));
    aligned.push(d ?? { batch: e.batch, decision: '(none)' });
    byBatch.delete(String(e.batch));
  }
  return [...aligned, ...byBatch.values()];
}

/**
 * Checks the scenario's expectations on the real client's behaviour.
 * @param {import('./run-scenario.mjs').Scenario} scenario
 * @param {import('./run-scenario.mjs').ScenarioRun} run
 * @param {import('./outfile.mjs').GuardDecision[]} inTree
 * @returns {string[]} Problems; empty when all hold.
 */
function checkRealClient(scenario, run, inTree) {
  /** @type {string[]} */
  const problems = [];
  if (run.promptResult.kind === 'failure') problems.push(`run failed: ${run.promptResult.message}`);
  if (scenario.expectedInTree) {
    const got = inTree.map((d) => formatDecision(d)).join(' ');
    const want = scenario.expectedInTree.join(' ');
    if (got !== want) problems.push(`in-tree decisions [${got}] != expected [${want}]`);
  }
  const exp = scenario.expectedOutcome;
  if (exp) {
    const pr = /** @type {any} */ (run.promptResult);
    if (exp.promptErrorCode !== undefined && pr.error?.data?.code !== exp.promptErrorCode) {
      problems.push(`prompt error code ${pr.error?.data?.code} != ${exp.promptErrorCode}`);
    }
    if (exp.stopReason !== undefined && pr.stopReason !== exp.stopReason) {
      problems.push(`stopReason ${pr.stopReason} != ${exp.stopReason}`);
    }
    if (exp.exitCode !== undefined && run.exitCode !== exp.exitCode) {
      problems.push(`exit code ${run.exitCode} != ${exp.exitCode}`);
    }
    const main = run.providerRequests.filter((r) => r.main);
    if (exp.mainRequests !== undefined && main.length !== exp.mainRequests) {
      problems.push(`${main.length} main model requests != ${exp.mainRequests}`);
    }
    const reminders = Math.max(0, ...main.map((r) => r.reminderCount));
    if (exp.remindersInHistory !== undefined && reminders !== exp.remindersInHistory) {
      problems.push(`${reminders} reminders reached the model != ${exp.remindersInHistory}`);
    }
  }
  return problems;
}

/**
 * @param {string[]} argv
 */
async function main(argv) {
  let outdir = process.env.CONFORMANCE_OUT ?? join(tmpdir(), `rtfg-conformance-${Date.now()}`);
  /** @type {string[]} */
  const only = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out') outdir = argv[++i] ?? outdir;
    else if (argv[i]?.startsWith('-')) {
      console.error('usage: node conformance/run-all.mjs [--out <dir>] [scenario-name ...]');
      return 2;
    } else only.push(/** @type {string} */ (argv[i]));
  }
  outdir = resolve(outdir);
  mkdirSync(outdir, { recursive: true });
  const dir = join(here, 'scenarios');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .filter((f) => only.length === 0 || only.includes(f.replace(/\.json$/, '')));
  if (files.length === 0) {
    console.error('no scenarios selected');
    return 2;
  }
  const haveOurs = existsSync(OUR_CLI);
  console.error(
    `conformance: ${files.length} scenarios, qwen-code ${cliVersion()} (${CLI_ENTRY}), network ${isIsolated() ? 'loopback-only namespace' : 'NOT isolated (offline env only)'}, output ${outdir}`,
  );

  const started = Date.now();
  /** @type {Record<string, any>[]} */
  const rows = [];
  for (const [n, file] of files.entries()) {
    const scenario = loadScenario(join(dir, file));
    if (Date.now() - started > TOTAL_BUDGET_MILLIS) {
      rows.push({ name: scenario.name, ok: false, problems: ['not run: total time budget exhausted'] });
      continue;
    }
    console.error(`[${n + 1}/${files.length}] ${scenario.name} (${scenario.transport}, ${scenario.mode}) ...`);
    const run = await runScenario(scenario, { outdir, log: (l) => console.error(`    ${l}`) });
    const records = readOutfile(run.outfile);
    const inTree = inTreeGuardDecisions(records);
    const problems = checkRealClient(scenario, run, inTree);
    const batches = run.providerRequests.filter((r) => r.main && r.callIds.length > 0).length;
    /** @type {Record<string, any>} */
    const row = {
      name: scenario.name,
      transport: scenario.transport,
      batches,
      seconds: Math.round(run.durationMillis / 100) / 10,
      inTree: inTree.map((d) => formatDecision(d)),
      ours: undefined,
      agreement: 'skipped',
      expected: (scenario.expectedDecisions ?? []).map((d) => formatDecision(/** @type {any} */ (d))),
      problems,
    };
    if (run.forcedKill) console.error('    warning: the CLI did not exit by itself and was signalled');
    if (haveOurs) {
      const replay = runOurReplay(run.outfile);
      row.ours = replay.decisions.map((d) => formatDecision(/** @type {any} */ (d)));
      if (scenario.transport === 'headless') {
        const expected = scenario.expectedDecisions ?? [];
        const cmp = compareSequences(expected, alignByBatch(expected, replay.decisions));
        row.agreement = `${cmp.matched}/${cmp.total} vs expected`;
        if (cmp.matched !== cmp.total) problems.push(...cmp.diffs.map((d) => `ours vs expected ${d}`));
      } else {
        const cmp = compareSequences(inTree, replay.decisions);
        row.agreement = `${cmp.matched}/${cmp.total}, exit ${replay.exitCode}`;
        if (cmp.matched !== cmp.total) problems.push(...cmp.diffs.map((d) => `in-tree vs ours ${d}`));
        if (replay.exitCode !== 0) problems.push(`replay --compare exited ${replay.exitCode}: ${replay.summary.slice(-2).join(' | ')}`);
      }
      if (replay.error) problems.push(`replay: ${replay.error}`);
    }
    row.ok = problems.length === 0;
    row.promptResult = run.promptResult;
    row.exit = { code: run.exitCode, signal: run.exitSignal, forcedKill: run.forcedKill };
    row.agentRequests = run.agentRequests.filter((a) => a.method !== 'craft/drainMidTurnQueue');
    row.sideRequests = run.providerRequests.filter((r) => !r.main).map((r) => r.reason);
    rows.push(row);
    console.error(`    ${row.ok ? 'ok' : 'FAIL'} in ${row.seconds}s: ${row.inTree.join(' ') || '(no in-tree events)'}`);
    for (const p of problems) console.error(`    - ${p}`);
  }
  const totalSeconds = Math.round((Date.now() - started) / 1000);
  writeFileSync(join(outdir, 'summary.json'), JSON.stringify({ totalSeconds, rows }, null, 2));

  const table = [['scenario', 'batches', 'agreement', 'in-tree decisions', 'ours']];
  for (const r of rows) {
    table.push([
      `${r.ok ? '' : '✗ '}${r.name}`,
      String(r.batches ?? '-'),
      r.agreement ?? '-',
      r.transport === 'headless' ? `(none; expected ${(r.expected ?? []).join(' ') || '-'})` : (r.inTree ?? []).join(' ') || '-',
      r.ours ? r.ours.join(' ') || '-' : '-',
    ]);
  }
  const widths = table[0]?.map((_, c) => Math.max(...table.map((row) => (row[c] ?? '').length))) ?? [];
  for (const row of table) console.log(row.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(' | ').trimEnd());
  if (!haveOurs) console.log(`\ncomparison skipped: ${OUR_CLI} does not exist (build it with npm run build)`);
  const failed = rows.filter((r) => !r.ok);
  console.log(`\n${rows.length - failed.length}/${rows.length} scenarios ok in ${totalSeconds}s; details in ${outdir}/summary.json`);
  for (const r of failed) console.log(`FAIL ${r.name}: ${r.problems.join('; ')}`);
  return failed.length === 0 ? 0 : 1;
}

const code = reexecIsolated(TOTAL_BUDGET_MILLIS + 180_000);
process.exit(code ?? (await main(process.argv.slice(2))));

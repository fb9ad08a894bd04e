// @ts-check
/* global process, console */
/**
 * The part every real-CLI conformance runner with hooks shares (gemini-cli, Codex): the command
 * line (`[--out <dir>] [--record <dir>] [scenario-name ...]`), the scenario loop with its time
 * budget, one row per scenario (`name`, `mode`, `hooks`, `batches`, `ours`, `hook`, `problems`,
 * `ok`, `seconds`), the checks of a `replay` run, `summary.json`, and the result table. The agent's
 * runner brings what is its own: how to run a scenario against its CLI and what to check.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { tableLines } from './decisions.mjs';
import { isIsolated, reexecIsolated } from './run-scenario.mjs';
import { selectScenarios } from './scenario-files.mjs';

/**
 * @typedef {object} AgentRow
 * @property {string} name
 * @property {string} mode
 * @property {string} hooks
 * @property {number} [batches]
 * @property {number} [seconds]
 * @property {string[]} ours replay's decisions, compact
 * @property {string[]} hook the hook's decisions, compact
 * @property {string[]} problems
 * @property {boolean} [ok]
 */

/**
 * @typedef {object} AgentRunner
 * @property {string} agent the agent's name in messages (`gemini-cli`, `codex`)
 * @property {string} usage the runner's path, for the usage line
 * @property {string} scenariosDir
 * @property {string} ourCli our built CLI
 * @property {string} cliPath the agent's CLI, for the header
 * @property {() => string} version the installed agent version
 * @property {string} pinned the version the expected values were observed with
 * @property {() => string | undefined} missing why the agent's CLI cannot run (not installed), or `undefined`
 * @property {number} isolatedRunTimeoutMillis the whole run's bound when re-executed in a loopback-only namespace
 * @property {number} startBudgetMillis no scenario starts after this long
 * @property {string} [defaultHooks] the `hooks` column of a scenario that names none @defaultValue `none`
 * @property {(file: string) => { name: string, mode: string, hooks?: string }} load
 * @property {(scenario: any, row: AgentRow, ctx: { outdir: string, record: string | undefined, log: (line: string) => void }) => Promise<void>} run
 *   runs one scenario and fills `row` (its `problems` above all); may throw (a harness error)
 */

/**
 * The problems of one `replay --format json` run of a capture.
 *
 * @param {{ stdout: string, stderr: string, status: number | null, error?: Error }} replay
 * @param {string} profile the profile auto-detection must report
 * @param {boolean} noBatchAllowed exit 3 (no tool batch) is expected
 * @returns {string[]}
 */
export function replayProblems(replay, profile, noBatchAllowed) {
  /** @type {string[]} */
  const problems = [];
  if (replay.error) problems.push(`replay did not run to the end: ${replay.error.message}`);
  if (replay.status !== 0 && !(replay.status === 3 && noBatchAllowed)) problems.push(`replay exited ${replay.status}: ${replay.stderr.split('\n').slice(-5).join(' | ')}`);
  if (/VIOLATED/.test(replay.stderr)) problems.push(`replay invariant VIOLATED: ${replay.stderr.split('\n').filter((l) => /VIOLATED/.test(l)).join(' | ')}`);
  if (!new RegExp(`profile: ${profile}\\b`).test(replay.stderr)) problems.push(`replay did not report \`profile: ${profile}\` (auto-detection)`);
  return problems;
}

/**
 * Runs the selected scenarios and prints the table; resolves to the exit code: 0 every scenario
 * passed, 1 one failed or our build is missing, 2 bad usage.
 *
 * @param {AgentRunner} o
 * @param {string[]} argv
 * @returns {Promise<number>}
 */
export async function runAgentScenarios(o, argv) {
  /** @type {{ values: { out?: string, record?: string }, positionals: string[] }} */
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { out: { type: 'string' }, record: { type: 'string' } }, allowPositionals: true });
  } catch {
    console.error(`usage: node ${o.usage} [--out <dir>] [--record <dir>] [scenario-name ...]`);
    return 2;
  }
  if (!existsSync(o.ourCli)) {
    console.error(`conformance: ${o.ourCli} does not exist; build it first (npm run build)`);
    return 1;
  }
  const outdir = resolve(parsed.values.out ?? process.env.CONFORMANCE_OUT ?? join(tmpdir(), `rtfg-conformance-${o.agent}-${Date.now()}`));
  mkdirSync(outdir, { recursive: true });
  const record = parsed.values.record === undefined ? undefined : resolve(parsed.values.record);
  if (record) mkdirSync(record, { recursive: true });
  const files = selectScenarios(o.scenariosDir, parsed.positionals);
  if (files === undefined) return 2;
  const version = o.version();
  const network = isIsolated() ? 'loopback-only namespace' : 'NOT isolated (offline settings only)';
  console.error(`conformance: ${files.length} ${o.agent} scenarios, ${o.agent} ${version} (${o.cliPath}), network ${network}, output ${outdir}`);
  if (version !== o.pinned) console.error(`conformance: expected values were observed with ${o.pinned} only; this is ${version}`);
  const started = Date.now();
  /** @type {AgentRow[]} */
  const rows = [];
  for (const [n, file] of files.entries()) {
    const scenario = o.load(join(o.scenariosDir, file));
    /** @type {AgentRow} */
    const row = { name: scenario.name, mode: scenario.mode, hooks: scenario.hooks ?? o.defaultHooks ?? 'none', ours: [], hook: [], problems: [] };
    rows.push(row);
    if (Date.now() - started > o.startBudgetMillis) {
      row.problems.push('not run: time budget exhausted');
      continue;
    }
    console.error(`[${n + 1}/${files.length}] ${scenario.name} (${scenario.mode}, hooks ${row.hooks}) ...`);
    try {
      await o.run(scenario, row, { outdir, record, log: (l) => console.error(`    ${l}`) });
    } catch (err) {
      row.problems.push(`harness error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    row.ok = row.problems.length === 0;
    console.error(`    ${row.ok ? 'ok' : 'FAIL'} in ${row.seconds ?? '?'}s: ${row.ours.join(' ') || '(no decisions)'}`);
    for (const p of row.problems) console.error(`    - ${p}`);
  }
  const totalSeconds = Math.round((Date.now() - started) / 100) / 10;
  writeFileSync(join(outdir, 'summary.json'), JSON.stringify({ agent: o.agent, version, cli: o.cliPath, isolated: isIsolated(), totalSeconds, rows }, null, 2));
  const table = [['scenario', 'mode', 'hooks', 'batches', 'replay decisions (= expected)', 'hook decisions']];
  for (const r of rows) {
    table.push([`${r.ok ? '' : 'FAIL '}${r.name}`, r.mode, r.hooks, String(r.batches ?? '-'), r.ours.join(' ') || '-', r.hooks === 'guard' ? r.hook.join(' ') || '-' : 'n/a']);
  }
  console.log(o.agent);
  for (const line of tableLines(table)) console.log(line);
  const failed = rows.filter((r) => !r.ok);
  console.log('');
  for (const r of failed) console.log(`FAIL ${r.name}:\n  - ${r.problems.join('\n  - ')}`);
  console.log(`${o.agent} ${version}, network ${isIsolated() ? 'loopback-only namespace' : 'not isolated'}, ${totalSeconds}s, details in ${join(outdir, 'summary.json')}`);
  console.log(`${o.agent}: ${rows.length - failed.length} passed, ${failed.length} failed`);
  return failed.length === 0 ? 0 : 1;
}

/**
 * The runner's whole process: exit 1 when the agent's CLI is missing; else re-execute in a
 * loopback-only network namespace where one can be made, and run the scenarios there (or here).
 * Never returns.
 *
 * @param {AgentRunner} o
 * @param {string[]} argv
 */
export async function agentConformanceMain(o, argv) {
  const missing = o.missing();
  if (missing) {
    console.error(missing);
    process.exit(1);
  }
  const code = reexecIsolated(o.isolatedRunTimeoutMillis);
  process.exit(code ?? (await runAgentScenarios(o, argv)));
}

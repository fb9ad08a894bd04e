// @ts-check
/* global process, console */
/**
 * Runs one conformance scenario end to end against the real qwen-code CLI, offline:
 * a throwaway HOME and working directory, the scripted fake provider on 127.0.0.1, the CLI over ACP
 * (stdio) or headless (`-p`), then a clean shutdown so the telemetry outfile is complete.
 *
 * Usage: node conformance/run-scenario.mjs <scenario.json> <outdir>
 *
 * The CLI is `node_modules/@qwen-code/qwen-code/cli-entry.js` unless `QWEN_CODE_CLI` names another
 * entry file. On Linux the run re-executes itself in a loopback-only network namespace
 * (`unshare -rn`) when that is permitted; otherwise it relies on the offline settings alone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AcpClient, runAcpPrompt } from './acp-client.mjs';
import { startFakeProvider } from './fake-provider.mjs';
import { endChild, signalGroup, waitForQuietFile } from './child-process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');

/** Entry of the CLI under test. */
export const CLI_ENTRY = resolve(
  process.env.QWEN_CODE_CLI ?? join(repoRoot, 'node_modules/@qwen-code/qwen-code/cli-entry.js'),
);

/**
 * A scenario file (see conformance/README.md).
 * @typedef {object} Scenario
 * @property {string} name
 * @property {string} [description]
 * @property {'acp' | 'headless'} transport
 * @property {'off' | 'shadow' | 'warn' | 'enforce'} mode Value of
 *   `QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD`.
 * @property {'allow' | 'reject'} permission `allow` runs with `--yolo`; `reject` runs with approval
 *   mode `default` and rejects every permission request.
 * @property {'ok' | 'missing'} drain How the ACP client answers `craft/drainMidTurnQueue`.
 * @property {string} [prompt] User prompt.
 * @property {{ git?: boolean, files?: Record<string, string> }} [cwd] Working-directory setup.
 * @property {import('./fake-provider.mjs').ToolCallSpec[][]} rounds Tool calls per model round.
 * @property {Record<string, import('./fake-provider.mjs').ToolCallSpec[][]>} [subagentScripts] Tool
 *   calls per round of a subagent, by script name. A round's `agent` call selects one with the
 *   marker `[rtfg-subagent script=<name> tag=<tag>]` in its `prompt` (see `fake-provider.mjs`).
 * @property {string[]} [expectedInTree] The in-tree guard decisions expected, in order, as
 *   rendered by `formatDecision` (`tracked(1-2,1)#1`, `reset:success(5-7,3+)#1`).
 * @property {{ mainRequests?: number, remindersInHistory?: number, stopReason?: string, promptErrorCode?: string, exitCode?: number, subagentRequests?: number, subagentFailedCalls?: number }} [expectedOutcome]
 *   What the real client must do besides the guard events: main model requests served, most
 *   reminder copies seen in one request, the ACP stop reason or the prompt error's `data.code`,
 *   the headless exit code, the subagents' model requests, and the subagents' own calls logged as
 *   `qwen-code.tool_call` with `status=error` (ids `sub_…`).
 * @property {ExpectedDecision[]} [expectedDecisions] Headless only: what the design's reducer must
 *   decide per batch (`batch` is the `response_id` of the batch's `qwen-code.tool_call` logs).
 * @property {number} [expectedReplayBatches] ACP: the batches our replay must see, when it differs
 *   from the tool-call rounds the provider served (a batch the Session never gives to its guard).
 * @property {string} [knownDifference] ACP: why our replay cannot agree with the in-tree guard
 *   here. Then the run passes only if both sides decide exactly `expectedInTreeDecisions` and
 *   `expectedReplayDecisions`, `replay --compare` reports `agreement: <expectedAgreement>` and
 *   exits 1.
 * @property {Partial<ExpectedDecision>[]} [expectedInTreeDecisions] Full in-tree decisions (no
 *   `batch`, no `promptId`).
 * @property {Partial<ExpectedDecision>[]} [expectedReplayDecisions] Full replay decisions (`batch`
 *   is the replay's batch ordinal).
 * @property {string} [expectedAgreement] `N/M`, as in `replay --compare`'s `agreement:` line.
 */

/**
 * @typedef {object} ExpectedDecision
 * @property {string} batch The batch key (headless: the `response_id`, e.g. `chatcmpl-1`).
 * @property {string} decision
 * @property {string} phaseBefore
 * @property {string} phaseAfter
 * @property {string} failureCountBucket
 * @property {string} batchCountBucket
 * @property {number} candidateOrdinal
 * @property {string} [resetReason]
 */

/**
 * What {@link runScenario} returns.
 * @typedef {object} ScenarioRun
 * @property {string} outfile The telemetry outfile (copied into `outdir`).
 * @property {import('./fake-provider.mjs').RecordedRequest[]} providerRequests
 * @property {import('./acp-client.mjs').PromptResult | { kind: 'exit', exitCode: number | null, signal: string | null } | { kind: 'failure', message: string }} promptResult
 * @property {import('./acp-client.mjs').AgentRequest[]} agentRequests ACP only.
 * @property {number | null} exitCode
 * @property {string | null} exitSignal
 * @property {boolean} forcedKill Whether the CLI had to be signalled.
 * @property {number} durationMillis
 * @property {number | undefined} promptSettledMillis ACP: `Date.now()` when `session/prompt`
 *   answered (or failed).
 */

/** Bounds, in milliseconds. */
const PROMPT_TIMEOUT_MILLIS = 40_000;
const GRACEFUL_EXIT_MILLIS = 10_000;

/**
 * Why the CLI under test cannot be run, or `undefined` when its entry file exists.
 * @returns {string | undefined}
 */
export function missingCli() {
  if (existsSync(CLI_ENTRY)) return undefined;
  return process.env.QWEN_CODE_CLI
    ? `conformance: QWEN_CODE_CLI=${process.env.QWEN_CODE_CLI} does not exist (it must name a qwen-code cli-entry.js)`
    : `conformance: the qwen-code CLI is missing (${CLI_ENTRY}). It comes from the devDependency ` +
        '"@qwen-code/qwen-code" (0.24.4): run `npm ci` (or `npm install`) first, or set ' +
        'QWEN_CODE_CLI=/path/to/node_modules/@qwen-code/qwen-code/cli-entry.js';
}

/**
 * Reads and minimally validates a scenario file.
 * @param {string} file
 * @returns {Scenario}
 */
export function loadScenario(file) {
  /** @type {Scenario} */
  const s = JSON.parse(readFileSync(file, 'utf8'));
  if (!s.name || !['acp', 'headless'].includes(s.transport) || !Array.isArray(s.rounds)) {
    throw new TypeError(`${file}: needs name, transport (acp|headless) and rounds[]`);
  }
  return s;
}

/** Process group ids of CLIs still running, ended if this process is interrupted. */
const live = new Set();
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    for (const pid of live) signalGroup(pid, 'SIGKILL');
    process.exit(130);
  });
}

/**
 * Runs one scenario.
 * @param {Scenario} scenario
 * @param {{ outdir: string, log?: (line: string) => void }} options
 * @returns {Promise<ScenarioRun>}
 */
export async function runScenario(scenario, { outdir, log = () => {} }) {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), `rtfg-${scenario.name}-`));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const telemetryDir = join(root, 'telemetry');
  const outfileTmp = join(telemetryDir, 'outfile.json');
  mkdirSync(join(home, '.qwen'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  mkdirSync(telemetryDir, { recursive: true });
  mkdirSync(outdir, { recursive: true });

  for (const [rel, content] of Object.entries(scenario.cwd?.files ?? {})) {
    const file = join(cwd, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  const gitEnv = { ...process.env, GIT_CEILING_DIRECTORIES: root, HOME: home };
  if (scenario.cwd?.git) {
    spawnSync('git', ['init', '-q'], { cwd, env: gitEnv, timeout: 10_000 });
  }

  const yolo = scenario.permission !== 'reject';
  writeFileSync(
    join(home, '.qwen', 'settings.json'),
    JSON.stringify(
      {
        general: { enableAutoUpdate: false },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: true, outfile: outfileTmp, logPrompts: false },
        tools: { approvalMode: yolo ? 'yolo' : 'default' },
      },
      null,
      2,
    ),
  );

  const provider = await startFakeProvider({
    rounds: scenario.rounds,
    vars: { cwd },
    finalText: 'I could not complete the task.',
    subagentScripts: scenario.subagentScripts,
  });
  /** @type {NodeJS.ProcessEnv} */
  const env = {
    ...process.env,
    HOME: home,
    USERPROFILE: home,
    GIT_CEILING_DIRECTORIES: root,
    OPENAI_API_KEY: 'test',
    OPENAI_BASE_URL: provider.baseUrl,
    OPENAI_MODEL: 'fake-model',
    QWEN_USAGE_STATISTICS_ENABLED: 'false',
    QWEN_CODE_SKIP_UPDATE_CHECK_ONCE: 'true',
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
    QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD: scenario.mode,
    NO_COLOR: '1',
    // No proxy may redirect the 127.0.0.1 provider.
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
  for (const key of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy']) {
    delete env[key];
  }
  for (const key of Object.keys(env)) {
    // Telemetry settings from the outer environment would override settings.json.
    if (/^(QWEN_TELEMETRY_|OTEL_)/.test(key)) delete env[key];
  }

  const prompt = scenario.prompt ?? 'Read the files I need and fix the problem.';
  const args =
    scenario.transport === 'acp'
      ? ['--acp', ...(yolo ? ['--yolo'] : [])]
      : ['-p', prompt, ...(yolo ? ['--yolo'] : [])];
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    cwd,
    env,
    detached: true,
    stdio: [scenario.transport === 'acp' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  if (child.pid !== undefined) live.add(child.pid);
  child.once('exit', () => live.delete(child.pid));
  log(`${scenario.name}: pid ${child.pid}, provider ${provider.baseUrl}`);
  /** @type {string[]} */
  const stderr = [];
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d) => stderr.push(d));
  /** @type {string[]} */
  const trace = [];

  /** @type {ScenarioRun['promptResult']} */
  let promptResult;
  /** @type {import('./acp-client.mjs').AgentRequest[]} */
  let agentRequests = [];
  let forcedKill = false;
  /** @type {number | undefined} */
  let promptSettledMillis;
  try {
    if (scenario.transport === 'acp') {
      if (!child.stdin || !child.stdout) throw new Error('no stdio pipes');
      const client = new AcpClient(
        { stdin: child.stdin, stdout: child.stdout },
        { permission: scenario.permission, drain: scenario.drain, trace: (l) => trace.push(l) },
      );
      agentRequests = client.agentRequests;
      try {
        promptResult = await runAcpPrompt(client, { cwd, text: prompt, timeoutMillis: PROMPT_TIMEOUT_MILLIS });
      } catch (err) {
        promptResult = { kind: 'failure', message: err instanceof Error ? err.message : String(err) };
      }
      promptSettledMillis = Date.now();
      // Closing stdin lets `qwen --acp` shut down normally, which flushes the span batch.
      client.end();
      forcedKill = await endChild(child, GRACEFUL_EXIT_MILLIS);
    } else {
      /** @type {string[]} */
      const stdout = [];
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (d) => stdout.push(d));
      forcedKill = await endChild(child, PROMPT_TIMEOUT_MILLIS);
      trace.push(...stdout);
      promptResult = forcedKill
        ? { kind: 'failure', message: `headless run did not exit within ${PROMPT_TIMEOUT_MILLIS} ms` }
        : { kind: 'exit', exitCode: child.exitCode, signal: child.signalCode };
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) forcedKill = (await endChild(child, 0)) || forcedKill;
    await provider.close();
  }
  // The CLI's exporters append synchronously on shutdown; a short quiet period covers a killed run.
  await waitForQuietFile(outfileTmp, 300, 3_000);

  const outfile = join(outdir, `${scenario.name}.outfile.json`);
  if (existsSync(outfileTmp)) copyFileSync(outfileTmp, outfile);
  else writeFileSync(outfile, '');
  writeFileSync(join(outdir, `${scenario.name}.provider-requests.json`), JSON.stringify(provider.requests, null, 2));
  writeFileSync(join(outdir, `${scenario.name}.stderr.log`), stderr.join(''));
  writeFileSync(join(outdir, `${scenario.name}.stdio.log`), trace.join('\n'));
  if (!process.env.CONFORMANCE_KEEP_TMP) rmSync(root, { recursive: true, force: true });

  return {
    outfile,
    providerRequests: provider.requests,
    promptResult,
    agentRequests,
    exitCode: child.exitCode,
    exitSignal: child.signalCode,
    forcedKill,
    durationMillis: Date.now() - started,
    promptSettledMillis,
  };
}

/** Set in the re-executed child so it does not try again. */
const NETNS_MARKER = 'RTFG_CONFORMANCE_NETNS';

/**
 * Re-executes the current script inside a loopback-only network namespace, if possible.
 * Returns `undefined` when the caller should just carry on in the current namespace (already
 * isolated, not Linux, `CONFORMANCE_NO_NETNS` set, or `unshare` is not permitted); otherwise the
 * child's exit code (1 if it had to be ended after `timeoutMillis`).
 * @param {number} timeoutMillis
 * @returns {number | undefined}
 */
export function reexecIsolated(timeoutMillis) {
  if (process.env[NETNS_MARKER] || process.platform !== 'linux' || process.env.CONFORMANCE_NO_NETNS) {
    return undefined;
  }
  const probe = spawnSync('unshare', ['-rn', 'sh', '-c', 'ip link set lo up'], { timeout: 10_000, encoding: 'utf8' });
  if (probe.status !== 0) {
    const why = probe.error
      ? probe.error.message
      : (probe.stderr ?? '').trim().split('\n').at(-1) || `exit ${probe.status ?? probe.signal}`;
    console.error(
      `conformance: a loopback-only network namespace (unshare -rn + ip link set lo up) is not available (${why}); ` +
        'falling back to the offline settings alone (set CONFORMANCE_NO_NETNS=1 to skip this probe)',
    );
    return undefined;
  }
  const child = spawnSync(
    'unshare',
    ['-rn', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, [NETNS_MARKER]: '1' }, timeout: timeoutMillis, killSignal: 'SIGTERM' },
  );
  if (child.error) console.error(`conformance: isolated run ended: ${child.error.message}`);
  return child.status ?? 1;
}

/**
 * The version of the CLI under test, from the `package.json` next to its entry.
 * @returns {string}
 */
export function cliVersion() {
  try {
    return String(JSON.parse(readFileSync(join(dirname(CLI_ENTRY), 'package.json'), 'utf8')).version);
  } catch {
    return 'unknown';
  }
}

/** Whether the network is loopback-only (for reports). */
export function isIsolated() {
  return Boolean(process.env[NETNS_MARKER]);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, outdir] = process.argv.slice(2);
  if (!file || !outdir) {
    console.error('usage: node conformance/run-scenario.mjs <scenario.json> <outdir>');
    process.exit(2);
  }
  const missing = missingCli();
  if (missing) {
    console.error(missing);
    process.exit(1);
  }
  const code = reexecIsolated(120_000);
  if (code !== undefined) process.exit(code);
  const scenario = loadScenario(file);
  const run = await runScenario(scenario, {
    outdir: resolve(outdir),
    log: (l) => console.error(`[${basename(file)}] ${l}`),
  });
  console.log(JSON.stringify({ ...run, providerRequests: run.providerRequests.length }, null, 2));
}

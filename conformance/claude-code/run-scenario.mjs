// @ts-check
/* global process, console, setTimeout, clearTimeout */
/**
 * Runs one Claude Code conformance scenario end to end against the real CLI, offline: a throwaway
 * HOME and working directory, the scripted fake Anthropic Messages API and an OTLP/HTTP JSON sink,
 * both on 127.0.0.1, then `claude -p … --output-format stream-json --verbose
 * --dangerously-skip-permissions` once per prompt (prompt 2 and later `--resume` the session).
 *
 * Usage: node conformance/claude-code/run-scenario.mjs <scenario.json> <outdir>
 *
 * The CLI is `conformance/claude-code/node_modules/.bin/claude` (installed by
 * `npm run conformance:install`) unless `CLAUDE_CODE_CLI` names another executable.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reexecIsolated } from '../run-scenario.mjs';
import { startFakeAnthropic } from './fake-anthropic.mjs';
import { startOtlpSink } from './otlp-sink.mjs';
import { endChild, signalGroup, waitForQuietFile } from '../child-process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');

/** The pinned version; agreement and every expected value were observed with it only. */
export const PINNED_VERSION = '2.1.328';

/** The CLI under test. */
export const CLAUDE_CLI = resolve(process.env.CLAUDE_CODE_CLI ?? join(here, 'node_modules/.bin/claude'));

/** Our CLI (the hook command); `RTFG_REPLAY_CLI` points at another build. */
export const OUR_CLI = resolve(process.env.RTFG_REPLAY_CLI ?? join(repoRoot, 'dist/bin/repeated-tool-failure-guard.js'));

/**
 * A scenario file (see conformance/README.md, "Claude Code").
 * @typedef {object} ClaudeScenario
 * @property {string} name
 * @property {string} [description]
 * @property {'shadow' | 'warn' | 'enforce'} mode The guard mode: the replay's `--mode` and, with
 *   `hooks: "guard"`, `QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD` for the hook command.
 * @property {'none' | 'guard'} [hooks] `guard` registers `repeated-tool-failure-guard
 *   claude-code-hook` for PreToolUse, PostToolUse, PostToolUseFailure and PostToolBatch. A logging hook that
 *   records every hook input is always registered.
 * @property {{ git?: boolean, files?: Record<string, string> }} [cwd]
 * @property {Record<string, unknown>} [settings] Extra user settings merged into `~/.claude/settings.json`
 *   (e.g. `permissions.deny` rules).
 * @property {string[]} [mcpServers] Names of stdio MCP servers to register (`--mcp-config`), each
 *   `mcp-failing-server.mjs <name>`: its tools are `mcp__<name>__lookup_ticket`, `…__fetch_page`
 *   (both answer `isError: true`) and `…__list_items` (succeeds).
 * @property {string} [permissionMode] Run with `--permission-mode <mode>` instead of
 *   `--dangerously-skip-permissions` (so permission rules and prompts apply).
 * @property {import('./fake-anthropic.mjs').PromptScript[]} prompts
 * @property {Record<string, import('../fake-provider.mjs').ToolCallSpec[][]>} [subagentScripts]
 * @property {ExpectedDecision[]} expectedDecisions What the design's reducer must decide, in
 *   order; decisions `none` are not listed.
 * @property {ExpectedDecision[]} [expectedDecisionsLogsOnly] What the design's reducer must decide from
 *   the same telemetry without its spans, when that differs (what only the beta spans carry, such
 *   as an MCP call's server-qualified name); default `expectedDecisions`.
 * @property {Expectations} expectedOutcome
 */

/**
 * @typedef {object} ExpectedDecision
 * @property {number} [prompt] 1-based prompt of the scenario; default 1.
 * @property {number} batch Batch ordinal within the prompt (= the scenario round; the fake server's
 *   `request-id` of that round is `req_p<prompt>r<batch>`).
 * @property {string} decision
 * @property {string} phaseBefore
 * @property {string} phaseAfter
 * @property {string} failureCountBucket
 * @property {string} batchCountBucket
 * @property {number} candidateOrdinal
 * @property {string} [resetReason]
 */

/**
 * What the real client must do besides the guard decisions.
 * @typedef {object} Expectations
 * @property {number[]} mainRequests Main model requests served, per prompt.
 * @property {string[]} [terminalReasons] The stream-json `result.terminal_reason` per prompt.
 * @property {number} [remindersToModel] Most copies of the reminder seen by the model in one request.
 * @property {number} [repetitionWarningsToModel] Most copies of the identical-call breaker's warning
 *   seen by the model in one request; default 0.
 * @property {number} [failedToolResults] `claude_code.tool_result` events with `success="false"` (all prompts, subagents included).
 * @property {number} [subagentRequests] Subagent model requests.
 * @property {number} [recordsBeforeApiRequest] At least this many `tool_decision`/`tool_result` events were
 *   emitted before the `api_request` event of their own response (a streamed response's first calls).
 * @property {number} [invisibleFailedCalls] Calls answered with `is_error` that left no telemetry event (validation errors, unknown tools).
 */

/**
 * What {@link runClaudeScenario} returns.
 * @typedef {object} ClaudeRun
 * @property {string} otlpFile The OTLP JSON lines (copied into `outdir`).
 * @property {string} hookFile The recorded hook inputs (JSON lines).
 * @property {string} hookDecisionsFile The guard hook's decisions (`replay --format json` lines), written
 *   by the hook command through `RTFG_CLAUDE_CODE_DECISIONS`.
 * @property {import('./fake-anthropic.mjs').RecordedMessagesRequest[]} requests
 * @property {{ exitCode: number | null, signal: string | null, forcedKill: boolean, result: any, informational: string[], sessionId: string, elapsedMillis: number }[]} prompts
 *   `informational`: the contents of the stream-json `system`/`informational` messages (where a
 *   hook's `systemMessage` reaches the user).
 * @property {number} durationMillis
 */

const RUN_TIMEOUT_MILLIS = 60_000;

/**
 * Why the CLI cannot be run, or `undefined`.
 * @returns {string | undefined}
 */
export function missingClaudeCli() {
  if (existsSync(CLAUDE_CLI)) return undefined;
  return process.env.CLAUDE_CODE_CLI
    ? `conformance: CLAUDE_CODE_CLI=${process.env.CLAUDE_CODE_CLI} does not exist`
    : `conformance: the Claude Code CLI is missing (${CLAUDE_CLI}); run \`npm run conformance:install\` first ` +
        `(it installs @anthropic-ai/claude-code ${PINNED_VERSION} into conformance/claude-code/node_modules)`;
}

/**
 * The version the CLI reports (`claude --version`), or `unknown`.
 * @returns {string}
 */
export function claudeVersion() {
  const r = spawnSync(CLAUDE_CLI, ['--version'], { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH ?? '', HOME: tmpdir() } });
  return /^(\S+)/.exec(r.stdout ?? '')?.[1] ?? 'unknown';
}

/**
 * @param {string} file
 * @returns {ClaudeScenario}
 */
export function loadClaudeScenario(file) {
  /** @type {ClaudeScenario} */
  const s = JSON.parse(readFileSync(file, 'utf8'));
  if (!s.name || !Array.isArray(s.prompts) || s.prompts.length === 0) throw new TypeError(`${file}: needs name and prompts[]`);
  return s;
}

/** Process groups still running, ended if this process is interrupted. */
const live = new Set();
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    for (const pid of live) signalGroup(pid, 'SIGKILL');
    process.exit(130);
  });
}

/**
 * A single-quoted shell word.
 * @param {string} s
 */
function shq(s) {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The settings.json `hooks` object.
 * @param {string} hookLog
 * @param {boolean} guard
 * @param {Record<string, unknown>} [httpHook] The guard's HTTP hook as `--print-settings --http` prints it.
 */
function hookSettings(hookLog, guard, httpHook, bare = false, guardCommand = undefined) {
  const logger = { type: 'command', command: `${shq(process.execPath)} ${shq(join(here, 'hook-logger.mjs'))} ${shq(hookLog)}` };
  const guardHook = httpHook ?? {
    type: 'command',
    // CONFORMANCE_GUARD_HOOK: another hook command, for experiments.
    command: guardCommand ?? process.env.CONFORMANCE_GUARD_HOOK ?? `${shq(process.execPath)} ${shq(OUR_CLI)} claude-code-hook`,
  };
  /** @type {Record<string, unknown[]>} */
  const hooks = {};
  for (const event of ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch', 'Stop', 'SubagentStop', 'SessionEnd']) {
    const list = bare ? [] : [logger];
    if (guard && ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch'].includes(event)) list.push(guardHook);
    if (list.length === 0) continue;
    const toolEvent = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'].includes(event);
    hooks[event] = [toolEvent ? { matcher: '*', hooks: list } : { hooks: list }];
  }
  return hooks;
}

/**
 * Sends the prompt as a stream-json user message, then an `interrupt` control request
 * `afterMillis` after the assistant message with the calls of the given round (ids starting with
 * `callPrefix`) appeared on stdout, and closes stdin once the `result` line is out.
 * @param {import('node:child_process').ChildProcess} child
 * @param {string} text
 * @param {string} callPrefix
 * @param {number} afterMillis
 * @param {string[]} out The stdout chunks so far (appended by the caller).
 * @param {(line: string) => void} log
 */
function driveInterrupt(child, text, callPrefix, afterMillis, out, log) {
  /** @param {object} message */
  const send = (message) => {
    if (child.stdin && !child.stdin.destroyed) child.stdin.write(`${JSON.stringify(message)}\n`);
  };
  send({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' });
  let sent = false;
  let closed = false;
  child.stdout?.on('data', () => {
    const all = out.join('');
    if (!sent && all.includes(`"id":"${callPrefix}`)) {
      sent = true;
      setTimeout(() => {
        log(`interrupt (${callPrefix}*)`);
        send({ type: 'control_request', request_id: 'rtfg-interrupt-1', request: { subtype: 'interrupt' } });
      }, afterMillis);
    }
    if (!closed && /"type":"result"/.test(all)) {
      closed = true;
      child.stdin?.end();
    }
  });
}

/**
 * The environment that keeps the Claude Code CLI (or the Agent SDK's) offline against the fake API.
 * @param {string} home
 * @param {string} baseUrl The fake Anthropic API.
 * @returns {Record<string, string>}
 */
export function offlineClaudeEnv(home, baseUrl) {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-conformance-dummy',
    NO_PROXY: '127.0.0.1,localhost',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    IS_SANDBOX: '1',
  };
}

/**
 * Starts our `serve --claude-code-hook-port` (the real CLI, as a user runs it) on loopback with a
 * fresh token, the guard in `mode`, its decisions to `decisionsFile` and its telemetry to
 * `exportEndpoint`, and returns the HTTP hook exactly as `claude-code-hook --print-settings --http`
 * prints it.
 * @param {{ mode: string, decisionsFile: string, exportEndpoint?: string, dir: string, log: (line: string) => void }} o
 * @returns {Promise<{ hook: Record<string, unknown>, token: string, close: () => Promise<void> }>}
 */
export async function startHookServe({ mode, decisionsFile, exportEndpoint, dir, log }) {
  const token = randomUUID().replace(/-/g, '');
  const tokenFile = join(dir, 'hook-token');
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [OUR_CLI, 'serve', '--port', '0', '--claude-code-hook-port', '0', '--bearer-token-file', tokenFile, '--mode', mode, ...(exportEndpoint === undefined ? [] : ['--export-endpoint', exportEndpoint])],
    { env: { PATH: process.env.PATH, HOME: dir, RTFG_CLAUDE_CODE_DECISIONS: decisionsFile }, stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  if (child.pid !== undefined) live.add(child.pid);
  child.once('exit', () => live.delete(child.pid));
  let stderr = '';
  const url = await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`serve did not start: ${stderr}`)), 30_000);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d) => {
      stderr += d;
      const m = /answering Claude Code HTTP hooks on (\S+),/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        done(m[1]);
      }
    });
    child.once('exit', () => fail(new Error(`serve exited: ${stderr}`)));
  });
  log(`serve hook endpoint ${url}`);
  const printed = spawnSync(process.execPath, [OUR_CLI, 'claude-code-hook', '--print-settings', '--http', String(url)], { encoding: 'utf8', timeout: 20_000 });
  const hook = JSON.parse(printed.stdout).hooks.PreToolUse[0].hooks[0];
  return {
    hook,
    token,
    close: async () => {
      child.kill('SIGTERM');
      if (await endChild(child, 10_000)) log('serve had to be killed');
      for (const line of stderr.split('\n')) if (/stopped after|error|refus/i.test(line)) log(line);
    },
  };
}

/**
 * Runs one scenario.
 * @param {ClaudeScenario} scenario
 * @param {{ outdir: string, log?: (line: string) => void, keepMetrics?: boolean, hookTransport?: 'command' | 'http', bare?: boolean, guardCommand?: string, hookServe?: { hook: Record<string, unknown>, token: string } }} options
 *   `hookTransport: 'http'` answers the guard's hooks from `serve --claude-code-hook-port` (type
 *   `http`) instead of the command hook. `bare` (the bench): no logging hook and no telemetry, only
 *   the guard's hooks, as a user installs them; `guardCommand` replaces the command hook's command
 *   line; `hookServe` is a running endpoint to use (from {@link startHookServe}) instead of a new one.
 * @returns {Promise<ClaudeRun>}
 */
export async function runClaudeScenario(scenario, { outdir, log = () => {}, keepMetrics = false, hookTransport = 'command', bare = false, guardCommand, hookServe: givenServe }) {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), `rtfg-cc-${scenario.name}-`));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const hookLog = join(root, 'hooks.jsonl');
  const otlpTmp = join(root, 'telemetry.otlp.jsonl');
  const hookDecisions = join(root, 'hook-decisions.jsonl');
  mkdirSync(join(home, '.claude'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  mkdirSync(outdir, { recursive: true });
  writeFileSync(hookLog, '');
  writeFileSync(hookDecisions, '');
  for (const [rel, content] of Object.entries(scenario.cwd?.files ?? {})) {
    const file = join(cwd, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  if (scenario.cwd?.git) {
    spawnSync('git', ['init', '-q'], { cwd, env: { PATH: process.env.PATH, HOME: home, GIT_CEILING_DIRECTORIES: root }, timeout: 10_000 });
  }
  const mcpConfig = join(root, 'mcp.json');
  if (scenario.mcpServers?.length) {
    /** @type {Record<string, { command: string, args: string[] }>} */
    const servers = {};
    for (const name of scenario.mcpServers) servers[name] = { command: process.execPath, args: [join(here, 'mcp-failing-server.mjs'), name] };
    writeFileSync(mcpConfig, JSON.stringify({ mcpServers: servers }, null, 2));
  }
  const dumpDir = process.env.FAKE_PROVIDER_DUMP ? join(outdir, `${scenario.name}.requests`) : undefined;
  if (dumpDir) mkdirSync(dumpDir, { recursive: true });
  const provider = await startFakeAnthropic({ prompts: scenario.prompts, vars: { cwd }, subagentScripts: scenario.subagentScripts, dumpDir });
  const sink = await startOtlpSink({ file: otlpTmp, keepMetrics });
  const ownServe =
    hookTransport === 'http' && scenario.hooks === 'guard' && givenServe === undefined
      ? await startHookServe({ mode: scenario.mode, decisionsFile: hookDecisions, exportEndpoint: sink.endpoint, dir: root, log })
      : undefined;
  const hookServe = hookTransport === 'http' && scenario.hooks === 'guard' ? (givenServe ?? ownServe) : undefined;
  writeFileSync(
    join(home, '.claude', 'settings.json'),
    JSON.stringify({ ...scenario.settings, hooks: hookSettings(hookLog, scenario.hooks === 'guard', hookServe?.hook, bare, guardCommand) }, null, 2),
  );
  /** @type {NodeJS.ProcessEnv} */
  const env = {
    ...offlineClaudeEnv(home, provider.baseUrl),
    TERM: 'dumb',
    GIT_CEILING_DIRECTORIES: root,
    CLAUDE_CODE_ENABLE_TELEMETRY: '1',
    CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
    OTEL_LOGS_EXPORTER: 'otlp',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: keepMetrics ? 'otlp' : 'none',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
    OTEL_LOGS_EXPORT_INTERVAL: '500',
    OTEL_TRACES_EXPORT_INTERVAL: '500',
    OTEL_METRIC_EXPORT_INTERVAL: '1000',
    QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD: scenario.mode,
    RTFG_CLAUDE_CODE_STATE_DIR: join(root, 'guard-state'),
    RTFG_CLAUDE_CODE_DECISIONS: hookDecisions,
    // Claude Code drops OTEL_* from hook environments: the guard hook gets the sink explicitly.
    RTFG_CLAUDE_CODE_OTLP_ENDPOINT: sink.endpoint,
    ...(hookServe === undefined ? {} : { RTFG_CLAUDE_CODE_HOOK_TOKEN: hookServe.token }),
  };
  if (bare) {
    for (const k of Object.keys(env)) if (k.startsWith('OTEL_') || k.startsWith('CLAUDE_CODE_ENABLE') || k.startsWith('CLAUDE_CODE_ENHANCED') || k === 'RTFG_CLAUDE_CODE_OTLP_ENDPOINT') delete env[k];
  }
  if (process.env.CLAUDE_CODE_EXTRA_ENV) Object.assign(env, JSON.parse(process.env.CLAUDE_CODE_EXTRA_ENV));

  const sessionId = randomUUID();
  /** @type {ClaudeRun['prompts']} */
  const prompts = [];
  /** @type {string[]} */
  const stdoutAll = [];
  /** @type {string[]} */
  const stderrAll = [];
  try {
    for (const [index, p] of scenario.prompts.entries()) {
      const text = `${p.text} [rtfg-prompt ${index + 1}]`;
      // A prompt the user interrupts goes in through stream-json input, the way the Agent SDK
      // drives the CLI: its `interrupt` control request is the SDK's `interrupt()`.
      const interrupt = p.interrupt;
      const args = [
        '-p',
        ...(interrupt ? ['--input-format', 'stream-json'] : [text]),
        '--output-format',
        'stream-json',
        '--verbose',
        ...(scenario.permissionMode === undefined ? ['--dangerously-skip-permissions'] : ['--permission-mode', scenario.permissionMode]),
        '--model',
        'claude-sonnet-4-5',
        ...(index === 0 ? ['--session-id', sessionId] : ['--resume', sessionId]),
        ...(scenario.mcpServers?.length ? ['--mcp-config', mcpConfig, '--strict-mcp-config'] : []),
      ];
      const spawnedAt = process.hrtime.bigint();
      const child = spawn(CLAUDE_CLI, args, { cwd, env, detached: true, stdio: [interrupt ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
      if (child.pid !== undefined) live.add(child.pid);
      child.once('exit', () => live.delete(child.pid));
      log(`${scenario.name}: prompt ${index + 1}, pid ${child.pid}`);
      /** @type {string[]} */
      const out = [];
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (d) => out.push(d));
      if (interrupt) driveInterrupt(child, text, `toolu_p${index + 1}r${interrupt.round}_`, interrupt.afterMillis, out, log);
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (d) => stderrAll.push(d));
      const forcedKill = await endChild(child, RUN_TIMEOUT_MILLIS);
      const elapsedMillis = Number(process.hrtime.bigint() - spawnedAt) / 1e6;
      const stdout = out.join('');
      stdoutAll.push(`# prompt ${index + 1}\n${stdout}`);
      /** @type {any} */
      let result;
      /** @type {string[]} */
      const informational = [];
      for (const line of stdout.split('\n')) {
        try {
          const v = JSON.parse(line);
          if (v?.type === 'result') result = v;
          if (v?.type === 'system' && v.subtype === 'informational' && typeof v.content === 'string') informational.push(v.content);
        } catch {
          // not a JSON line
        }
      }
      prompts.push({ exitCode: child.exitCode, signal: child.signalCode, forcedKill, result, informational, sessionId, elapsedMillis });
    }
  } finally {
    await ownServe?.close();
    await waitForQuietFile(otlpTmp, 700, 5_000);
    await sink.close();
    await provider.close();
  }
  const otlpFile = join(outdir, `${scenario.name}.otlp.jsonl`);
  copyFileSync(otlpTmp, otlpFile);
  const hookFile = join(outdir, `${scenario.name}.hooks.jsonl`);
  copyFileSync(hookLog, hookFile);
  const hookDecisionsFile = join(outdir, `${scenario.name}.hook-decisions.jsonl`);
  copyFileSync(hookDecisions, hookDecisionsFile);
  writeFileSync(join(outdir, `${scenario.name}.requests.json`), JSON.stringify(provider.requests, null, 2));
  writeFileSync(join(outdir, `${scenario.name}.stdout.jsonl`), stdoutAll.join('\n'));
  writeFileSync(join(outdir, `${scenario.name}.stderr.log`), stderrAll.join(''));
  if (!process.env.CONFORMANCE_KEEP_TMP) rmSync(root, { recursive: true, force: true });
  return { otlpFile, hookFile, hookDecisionsFile, requests: provider.requests, prompts, durationMillis: Date.now() - started };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, outdir] = process.argv.slice(2);
  if (!file || !outdir) {
    console.error('usage: node conformance/claude-code/run-scenario.mjs <scenario.json> <outdir>');
    process.exit(2);
  }
  const missing = missingClaudeCli();
  if (missing) {
    console.error(missing);
    process.exit(1);
  }
  const code = reexecIsolated(180_000);
  if (code !== undefined) process.exit(code);
  const run = await runClaudeScenario(loadClaudeScenario(file), {
    outdir: resolve(outdir),
    hookTransport: process.env.CONFORMANCE_HOOK_TRANSPORT === 'http' ? 'http' : 'command',
    log: (l) => console.error(`[${basename(file)}] ${l}`),
    keepMetrics: Boolean(process.env.CONFORMANCE_KEEP_METRICS),
  });
  console.log(JSON.stringify({ ...run, requests: run.requests.length }, null, 2));
}

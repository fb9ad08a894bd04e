// @ts-check
/* global process, console */
/**
 * Runs one gemini-cli conformance scenario end to end against the real CLI, offline: a throwaway
 * HOME and working directory, the scripted fake Gemini API on 127.0.0.1, telemetry to an outfile,
 * then `gemini -p … --yolo --output-format stream-json -m gemini-2.5-flash` once per prompt
 * (prompt 2 and later `--resume latest`).
 *
 * Usage: node conformance/gemini-cli/run-scenario.mjs <scenario.json> <outdir>
 *
 * The CLI is `conformance/gemini-cli/node_modules/@google/gemini-cli/bundle/gemini.js` (installed
 * by `npm run conformance:gemini:install`) unless `GEMINI_CLI` names another entry file.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reexecIsolated } from '../run-scenario.mjs';
import { startFakeGemini } from './fake-gemini.mjs';
import { endChild, signalGroup, waitForQuietFile } from '../child-process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');

/** The pinned version; every expected value was observed with it only. */
export const PINNED_VERSION = '0.61.0';

/** The CLI under test. */
export const GEMINI_CLI = resolve(process.env.GEMINI_CLI ?? join(here, 'node_modules/@google/gemini-cli/bundle/gemini.js'));

/** Our CLI (the hook command); `RTFG_REPLAY_CLI` points at another build. */
export const OUR_CLI = resolve(process.env.RTFG_REPLAY_CLI ?? join(repoRoot, 'dist/bin/repeated-tool-failure-guard.js'));

/**
 * A scenario file (see conformance/README.md, "gemini-cli").
 * @typedef {object} GeminiScenario
 * @property {string} name
 * @property {string} [description]
 * @property {'shadow' | 'warn' | 'enforce'} mode The replay's `--mode` and, with `hooks: "guard"`,
 *   the hook command's `--mode`.
 * @property {'none' | 'guard'} [hooks] `guard` registers `repeated-tool-failure-guard
 *   gemini-cli-hook` for BeforeAgent, BeforeTool, AfterTool, BeforeModel and AfterAgent, and a
 *   logging hook that records every hook input.
 * @property {{ files?: Record<string, string> }} [cwd]
 * @property {{ files?: Record<string, string> }} [home] Files written into the throwaway HOME
 *   (e.g. `.gemini/policies/deny.toml`, a user-tier policy).
 * @property {boolean} [mcp] Register the scenario's failing MCP server (`mcp-server.mjs`) as `rtfg`.
 * @property {import('./fake-gemini.mjs').GeminiPromptScript[]} prompts
 * @property {ExpectedDecision[]} expectedDecisions What the design's reducer must decide, in order.
 * @property {Expectations} expectedOutcome
 */

/**
 * @typedef {object} ExpectedDecision
 * @property {number} [prompt] 1-based prompt of the scenario; default 1.
 * @property {number} batch Batch ordinal within the prompt (= the scenario round).
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
 * @property {number} [remindersToModel] Most copies of the reminder seen by the model in one request.
 * @property {number} [failedToolCalls] `gemini_cli.tool_call` logs with `success: false` (all prompts).
 * @property {number} [shellNonZeroExits] Shell calls logged `success: true` whose command exited non-zero.
 * @property {number} [loopDetected] `loop_detected` logs written by gemini-cli's own loop detection.
 * @property {boolean} [stoppedByHook] The last prompt ended at the guard hook's stop.
 */

/**
 * What {@link runGeminiScenario} returns.
 * @typedef {object} GeminiRun
 * @property {string} outfile The telemetry outfile (copied into `outdir`).
 * @property {string} hookFile The recorded hook inputs (JSON lines).
 * @property {string} hookDecisionsFile The guard hook's decisions (`replay --format json` lines).
 * @property {import('./fake-gemini.mjs').RecordedGeminiRequest[]} requests
 * @property {{ exitCode: number | null, signal: string | null, forcedKill: boolean, result: any, stdout: string, stderr: string }[]} prompts
 * @property {number} durationMillis
 */

const RUN_TIMEOUT_MILLIS = 60_000;

/**
 * Why the CLI cannot be run, or `undefined`.
 * @returns {string | undefined}
 */
export function missingGeminiCli() {
  if (existsSync(GEMINI_CLI)) return undefined;
  return process.env.GEMINI_CLI
    ? `conformance: GEMINI_CLI=${process.env.GEMINI_CLI} does not exist`
    : `conformance: gemini-cli is missing (${GEMINI_CLI}); run \`npm run conformance:gemini:install\` first ` +
        `(it installs @google/gemini-cli ${PINNED_VERSION} into conformance/gemini-cli/node_modules)`;
}

/**
 * The version of the CLI under test, from the `package.json` above its bundle.
 * @returns {string}
 */
export function geminiVersion() {
  try {
    return String(JSON.parse(readFileSync(join(dirname(GEMINI_CLI), '..', 'package.json'), 'utf8')).version);
  } catch {
    return 'unknown';
  }
}

/**
 * @param {string} file
 * @returns {GeminiScenario}
 */
export function loadGeminiScenario(file) {
  /** @type {GeminiScenario} */
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

/** The events the guard hook is registered for. */
export const GUARD_HOOK_EVENTS = ['BeforeAgent', 'BeforeTool', 'AfterTool', 'BeforeModel', 'AfterAgent'];

/**
 * The guard hook's command exactly as a user gets it: `gemini-cli-hook --print-settings --mode
 * <mode>` of our CLI, run from another directory (the command it prints names the hook's own
 * entry by absolute paths and must work wherever gemini-cli runs it).
 * @param {string} mode
 * @returns {string}
 */
export function printedHookCommand(mode) {
  const printed = spawnSync(process.execPath, [OUR_CLI, 'gemini-cli-hook', '--print-settings', '--mode', mode], { cwd: tmpdir(), encoding: 'utf8', timeout: 30_000 });
  if (printed.status !== 0) throw new Error(`gemini-cli-hook --print-settings exited ${printed.status}: ${printed.stderr}`);
  /** @type {any} */
  const settings = JSON.parse(printed.stdout);
  const commands = new Set(GUARD_HOOK_EVENTS.map((e) => settings.hooks?.[e]?.[0]?.hooks?.[0]?.command));
  const [command] = commands;
  if (commands.size !== 1 || typeof command !== 'string') throw new Error(`gemini-cli-hook --print-settings printed no single command for ${GUARD_HOOK_EVENTS.join(', ')}`);
  return command;
}

/**
 * The settings.json `hooks` object: the logger on every event and the guard on its events, or none
 * without the guard (every hook is a process per event: it slows the run).
 * @param {string} hookLog
 * @param {boolean} guard
 * @param {string} mode
 */
function hookSettings(hookLog, guard, mode) {
  if (!guard) return {};
  const logger = { type: 'command', command: `${shq(process.execPath)} ${shq(join(here, '..', 'claude-code', 'hook-logger.mjs'))} ${shq(hookLog)} --transcript-turns` };
  const guardHook = { type: 'command', command: process.env.CONFORMANCE_GUARD_HOOK ?? printedHookCommand(mode) };
  /** @type {Record<string, unknown[]>} */
  const hooks = {};
  for (const event of ['SessionStart', 'BeforeAgent', 'BeforeModel', 'AfterModel', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionEnd']) {
    const list = [logger];
    if (guard && GUARD_HOOK_EVENTS.includes(event)) list.push(guardHook);
    const toolEvent = event === 'BeforeTool' || event === 'AfterTool';
    hooks[event] = [toolEvent ? { matcher: '*', hooks: list } : { hooks: list }];
  }
  return hooks;
}

/**
 * Runs one scenario.
 * @param {GeminiScenario} scenario
 * @param {{ outdir: string, log?: (line: string) => void }} options
 * @returns {Promise<GeminiRun>}
 */
export async function runGeminiScenario(scenario, { outdir, log = () => {} }) {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), `rtfg-gemini-${scenario.name}-`));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const hookLog = join(root, 'hooks.jsonl');
  const outfileTmp = join(root, 'telemetry.json');
  const hookDecisions = join(root, 'hook-decisions.jsonl');
  mkdirSync(join(home, '.gemini'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  mkdirSync(outdir, { recursive: true });
  writeFileSync(hookLog, '');
  writeFileSync(hookDecisions, '');
  for (const [rel, content] of Object.entries(scenario.home?.files ?? {})) {
    const file = join(home, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  for (const [rel, content] of Object.entries(scenario.cwd?.files ?? {})) {
    const file = join(cwd, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  /** @type {Record<string, unknown>} */
  const settings = {
    // GOOGLE_GEMINI_BASE_URL alone selects the `gateway` auth type, which 0.61.0's CLI refuses
    // ("Invalid auth method selected."): the API-key type keeps the base URL and a dummy key.
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    hooks: hookSettings(hookLog, scenario.hooks === 'guard', scenario.mode),
  };
  if (scenario.mcp) {
    settings.mcpServers = { rtfg: { command: process.execPath, args: [join(here, 'mcp-server.mjs')], timeout: 10_000, trust: true } };
  }
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2));

  const dumpDir = process.env.FAKE_PROVIDER_DUMP ? join(outdir, `${scenario.name}.requests`) : undefined;
  if (dumpDir) mkdirSync(dumpDir, { recursive: true });
  const provider = await startFakeGemini({ prompts: scenario.prompts, vars: { cwd }, dumpDir });
  /** @type {NodeJS.ProcessEnv} */
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    GIT_CEILING_DIRECTORIES: root,
    GOOGLE_GEMINI_BASE_URL: provider.baseUrl,
    GEMINI_API_KEY: 'conformance-dummy-key',
    NO_PROXY: '127.0.0.1,localhost',
    GEMINI_TELEMETRY_ENABLED: 'true',
    GEMINI_TELEMETRY_TARGET: 'local',
    GEMINI_TELEMETRY_OUTFILE: outfileTmp,
    // No prompts, arguments or responses in the telemetry (the fixtures are committed).
    GEMINI_TELEMETRY_LOG_PROMPTS: 'false',
    RTFG_GEMINI_CLI_STATE_DIR: join(root, 'guard-state'),
    RTFG_GEMINI_CLI_DECISIONS: hookDecisions,
  };
  if (process.env.GEMINI_CLI_EXTRA_ENV) Object.assign(env, JSON.parse(process.env.GEMINI_CLI_EXTRA_ENV));

  /** @type {GeminiRun['prompts']} */
  const prompts = [];
  try {
    for (const [index, p] of scenario.prompts.entries()) {
      const text = `${p.text} [rtfg-prompt ${index + 1}]`;
      const args = [
        GEMINI_CLI,
        '-p',
        text,
        '--yolo',
        '--output-format',
        'stream-json',
        '-m',
        'gemini-2.5-flash',
        ...(index === 0 ? [] : ['--resume', 'latest']),
      ];
      const child = spawn(process.execPath, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      if (child.pid !== undefined) live.add(child.pid);
      child.once('exit', () => live.delete(child.pid));
      log(`${scenario.name}: prompt ${index + 1}, pid ${child.pid}`);
      /** @type {string[]} */
      const out = [];
      /** @type {string[]} */
      const err = [];
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (d) => out.push(d));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (d) => err.push(d));
      const forcedKill = await endChild(child, RUN_TIMEOUT_MILLIS);
      const stdout = out.join('');
      /** @type {any} */
      let result;
      for (const line of stdout.split('\n')) {
        try {
          const v = JSON.parse(line);
          if (v?.type === 'result') result = v;
        } catch {
          // not a JSON line
        }
      }
      prompts.push({ exitCode: child.exitCode, signal: child.signalCode, forcedKill, result, stdout, stderr: err.join('') });
    }
  } finally {
    await waitForQuietFile(outfileTmp, 500, 5_000);
    await provider.close();
  }
  const outfile = join(outdir, `${scenario.name}.outfile.json`);
  if (existsSync(outfileTmp)) copyFileSync(outfileTmp, outfile);
  else writeFileSync(outfile, '');
  const hookFile = join(outdir, `${scenario.name}.hooks.jsonl`);
  copyFileSync(hookLog, hookFile);
  const hookDecisionsFile = join(outdir, `${scenario.name}.hook-decisions.jsonl`);
  copyFileSync(hookDecisions, hookDecisionsFile);
  writeFileSync(join(outdir, `${scenario.name}.requests.json`), JSON.stringify(provider.requests, null, 2));
  writeFileSync(join(outdir, `${scenario.name}.stdout.jsonl`), prompts.map((p, i) => `# prompt ${i + 1}\n${p.stdout}`).join('\n'));
  writeFileSync(join(outdir, `${scenario.name}.stderr.log`), prompts.map((p) => p.stderr).join(''));
  if (!process.env.CONFORMANCE_KEEP_TMP) rmSync(root, { recursive: true, force: true });
  return { outfile, hookFile, hookDecisionsFile, requests: provider.requests, prompts, durationMillis: Date.now() - started };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, outdir] = process.argv.slice(2);
  if (!file || !outdir) {
    console.error('usage: node conformance/gemini-cli/run-scenario.mjs <scenario.json> <outdir>');
    process.exit(2);
  }
  const missing = missingGeminiCli();
  if (missing) {
    console.error(missing);
    process.exit(1);
  }
  const code = reexecIsolated(180_000);
  if (code !== undefined) process.exit(code);
  const run = await runGeminiScenario(loadGeminiScenario(file), {
    outdir: resolve(outdir),
    log: (l) => console.error(`[${basename(file)}] ${l}`),
  });
  console.log(JSON.stringify({ ...run, requests: run.requests.length, prompts: run.prompts.map((p) => ({ ...p, stdout: undefined, stderr: undefined })) }, null, 2));
}

// @ts-check
/* global process, setTimeout */
/**
 * Runs one Codex conformance scenario against the real Codex CLI (0.169.0, installed into
 * `conformance/codex/node_modules` by `npm run conformance:codex:install`), offline:
 *
 * - a throwaway HOME and CODEX_HOME with a `config.toml` naming the fake Responses API
 *   (`fake-responses.mjs`) as the model provider, `[otel]` logs and traces exporting OTLP/HTTP JSON
 *   to a local sink, the fake MCP server (`fake-mcp.mjs`) when the scenario uses it, and command
 *   hooks: a recorder of every hook input and the guard's `codex-hook` (every scenario runs both paths);
 * - one `codex exec` per prompt (the second with `exec resume --last`), each started in its own
 *   process group, bounded in time and killed by group when it overruns.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endChild } from '../child-process.mjs';
import { startOtlpSink } from '../claude-code/otlp-sink.mjs';
import { startFakeResponses } from './fake-responses.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** The pinned version the expected values were observed with. */
export const PINNED_VERSION = '0.169.0';
/** The Codex launcher installed for the conformance run. */
export const CODEX_CLI = join(here, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
/** Our CLI (built). */
export const OUR_CLI = resolve(here, '..', '..', 'dist', 'bin', 'repeated-tool-failure-guard.js');
const HOOK_RECORDER = join(here, 'hook-recorder.mjs');
const FAKE_MCP = join(here, 'fake-mcp.mjs');
/** A prompt's `codex exec` is killed after this long. */
const PROMPT_TIMEOUT_MILLIS = 90_000;
/** The OTLP exporters flush at exit; records may trail the exit by this much. */
const EXPORT_SETTLE_MILLIS = 1_500;

/**
 * @typedef {object} CodexScenario
 * @property {string} name
 * @property {string} description
 * @property {'shadow' | 'warn' | 'enforce'} mode
 * @property {boolean} [mcp] Register the fake MCP server as `ops`.
 * @property {number} [mcpToolTimeoutSec]
 * @property {import('./fake-responses.mjs').PromptScript[]} prompts
 * @property {Record<string, any>[] | null} expectedDecisions What the telemetry (`replay`) must give; `null`: not
 *   compared, the telemetry's signals vary between runs (the description says how).
 * @property {Record<string, any>[] | null} [expectedHookDecisions] What the hook must give (default: the same as
 *   the telemetry); `null`: not compared (as for `expectedDecisions`).
 * @property {Record<string, any>} expectedOutcome
 * @property {string} [signals] Which signals decide this scenario, and where they do not exist.
 */

/** @param {string} file @returns {CodexScenario} */
export function loadCodexScenario(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Why the CLI cannot run, or undefined. */
export function missingCodexCli() {
  return existsSync(CODEX_CLI) ? undefined : `conformance: ${CODEX_CLI} is missing; run npm run conformance:codex:install`;
}

/** The installed Codex version. */
export function codexVersion() {
  const r = spawnSync(process.execPath, [CODEX_CLI, '--version'], { encoding: 'utf8', timeout: 20_000 });
  return (r.stdout ?? '').trim().replace(/^codex-cli\s+/, '') || 'unknown';
}

/**
 * The first `.jsonl` file under `dir` (depth-first): Codex's rollout file of the session.
 * @param {string} dir
 * @returns {string | undefined}
 */
function findJsonl(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const found = findJsonl(p);
      if (found) return found;
    } else if (e.name.endsWith('.jsonl')) return p;
  }
  return undefined;
}

/** @param {string} s */
function tomlString(s) {
  return JSON.stringify(s);
}

/**
 * The recorder hook on every event the guard uses (config.toml `[[hooks.<event>]]` tables).
 * @param {string} recorder
 */
function hooksToml(recorder) {
  const lines = [];
  for (const event of ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']) {
    lines.push(`[[hooks.${event}]]`);
    if (event === 'PreToolUse' || event === 'PostToolUse') lines.push('matcher = "*"');
    lines.push(`[[hooks.${event}.hooks]]`, 'type = "command"', `command = ${tomlString(recorder)}`, 'timeout = 30', '');
  }
  return lines.join('\n');
}

/**
 * `codex-hook --mode <mode> --print-settings`, run from another directory (the printed command
 * must work from any cwd).
 * @param {string} mode
 */
function printSettings(mode) {
  const r = spawnSync(process.execPath, [OUR_CLI, 'codex-hook', '--mode', mode, '--print-settings'], { cwd: '/', encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0 || !r.stdout.includes('[[hooks.PostToolUse]]')) throw new Error(`codex-hook --print-settings failed: exit ${r.status}`);
  return r.stdout;
}

/**
 * @typedef {object} CodexPromptRun
 * @property {number | null} exitCode
 * @property {string | null} signal
 * @property {boolean} forcedKill
 * @property {string[]} eventTypes The `--json` event types printed, in order.
 * @property {string} stderr What `codex exec` printed on stderr (where it shows hook warnings to the user).
 */

/**
 * @typedef {object} CodexRun
 * @property {string} dir
 * @property {string} otlpFile
 * @property {string} hookFile Every hook input, one JSON line each (`hook-recorder.mjs`).
 * @property {string | undefined} transcriptFile The session's rollout file (the transcript hooks read).
 * @property {string} hookDecisionsFile
 * @property {import('./fake-responses.mjs').RecordedRequest[]} requests
 * @property {CodexPromptRun[]} prompts
 * @property {number} durationMillis
 */

/**
 * Runs the scenario.
 * @param {CodexScenario} scenario
 * @param {{ outdir: string, log: (line: string) => void }} options
 * @returns {Promise<CodexRun>}
 */
export async function runCodexScenario(scenario, options) {
  const started = Date.now();
  const dir = join(options.outdir, scenario.name);
  const home = join(dir, 'home');
  const codexHome = join(home, '.codex');
  const work = join(dir, 'work');
  mkdirSync(codexHome, { recursive: true });
  mkdirSync(work, { recursive: true });
  const otlpFile = join(dir, 'otlp.jsonl');
  const hookFile = join(dir, 'hooks.jsonl');
  const hookDecisionsFile = join(dir, 'hook-decisions.jsonl');
  writeFileSync(hookFile, '');
  writeFileSync(hookDecisionsFile, '');
  const sink = await startOtlpSink({ file: otlpFile });
  const fake = await startFakeResponses(scenario);
  const recorder = `${process.execPath} ${HOOK_RECORDER} ${hookFile}`;
  // The guard registers itself as a user would: the fragment `codex-hook --print-settings` prints.
  const guardToml = printSettings(scenario.mode);
  const config = [
    'model = "gpt-5.1-codex"',
    'model_provider = "rtfg_fake"',
    '',
    '[model_providers.rtfg_fake]',
    'name = "rtfg fake Responses API"',
    `base_url = ${tomlString(fake.baseUrl)}`,
    'env_key = "RTFG_FAKE_API_KEY"',
    'wire_api = "responses"',
    '',
    '[otel]',
    'log_user_prompt = false',
    `exporter = { otlp-http = { endpoint = ${tomlString(`${sink.endpoint}/v1/logs`)}, protocol = "json" } }`,
    `trace_exporter = { otlp-http = { endpoint = ${tomlString(`${sink.endpoint}/v1/traces`)}, protocol = "json" } }`,
    '',
    ...(scenario.mcp
      ? [
          '[mcp_servers.ops]',
          `command = ${tomlString(process.execPath)}`,
          `args = [${tomlString(FAKE_MCP)}]`,
          `tool_timeout_sec = ${scenario.mcpToolTimeoutSec ?? 20}`,
          'default_tools_approval_mode = "approve"',
          '',
        ]
      : []),
    hooksToml(recorder),
    guardToml,
  ].join('\n');
  writeFileSync(join(codexHome, 'config.toml'), config);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CODEX_HOME: codexHome,
    RTFG_FAKE_API_KEY: 'rtfg-offline',
    RTFG_CODEX_STATE_DIR: join(dir, 'guard-state'),
    RTFG_CODEX_DECISIONS: hookDecisionsFile,
    NO_COLOR: '1',
  };
  /** @type {CodexPromptRun[]} */
  const prompts = [];
  try {
    for (const [i, p] of scenario.prompts.entries()) {
      const text = `${p.text} [rtfg-prompt ${i + 1}]`;
      const common = ['--skip-git-repo-check', '--dangerously-bypass-hook-trust', '--json'];
      const args = i === 0 ? ['exec', ...common, '-C', work, text] : ['exec', 'resume', '--last', ...common, text];
      options.log(`prompt ${i + 1}: codex ${args.slice(0, i === 0 ? 1 : 3).join(' ')} …`);
      const child = spawn(process.execPath, [CODEX_CLI, ...args], { cwd: work, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      const forcedKill = await endChild(child, PROMPT_TIMEOUT_MILLIS);
      /** @type {string[]} */
      const eventTypes = [];
      for (const line of stdout.split('\n')) {
        try {
          const t = JSON.parse(line)?.type;
          if (typeof t === 'string') eventTypes.push(t);
        } catch {
          // not an event line
        }
      }
      writeFileSync(join(dir, `prompt-${i + 1}.events.jsonl`), stdout);
      writeFileSync(join(dir, `prompt-${i + 1}.stderr.txt`), stderr);
      prompts.push({ exitCode: child.exitCode, signal: child.signalCode, forcedKill, eventTypes, stderr });
    }
    await new Promise((r) => setTimeout(r, EXPORT_SETTLE_MILLIS));
  } finally {
    await fake.close();
    await sink.close();
  }
  const sessions = join(codexHome, 'sessions');
  const transcriptFile = existsSync(sessions) ? findJsonl(sessions) : undefined;
  return { dir, otlpFile, hookFile, hookDecisionsFile, transcriptFile, requests: fake.requests, prompts, durationMillis: Date.now() - started };
}

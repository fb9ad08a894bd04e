// @ts-check
/* global process, console */
/**
 * The guard as Claude Agent SDK hook callbacks, on the real `@anthropic-ai/claude-agent-sdk`
 * 0.3.328 (and the Claude Code CLI it runs) against the fake Anthropic API on loopback, offline:
 * each Claude Code guard-hook scenario (`conformance/claude-code/scenarios/*-hooks.json`, plus the
 * git loop in shadow) run through `query()` with `options.hooks = claudeAgentSdkGuardHooks(…)`
 * from the built package entry (`dist/claude-agent-sdk.js`). The decisions must be the
 * scenario's (the design's), the reminder must reach the model, the stop must end the run with
 * the stop text in the SDK's message stream, and every tool hook input must carry `prompt_id`.
 *
 *   npm run conformance:claude-agent-sdk:install     # the SDK into conformance/claude-agent-sdk (about 30 s)
 *   npm run test:conformance:claude-agent-sdk        # about 2 min
 *   node conformance/claude-agent-sdk/run-all.mjs bash-git-loop-warn-hooks   # a subset
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { reexecIsolated } from '../run-scenario.mjs';
import { startFakeAnthropic, STOP_TEXT } from '../claude-code/fake-anthropic.mjs';
import { offlineClaudeEnv } from '../claude-code/run-scenario.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const SCENARIOS = join(repoRoot, 'conformance/claude-code/scenarios');
const ENTRY = join(repoRoot, 'dist/claude-agent-sdk.js');
const SDK_DIR = join(here, 'node_modules/@anthropic-ai/claude-agent-sdk');
/** The pinned version; the expected values are the Claude Code 2.1.328 scenarios'. */
const PINNED = '0.3.328';
const RUN_BUDGET_MILLIS = 600_000;

if (!existsSync(SDK_DIR)) {
  console.error(`conformance: the Claude Agent SDK is missing (${SDK_DIR}); run npm run conformance:claude-agent-sdk:install first`);
  process.exit(1);
}
if (!existsSync(ENTRY)) {
  console.error(`conformance: ${ENTRY} is missing; run npm run build first`);
  process.exit(1);
}
const code = reexecIsolated(RUN_BUDGET_MILLIS + 120_000);
if (code !== undefined) process.exit(code);

// The types first: the package's hooks object is what the SDK's own `Options['hooks']` accepts
// (checked with the SDK's d.ts and the package's built d.ts, as a user's TypeScript sees them).
const typecheckDir = join(here, '.typecheck');
mkdirSync(typecheckDir, { recursive: true });
writeFileSync(
  join(typecheckDir, 'check.ts'),
  [
    "import type { Options } from '@anthropic-ai/claude-agent-sdk';",
    "import { claudeAgentSdkGuardHooks } from '../../../dist/claude-agent-sdk.js';",
    "export const hooks: Options['hooks'] = claudeAgentSdkGuardHooks({ mode: 'warn' });",
    "export const merged: Options['hooks'] = { ...claudeAgentSdkGuardHooks(), Stop: [{ hooks: [async () => ({})] }] };",
    '',
  ].join('\n'),
);
const tsc = spawnSync(
  process.execPath,
  [join(repoRoot, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck', '--types', 'node', join(typecheckDir, 'check.ts')],
  { encoding: 'utf8', timeout: 120_000 },
);
rmSync(typecheckDir, { recursive: true, force: true });
if (tsc.status !== 0) {
  console.log(`FAIL types: claudeAgentSdkGuardHooks() is not the SDK's Options['hooks']:\n${tsc.stdout}${tsc.stderr}`);
  process.exit(1);
}
console.error("conformance: claudeAgentSdkGuardHooks() type-checks as the SDK's Options['hooks']");

const sdkVersion = JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8')).version;
const { query } = await import(pathToFileURL(join(SDK_DIR, 'sdk.mjs')).href);
const { claudeAgentSdkGuardHooks } = await import(pathToFileURL(ENTRY).href);

const only = process.argv.slice(2);
const scenarios = readdirSync(SCENARIOS)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(SCENARIOS, f), 'utf8')))
  .filter((s) => s.hooks === 'guard' || s.name === 'bash-git-loop-shadow')
  .filter((s) => only.length === 0 || only.includes(s.name));

/**
 * @param {Record<string, unknown>} d
 */
const compact = (d) =>
  `p${d.prompt ?? 1}b${d.batch}:${d.decision}${d.resetReason ? `:${d.resetReason}` : ''}(${d.failureCountBucket},${d.batchCountBucket})#${d.candidateOrdinal} ${d.phaseBefore}->${d.phaseAfter}`;

/**
 * One scenario through `query()`.
 * @param {any} s
 */
async function runOne(s) {
  const root = mkdtempSync(join(tmpdir(), `rtfg-sdk-${s.name}-`));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  mkdirSync(join(home, '.claude'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  for (const [rel, content] of Object.entries(s.cwd?.files ?? {})) {
    mkdirSync(dirname(join(cwd, rel)), { recursive: true });
    writeFileSync(join(cwd, rel), /** @type {string} */ (content));
  }
  const decisionsFile = join(root, 'decisions.jsonl');
  writeFileSync(decisionsFile, '');
  const provider = await startFakeAnthropic({ prompts: s.prompts, vars: { cwd }, subagentScripts: s.subagentScripts });
  /** @type {string[]} */
  const problems = [];
  /** @type {string[]} */
  const promptIds = [];
  let toolInputsWithoutPromptId = 0;
  const diagnostics = [];
  const guard = claudeAgentSdkGuardHooks({ mode: s.mode, decisionsFile, onDiagnostic: (/** @type {string} */ l) => diagnostics.push(l) });
  // A recorder beside the guard: the SDK's hook inputs carry prompt_id (what the guard keys prompts on).
  const record = async (/** @type {any} */ input) => {
    if (input.hook_event_name === 'UserPromptSubmit' && typeof input.prompt_id === 'string' && !promptIds.includes(input.prompt_id)) promptIds.push(input.prompt_id);
    if (input.hook_event_name !== 'UserPromptSubmit' && input.agent_id === undefined && typeof input.prompt_id !== 'string') toolInputsWithoutPromptId += 1;
    return {};
  };
  /** @type {Record<string, any[]>} */
  const hooks = {};
  for (const [event, matchers] of Object.entries(guard)) hooks[event] = [...matchers, { hooks: [record] }];
  /** @type {{ result: any, texts: string[] }[]} */
  const prompts = [];
  let sessionId;
  const started = Date.now();
  try {
    for (const [index, p] of s.prompts.entries()) {
      if (p.interrupt) throw new Error('interrupt scenarios are not run through the SDK here');
      const texts = [];
      let result;
      const q = query({
        prompt: `${p.text} [rtfg-prompt ${index + 1}]`,
        options: {
          cwd,
          model: 'claude-sonnet-4-5',
          settingSources: [],
          ...(s.settings ? { settings: s.settings } : {}),
          ...(s.permissionMode ? { permissionMode: s.permissionMode } : { permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true }),
          ...(sessionId ? { resume: sessionId } : {}),
          hooks,
          env: offlineClaudeEnv(home, provider.baseUrl),
          stderr: () => undefined,
        },
      });
      for await (const m of q) {
        sessionId ??= m.session_id;
        if (m.type === 'result') result = m;
        // Where the stop text can reach the caller: a system message, or the result.
        const text = JSON.stringify(m);
        if (text.includes(STOP_TEXT.slice(0, 60))) texts.push(`${m.type}/${m.subtype ?? ''}`);
      }
      prompts.push({ result, texts });
    }
  } catch (err) {
    problems.push(`the SDK run failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await provider.close();
  }
  const seconds = Math.round((Date.now() - started) / 100) / 10;

  // Decisions: the design's, in order.
  const lines = readFileSync(decisionsFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const ours = lines.map((d) => ({ ...d, prompt: promptIds.indexOf(String(d.promptId)) + 1 }));
  const want = s.expectedDecisions.map((/** @type {any} */ d) => ({ prompt: 1, mode: s.mode, ...d }));
  if (JSON.stringify(ours.map(compact)) !== JSON.stringify(want.map(compact)) || ours.some((d) => d.mode !== s.mode)) {
    problems.push(`decisions [${ours.map(compact).join(' ')}] != expected [${want.map(compact).join(' ')}]`);
  }
  if (promptIds.length !== s.prompts.length) problems.push(`${promptIds.length} prompt ids seen on UserPromptSubmit != ${s.prompts.length} prompts`);
  if (toolInputsWithoutPromptId > 0) problems.push(`${toolInputsWithoutPromptId} tool hook inputs without prompt_id`);
  if (diagnostics.length > 0) problems.push(`the guard said: ${diagnostics.join(' | ')}`);

  // The real client: model requests, the reminder, the stop.
  const exp = s.expectedOutcome;
  const main = provider.requests.filter((r) => r.kind === 'main');
  const perPrompt = s.prompts.map((/** @type {any} */ _p, /** @type {number} */ i) => main.filter((r) => r.prompt === i + 1).length);
  if (perPrompt.join(',') !== exp.mainRequests.join(',')) problems.push(`main model requests per prompt [${perPrompt}] != [${exp.mainRequests}]`);
  const reminders = Math.max(0, ...main.map((r) => r.reminderExact));
  const wantReminders = s.mode === 'shadow' ? 0 : (exp.remindersToModel ?? 0);
  if (reminders !== wantReminders) problems.push(`${reminders} reminder copies reached the model != ${wantReminders}`);
  if (main.some((r) => r.stopTextExact > 0)) problems.push('the stop text reached the model');
  const warnings = Math.max(0, ...main.map((r) => r.repetitionWarningExact));
  if (warnings !== (exp.repetitionWarningsToModel ?? 0)) problems.push(`${warnings} identical-call warnings reached the model != ${exp.repetitionWarningsToModel ?? 0}`);
  prompts.forEach((p, i) => {
    const wantReason = exp.terminalReasons?.[i];
    if (!p.result) problems.push(`prompt ${i + 1}: no result message`);
    else if (wantReason !== undefined && p.result.terminal_reason !== undefined && p.result.terminal_reason !== wantReason) {
      problems.push(`prompt ${i + 1}: terminal_reason ${p.result.terminal_reason} != ${wantReason}`);
    }
    const stopped = s.expectedDecisions.some((/** @type {any} */ d) => (d.prompt ?? 1) === i + 1 && d.decision === 'stopped');
    if (stopped && p.texts.length === 0) problems.push(`prompt ${i + 1}: stopped, but the stop text reached no SDK message`);
    if (!stopped && p.texts.length > 0) problems.push(`prompt ${i + 1}: the stop text in [${p.texts}] although the guard did not stop`);
  });
  rmSync(root, { recursive: true, force: true });
  return { name: s.name, mode: s.mode, seconds, decisions: ours.map(compact), stopSeenIn: prompts.flatMap((p) => p.texts), terminal: prompts.map((p) => p.result?.terminal_reason ?? p.result?.subtype), problems };
}

const started = Date.now();
console.error(`conformance: ${scenarios.length} scenarios through @anthropic-ai/claude-agent-sdk ${sdkVersion} (query() with the guard's hook callbacks)`);
if (sdkVersion !== PINNED) console.error(`conformance: expected values were observed with ${PINNED} only; this is ${sdkVersion}`);
const rows = [];
for (const [n, s] of scenarios.entries()) {
  if (Date.now() - started > RUN_BUDGET_MILLIS) {
    rows.push({ name: s.name, mode: s.mode, problems: ['not run: time budget exhausted'], decisions: [] });
    continue;
  }
  console.error(`[${n + 1}/${scenarios.length}] ${s.name} (${s.mode}) ...`);
  const row = await runOne(s);
  rows.push(row);
  console.error(`    ${row.problems.length === 0 ? 'ok' : 'FAIL'} in ${row.seconds}s: ${row.decisions.join(' ') || '(no decisions)'}; ended ${row.terminal.join(', ')}${row.stopSeenIn.length > 0 ? `; stop text in ${row.stopSeenIn.join(', ')}` : ''}`);
  for (const p of row.problems) console.error(`    - ${p}`);
}
const failed = rows.filter((r) => r.problems.length > 0);
const total = Math.round((Date.now() - started) / 100) / 10;
if (process.env.CONFORMANCE_OUT) appendFileSync(join(process.env.CONFORMANCE_OUT, 'claude-agent-sdk.json'), `${JSON.stringify({ sdkVersion, total, rows })}\n`);
for (const r of failed) console.log(`FAIL ${r.name}:\n  - ${r.problems.join('\n  - ')}`);
console.log(`claude-agent-sdk ${sdkVersion}: ${rows.length - failed.length} passed, ${failed.length} failed, ${total}s`);
process.exit(failed.length === 0 ? 0 : 1);

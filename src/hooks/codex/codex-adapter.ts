/**
 * The Codex hook adapter: Codex CLI 0.169.0 command-hook inputs and the session transcript they
 * name in ({@link loadCodexHookInput}, {@link parseCodexHookInput}), hook outputs out. Everything
 * else is the shared runtime.
 *
 * Outputs, as Codex 0.169.0 acts on them (docs/codex.md, verified on the real CLI):
 * - `remind` → `hookSpecificOutput.additionalContext` on the `PostToolUse` that completed the batch
 *   (the model reads it with that call's output, which stays whole), or, when the batch's last
 *   call fired no `PostToolUse` (an MCP failure), on the next call's `PreToolUse`: one model
 *   request later than the design;
 * - `stop` → the stop text as `additionalContext` (for the model) and `systemMessage` (for the
 *   user; `codex exec` 0.169.0 does not print it, but prints every denial's reason on stderr); on a
 *   `PreToolUse` the call is denied with it. No hook output ends a 0.169.0 turn
 *   (`continue: false` on `PostToolUse` only replaces the call's output), so the adapter is
 *   `denyAfterStop`: every later call of the turn is denied at `PreToolUse` with the stop text; no
 *   tool runs after the stop, and the turn ends when the model answers;
 * - `warn_call` → `PreToolUse` `additionalContext`; `deny_call` → `PreToolUse`
 *   `permissionDecision: "deny"` with the reason (the model reads it as the call's result).
 * Shadow prints nothing.
 */
import { open } from 'node:fs/promises';
import { CODEX_FAILURE_CLASSES } from '../../profiles/codex/failure-class.js';
import type { HookAction, HookAdapter, HookEvent } from '../hook-event.js';
import { CODEX_HOOK_EVENTS, parseCodexHookInput } from './hook-input.js';
import type { CodexLoadedInput } from './hook-input.js';

/** Tail sizes tried, in bytes, until the tail holds the turn's start; the last bounds one read. */
const TAIL_BYTES = [256 * 1024, 2 * 1024 * 1024, 16 * 1024 * 1024];

/**
 * The transcript's tail that holds turn `turnId`'s start (whole lines), or the largest tail read
 * when none does; `undefined` when the file cannot be read. Never rejects.
 *
 * @param path - `transcript_path` of the hook input
 * @param turnId - `turn_id` of the hook input
 */
export async function readTranscriptTail(path: string, turnId: string): Promise<string | undefined> {
  let h;
  try {
    h = await open(path, 'r');
    const size = (await h.stat()).size;
    let text = '';
    for (const bytes of TAIL_BYTES) {
      const start = Math.max(0, size - bytes);
      const buf = Buffer.alloc(size - start);
      const { bytesRead } = await h.read(buf, 0, buf.length, start);
      text = buf.toString('utf8', 0, bytesRead);
      // A tail starting mid-file: its first line is cut.
      if (start > 0) text = text.slice(text.indexOf('\n') + 1);
      if (start === 0 || (text.includes('"task_started"') && text.includes(turnId))) break;
    }
    return text;
  } catch {
    return undefined;
  } finally {
    await h?.close().catch(() => undefined);
  }
}

/**
 * The hook input with the transcript text it names, for {@link parseCodexHookInput}. Never rejects.
 *
 * @param input - the parsed stdin JSON
 */
export async function loadCodexHookInput(input: unknown): Promise<CodexLoadedInput> {
  const v = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const path = v.transcript_path;
  const turnId = v.turn_id;
  const read = v.hook_event_name !== 'UserPromptSubmit' && typeof path === 'string' && path !== '' && typeof turnId === 'string' && turnId !== '';
  return { input, transcript: read ? await readTranscriptTail(path, turnId) : undefined };
}

/**
 * The hook output for an action.
 *
 * @param event - the last event of the invocation (its `hookEventName` is the host's event)
 * @param action - the runtime's (strongest) action
 * @returns the object to print, or `undefined` for none
 */
export function formatCodexHookOutput(event: HookEvent, action: HookAction): Record<string, unknown> | undefined {
  const host = event.hookEventName;
  const context = (text: string) => ({ hookSpecificOutput: { hookEventName: host, additionalContext: text } });
  const deny = (text: string) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: text } });
  switch (action.type) {
    case 'none':
      return undefined;
    case 'remind':
    case 'warn_call':
      return host === 'PreToolUse' || host === 'PostToolUse' ? context(action.text) : undefined;
    case 'stop':
      if (host === 'PreToolUse') return { ...deny(action.text), systemMessage: action.text };
      if (host === 'PostToolUse') return { ...context(action.text), systemMessage: action.text };
      return { systemMessage: action.text };
    case 'deny_call':
      return host === 'PreToolUse' ? deny(action.text) : undefined;
  }
}

/** The Codex hook adapter. */
export const CODEX_HOOK_ADAPTER: HookAdapter = {
  profile: 'codex',
  command: 'codex-hook',
  vocabulary: CODEX_FAILURE_CLASSES,
  denyAfterStop: true,
  load: loadCodexHookInput,
  parse: parseCodexHookInput,
  format: formatCodexHookOutput,
  // Codex keeps a hook's systemMessage as a warning of the hook run (`codex exec` 0.169.0 does not print it).
  formatProblem: (text) => ({ systemMessage: text }),
};

/** A TOML basic string. */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/**
 * The `config.toml` tables that register the hook, for `codex-hook --print-settings`: the four
 * events, every tool (`matcher = "*"`), a 30 s timeout.
 *
 * @param command - the hook command line (absolute paths, so it works from any directory)
 */
export function codexHookConfigToml(command: string): string {
  const lines = ['# repeated-tool-failure-guard: Codex hooks. Trust them once with /hooks in the TUI, or run', '# codex exec --dangerously-bypass-hook-trust where the hooks are vetted.'];
  for (const event of CODEX_HOOK_EVENTS) {
    lines.push('', `[[hooks.${event}]]`);
    if (event === 'PreToolUse' || event === 'PostToolUse') lines.push('matcher = "*"');
    lines.push(`[[hooks.${event}.hooks]]`, 'type = "command"', `command = ${tomlString(command)}`, 'timeout = 30');
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The `hooks.json` object that registers the hook (the same tables as JSON).
 *
 * @param command - the hook command line
 */
export function codexHookHooksJson(command: string): Record<string, unknown> {
  const hook = { type: 'command', command, timeout: 30 };
  const hooks: Record<string, unknown[]> = {};
  for (const event of CODEX_HOOK_EVENTS) hooks[event] = [event === 'PreToolUse' || event === 'PostToolUse' ? { matcher: '*', hooks: [hook] } : { hooks: [hook] }];
  return { hooks };
}

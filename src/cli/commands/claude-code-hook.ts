/**
 * `claude-code-hook`: the guard as a Claude Code command hook, for PreToolUse, PostToolUseFailure
 * and PostToolBatch (see `docs/claude-code.md`): the shared hook runtime (`src/hooks/`) with the
 * Claude Code adapter. It reads one hook input on stdin and prints the hook output Claude Code acts
 * on: the reminder (warn, enforce) or the stop (enforce); shadow prints nothing.
 *
 * It always exits 0 and never prints anything but a hook output object on stdout: Claude Code
 * treats exit code 2 as a blocking error, so a usage error of this command (commander's exit 2)
 * would block tool calls; any internal failure is one line on stderr and no decision (fail open).
 */
import { CLAUDE_CODE_HOOK_ADAPTER } from '../../hooks/claude-code/claude-code-adapter.js';
import { runHook } from '../../hooks/hook-runtime.js';
import type { HookIo, HookRunOptions } from '../../hooks/hook-runtime.js';

export { claudeCodeHookSettings } from '../../hooks/claude-code/claude-code-adapter.js';

/**
 * Handle one Claude Code hook invocation. Never rejects; resolves to the exit code (always 0).
 *
 * @param stdinText - the hook input as read from stdin
 * @param options - mode, state directory, decisions file, telemetry callback
 * @param io - stdout gets at most one JSON line (the hook output), stderr a diagnostic on failure
 * @param env - the process environment (mode, directories, `CLAUDE_CODE_ENTRYPOINT`)
 * @param now - wall clock
 */
export function runClaudeCodeHook(
  stdinText: string,
  options: HookRunOptions,
  io: HookIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
  now: () => number = Date.now,
): Promise<number> {
  // Claude Code tells hooks how it was started: `sdk-cli` for `claude -p`, `cli` interactive.
  const route = env.CLAUDE_CODE_ENTRYPOINT?.startsWith('sdk') === true ? 'headless' : 'acp_foreground';
  return runHook(CLAUDE_CODE_HOOK_ADAPTER, stdinText, { route, ...options }, io, env, now);
}

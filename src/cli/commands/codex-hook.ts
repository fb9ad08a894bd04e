/**
 * `codex-hook`: the guard as a Codex CLI 0.169.0 command hook, for UserPromptSubmit, PreToolUse,
 * PostToolUse and Stop (see `docs/codex.md`): the shared hook runtime (`src/hooks/`) with the Codex
 * adapter, which also reads the structured fields of the session transcript the hook input names.
 * It reads one hook input on stdin and prints the hook output Codex acts on: the reminder (warn,
 * enforce) as `additionalContext`, the stop (enforce) as the stop text to the model and the user,
 * then a denial of every later call of the turn. Shadow prints nothing.
 *
 * It always exits 0 and prints at most one JSON object on stdout: Codex treats exit code 2 as a
 * block. Any failure is one line on stderr and no decision (fail open).
 */
import type { GuardMode } from '../../core/failure/types.js';
import { CODEX_HOOK_ADAPTER, codexHookConfigToml, codexHookHooksJson } from '../../hooks/codex/codex-adapter.js';
import { runHook } from '../../hooks/hook-runtime.js';
import type { HookIo, HookRunOptions } from '../../hooks/hook-runtime.js';
import { hookCommandLine } from './hook-command-line.js';

/**
 * Handle one Codex hook invocation. Never rejects; resolves to the exit code (always 0).
 *
 * @param stdinText - the hook input as read from stdin
 * @param options - mode, state directory, decisions file, telemetry endpoint
 * @param io - stdout gets at most one JSON line (the hook output), stderr a diagnostic on failure
 * @param env - the process environment (mode and directories)
 * @param now - wall clock
 */
export function runCodexHook(stdinText: string, options: HookRunOptions, io: HookIo, env: Readonly<Record<string, string | undefined>> = process.env, now = Date.now): Promise<number> {
  // Codex does not tell a hook whether it runs `codex exec` or the interactive CLI.
  return runHook(CODEX_HOOK_ADAPTER, stdinText, { route: 'headless', ...options }, io, env, now);
}

/**
 * What `codex-hook --print-settings` prints: the `config.toml` tables (`toml`) or the `hooks.json`
 * object (`json`) that register this command by absolute paths, so it runs from any directory.
 *
 * @param format - `toml` for `~/.codex/config.toml`, `json` for `~/.codex/hooks.json`
 * @param mode - written into the command as `--mode <mode>` when given
 * @param entry - the CLI's entry file @defaultValue `process.argv[1]`
 */
export function codexHookSettingsText(format: 'toml' | 'json', mode: GuardMode | undefined, entry?: string): string {
  const command = hookCommandLine('codex-hook', mode, entry);
  return format === 'json' ? JSON.stringify(codexHookHooksJson(command), null, 2) : codexHookConfigToml(command).trimEnd();
}

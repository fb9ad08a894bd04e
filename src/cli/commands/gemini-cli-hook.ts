/**
 * `gemini-cli-hook`: the guard as a gemini-cli command hook, for BeforeAgent, BeforeTool,
 * AfterTool, BeforeModel and AfterAgent (see `docs/gemini-cli.md`): the shared hook runtime
 * (`src/hooks/`) with the gemini-cli adapter. It reads one hook input on stdin and prints the hook
 * output gemini-cli acts on: the reminder (warn, enforce) on the batch's last AfterTool, the stop
 * (enforce) on the next BeforeModel; `{}` otherwise.
 *
 * It always exits 0 and always prints exactly one JSON object on stdout: gemini-cli reads a hook's
 * stdout (or, when empty, its stderr) as its answer, takes text that is not JSON from a hook that
 * exited 2 or more as a denial, and a failing hook on BeforeAgent blocks the prompt.
 */
import type { GuardMode } from '../../core/failure/types.js';
import { GEMINI_CLI_HOOK_ADAPTER } from '../../hooks/gemini-cli/gemini-cli-adapter.js';
import { runHook } from '../../hooks/hook-runtime.js';
import type { HookIo, HookRunOptions } from '../../hooks/hook-runtime.js';
import { hookCommandLine } from './hook-command-line.js';

export { geminiCliHookSettings } from '../../hooks/gemini-cli/gemini-cli-adapter.js';

/**
 * Handle one gemini-cli hook invocation. Never rejects; resolves to the exit code (always 0).
 *
 * @param stdinText - the hook input as read from stdin
 * @param options - mode, state directory, decisions file, telemetry callback
 * @param io - stdout gets exactly one JSON line (the hook output, `{}` for none), stderr a diagnostic on failure
 * @param env - the process environment (mode and directories)
 * @param now - wall clock
 */
export async function runGeminiCliHook(
  stdinText: string,
  options: HookRunOptions,
  io: HookIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
  now: () => number = Date.now,
): Promise<number> {
  let printed = false;
  const code = await runHook(GEMINI_CLI_HOOK_ADAPTER, stdinText, options, { out: (l) => ((printed = true), io.out(l)), err: io.err }, env, now);
  if (!printed) io.out('{}');
  return code;
}

/**
 * The command line that runs this hook from any directory (see {@link hookCommandLine}).
 *
 * @param mode - written as `--mode <mode>` when given
 * @param entry - the CLI's entry file @defaultValue `process.argv[1]`
 */
export function thisCommandLine(mode: GuardMode | undefined, entry?: string): string {
  return hookCommandLine('gemini-cli-hook', mode, entry);
}

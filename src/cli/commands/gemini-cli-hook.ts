/**
 * `gemini-cli-hook`: the guard as a gemini-cli command hook, for BeforeAgent, BeforeTool,
 * AfterTool, BeforeModel and AfterAgent (see `docs/gemini-cli.md`): the shared hook runtime
 * (`src/hooks/`) with the gemini-cli adapter. It reads one hook input on stdin and prints the hook
 * output gemini-cli acts on: the reminder (warn, enforce) on the batch's last AfterTool, the stop
 * (enforce) on the next BeforeModel; `{}` otherwise. The settings `--print-settings` prints run the
 * hook's own small entry, `dist/bin/gemini-cli-hook.cjs` (one bundled CommonJS file: an event costs
 * little more than a Node start, bench H1), by absolute paths.
 *
 * It always exits 0 and always prints exactly one JSON object on stdout: gemini-cli reads a hook's
 * stdout (or, when empty, its stderr) as its answer, takes text that is not JSON from a hook that
 * exited 2 or more as a denial, and a failing hook on BeforeAgent blocks the prompt.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseGuardMode } from '../../core/mode.js';
import { GEMINI_CLI_HOOK_ADAPTER, geminiCliHookSettings } from '../../hooks/gemini-cli/gemini-cli-adapter.js';
import { runHook } from '../../hooks/hook-runtime.js';
import type { HookIo, HookRunOptions } from '../../hooks/hook-runtime.js';
import { packageRoot, readAll, shellWord } from './hook-entry.js';

export { geminiCliHookSettings } from '../../hooks/gemini-cli/gemini-cli-adapter.js';

/** The hook's own entry, relative to the package root: what the printed settings run. */
export const GEMINI_CLI_HOOK_ENTRY = 'dist/bin/gemini-cli-hook.cjs';

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
 * The hook command line for the settings: this Node binary and the hook's own entry, both
 * absolute, so it runs in whatever directory gemini-cli runs and needs no `npx` lookup.
 *
 * @param mode - written as `--mode <mode>` when valid
 * @param root - the installed package's root @defaultValue the running script's
 * @param node - the Node binary @defaultValue this one
 * @returns `undefined` when the running script is not inside the package
 */
export function geminiCliHookCommand(mode: string | undefined, root = packageRoot(), node = process.execPath): string | undefined {
  if (root === undefined) return undefined;
  const parsed = parseGuardMode(mode);
  return [node, join(root, GEMINI_CLI_HOOK_ENTRY), ...(parsed === undefined ? [] : ['--mode', parsed])].map(shellWord).join(' ');
}

/**
 * The whole `gemini-cli-hook` command: options, then `--print-settings` or one hook invocation.
 * Unknown options are ignored, and even a usage error answers `{}` with exit 0 (a failing
 * BeforeAgent hook blocks the prompt).
 *
 * @param argv - the arguments after the command name
 * @param io - where to write
 * @param stdin - the hook input
 * @returns the exit code: 0, or 1 when `--print-settings` cannot find the installed package
 */
export async function runGeminiCliHookCommand(argv: readonly string[], io: HookIo, stdin: AsyncIterable<Buffer | string> = process.stdin): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: { mode: { type: 'string' }, 'state-dir': { type: 'string' }, 'decisions-file': { type: 'string' }, 'print-settings': { type: 'boolean' } },
    strict: false,
    allowPositionals: true,
  });
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (values['print-settings'] === true) {
    const command = geminiCliHookCommand(str(values.mode));
    if (command === undefined) {
      io.err('repeated-tool-failure-guard gemini-cli-hook: cannot find the installed package from this script; install it (npm install -g repeated-tool-failure-guard) and run --print-settings from there');
      return 1;
    }
    io.out(JSON.stringify(geminiCliHookSettings(command), null, 2));
    io.err(
      [
        'Merge the "hooks" above into your gemini-cli user settings, ~/.gemini/settings.json (gemini-cli runs command hooks by default).',
        `The command runs this installation (${packageRoot() ?? '?'}) with this Node, from any directory; keep both where they are.`,
      ].join('\n'),
    );
    return 0;
  }
  return runGeminiCliHook(await readAll(stdin), { mode: parseGuardMode(str(values.mode)), stateDir: str(values['state-dir']), decisionsFile: str(values['decisions-file']) }, io);
}

/**
 * The command line a host's hook settings run: this Node and this CLI's entry file by absolute
 * paths (symlinks resolved, as `npx` and `node_modules/.bin` leave them), then the hook command
 * and the mode, so the settings work whatever directory the host runs the hook in.
 */
import { realpathSync } from 'node:fs';
import type { GuardMode } from '../../core/failure/types.js';

/** A single-quoted POSIX shell word. */
function shellWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command line that runs `command` of this CLI from any directory.
 *
 * @param command - the hook command, e.g. `gemini-cli-hook`
 * @param mode - written as `--mode <mode>` when given
 * @param entry - the CLI's entry file @defaultValue `process.argv[1]`
 * @param node - the Node binary @defaultValue `process.execPath`
 */
export function hookCommandLine(command: string, mode: GuardMode | undefined, entry: string = process.argv[1] ?? '', node: string = process.execPath): string {
  let file = entry;
  try {
    file = realpathSync(entry);
  } catch {
    // keep the path as given
  }
  return [node, file].map(shellWord).join(' ') + ` ${command}` + (mode === undefined ? '' : ` --mode ${mode}`);
}

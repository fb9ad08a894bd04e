/**
 * What the hook commands share to print a settings fragment that works from any directory: the
 * installed package's root, from the running script, and shell words for its command line; and
 * reading the hook input. No agent-specific code, so each hook's one-file entry
 * (`dist/bin/<agent>-hook.cjs`) bundles only its own adapter.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The package's name, to find its root from the running script. */
const PACKAGE_NAME = 'repeated-tool-failure-guard';

/** A single-quoted shell word (only when needed). */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The package root of the running script (`process.argv[1]`, symbolic links resolved), or
 * `undefined` when it is not inside the package.
 */
export function packageRoot(script: string | undefined = process.argv[1]): string | undefined {
  if (script === undefined) return undefined;
  let dir: string;
  try {
    dir = dirname(realpathSync(script));
  } catch {
    return undefined;
  }
  for (;;) {
    const manifest = join(dir, 'package.json');
    try {
      if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME) return dir;
    } catch {
      // no manifest here, or not ours
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** The whole of a hook's standard input, as text. */
export async function readAll(stdin: AsyncIterable<Buffer | string>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

// @ts-check
/**
 * The code block README.md marks with `<!-- example: <name> ... -->`: what the conformance runs
 * execute as written.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const readme = join(dirname(fileURLToPath(import.meta.url)), '..', 'README.md');

/**
 * @param {string} name the example's name in its marker
 * @returns {string} the block's text (without the fences)
 */
export function readmeBlock(name) {
  const text = readFileSync(readme, 'utf8');
  const at = text.indexOf(`<!-- example: ${name} `);
  if (at < 0) throw new Error(`README.md has no example marked ${name}`);
  const block = /```[a-z]*\n([\s\S]*?)```/.exec(text.slice(at));
  if (block === null) throw new Error(`README.md: no code block after the ${name} marker`);
  return block[1] ?? '';
}

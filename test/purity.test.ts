import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const CORE = fileURLToPath(new URL('../src/core/', import.meta.url));
const coreFiles = readdirSync(CORE, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));

it('the core folder holds both reducers, their types and the buckets', () => {
  expect(coreFiles).toEqual(
    expect.arrayContaining(['failure/reducer.ts', 'failure/types.ts', 'repetition/reducer.ts', 'repetition/types.ts', 'buckets.ts', 'mode.ts']),
  );
});

it.each(coreFiles)(
  'core/%s is pure: imports only core modules, nothing from OpenTelemetry or Node, reads no clock and no randomness',
  (file) => {
    const text = readFileSync(CORE + file, 'utf8');
    const imports = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1] ?? '');
    const depth = file.split('/').length - 1;
    for (const i of imports) {
      expect(i.startsWith('.'), `${file} imports ${i}`).toBe(true);
      // Never above src/core/: at most `depth` levels of `../`.
      expect(i.split('/').filter((p) => p === '..').length, `${file} imports ${i}`).toBeLessThanOrEqual(depth);
    }
    expect(text).not.toMatch(/Date\.now|new Date|Math\.random|performance\.now|process\./);
  },
);

import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const source = (f: string) => readFileSync(new URL(`../src/${f}`, import.meta.url), 'utf8');

it.each(['reducer.ts', 'repetition-reducer.ts', 'types.ts', 'buckets.ts'])(
  '%s is pure: imports nothing from OpenTelemetry or Node, reads no clock and no randomness',
  (file) => {
    const text = source(file);
    const imports = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1] ?? '');
    for (const i of imports) expect(i.startsWith('./'), `${file} imports ${i}`).toBe(true);
    expect(text).not.toMatch(/Date\.now|new Date|Math\.random|performance\.now|process\./);
  },
);

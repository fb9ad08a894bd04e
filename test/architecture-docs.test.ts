import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const architecture = readFileSync(new URL('../docs/architecture.md', import.meta.url), 'utf8');
const rooms = readdirSync(SRC, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

describe('docs/architecture.md matches src/', () => {
  it('names at least the nine rooms', () => {
    expect(rooms.sort()).toEqual(expect.arrayContaining(['cli', 'core', 'engine', 'otel', 'otlp', 'profiles', 'replay', 'report', 'serve']));
  });

  it.each(rooms)('src/%s/ is in the diagram and has a README that says what it may import', (room) => {
    expect(architecture).toContain(`${room}/`);
    const readme = `${SRC}${room}/README.md`;
    expect(existsSync(readme)).toBe(true);
    expect(readFileSync(readme, 'utf8')).toMatch(/May import|Nothing imports/);
  });
});

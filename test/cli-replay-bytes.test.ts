/**
 * The CLI `replay` (the built bundle) reads files and standard input as bytes: on bytes holding
 * multi-byte characters and invalid UTF-8, it prints what it prints and exits as it exits for the
 * same file written as the valid UTF-8 of its decoded text (invalid sequences as U+FFFD), which is
 * what reading the file as UTF-8 text gave. Decisions, report and exit code; errors with the same
 * file:line:column.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturePath } from './helpers/recorded.js';

// `npm test` builds first (pretest), so the CLI is tested as users run it.
const MAIN = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;

/** Invalid and multi-byte UTF-8: a lone lead byte, 0xFF, an overlong '/', a UTF-8 surrogate, é, 😀, a truncated 😀. */
const ODD = Buffer.from([0xc3, 0x20, 0xff, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80, 0xf0, 0x9f, 0x98]);

/** The fixture with `ODD` in a new string attribute of every object's attributes. */
function oddCapture(name: string): Buffer {
  const parts = readFileSync(fixturePath(name), 'utf8').split('"attributes": {');
  const out: Buffer[] = [Buffer.from(parts[0] as string)];
  for (const p of parts.slice(1)) out.push(Buffer.from('"attributes": {"x.odd": "'), ODD, Buffer.from(/^\s*\}/.test(p) ? '"' : '", '), Buffer.from(p));
  return Buffer.concat(out);
}

/** Run `replay args… in.json` in a directory holding `in.json` = `contents` (or read from standard input with `-`). */
function replay(contents: Buffer, viaStdin: boolean, ...args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'rtfg-bytes-'));
  mkdirSync(join(dir, 'd'));
  writeFileSync(join(dir, 'd', 'in.json'), contents);
  const r = spawnSync(process.execPath, [MAIN, 'replay', ...args, viaStdin ? '-' : 'd/in.json'], { cwd: dir, timeout: 30_000, input: viaStdin ? contents : undefined });
  return { code: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

const asText = (b: Buffer) => Buffer.from(b.toString('utf8'), 'utf8');

describe('replay of bytes = replay of their decoded text', () => {
  it.each([
    ['acp-enforce', ['--format', 'json']],
    ['acp-shadow-drain', ['--compare']],
    ['headless-yolo', ['--mode', 'enforce']],
  ])('%s %j, from a file and from standard input', (name, args) => {
    const bytes = oddCapture(name);
    expect(bytes.equals(asText(bytes))).toBe(false); // the bytes really are not valid UTF-8
    for (const viaStdin of [false, true]) {
      const fromBytes = replay(bytes, viaStdin, ...args);
      const fromText = replay(asText(bytes), viaStdin, ...args);
      expect(fromBytes).toEqual(fromText);
      expect(fromBytes.code).toBe(0); // judged, not refused
      expect(fromBytes.stderr).not.toMatch(/^error/m);
      expect(fromBytes.stdout.length).toBeGreaterThan(0);
    }
  });

  it.each([
    ['an invalid byte between objects', Buffer.concat([Buffer.from('{"resourceSpans": []}\n  é'), ODD])],
    ['invalid JSON after invalid UTF-8 on its line', Buffer.concat([Buffer.from('{"x": "'), ODD, Buffer.from('"}{"resourceSpans": [,]}\n')])],
    ['a truncated object after a truncated sequence', Buffer.concat([Buffer.from('{"resourceSpans": []}'), Buffer.from([0xf0, 0x9f]), Buffer.from('\n {"a": [')])],
  ])('%s: the same error, position and exit code', (_desc, bytes) => {
    for (const viaStdin of [false, true]) {
      const fromBytes = replay(bytes, viaStdin);
      expect(fromBytes).toEqual(replay(asText(bytes), viaStdin));
      expect(fromBytes.code).toBe(2);
      expect(fromBytes.stderr).toMatch(/:\d+:\d+: /);
    }
  });
});

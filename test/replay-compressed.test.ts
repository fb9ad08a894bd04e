/**
 * A fleet's files (issue 35, part 4): `replay` (and `--report`) read gzip- and zstd-compressed
 * files and whole directories of rotated files as the Collector's file exporter writes them, and
 * decide exactly as on the plain files.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { runReplay } from '../src/cli/commands/replay.js';
import { compressionOf, decompressTelemetry, expandTelemetryPaths } from '../src/replay/input-files.js';

const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;
const QWEN = join(FIXTURES, 'qwen-code-0.24.4/acp-shadow-drain.outfile.json');
const CLAUDE = join(FIXTURES, 'claude-code-2.1.328/bash-git-loop-shadow.otlp.jsonl');
const GENAI = join(FIXTURES, 'genai/pydantic-ai-2.68.0/failure-loop.v2.otlp.jsonl');
const GENAI_ZST = join(FIXTURES, 'compressed/pydantic-ai-failure-loop.v2.otlp.jsonl.zst');

const dir = mkdtempSync(join(tmpdir(), 'rtfg-compressed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function replayJson(files: readonly string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runReplay(files, { profile: 'auto', format: 'json', compare: false }, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('compressed files and directories', () => {
  it('tells gzip and zstd by their first bytes and decompresses both (zstd without Node support: fzstd)', () => {
    const plain = readFileSync(GENAI);
    expect(compressionOf(gzipSync(plain))).toBe('gzip');
    expect(compressionOf(readFileSync(GENAI_ZST))).toBe('zstd');
    expect(compressionOf(plain)).toBe('none');
    expect(decompressTelemetry(readFileSync(GENAI_ZST)).equals(plain)).toBe(true);
    // Two gzip members, as an appending writer leaves them.
    const two = Buffer.concat([gzipSync(plain.subarray(0, 1000)), gzipSync(plain.subarray(1000))]);
    expect(decompressTelemetry(two).equals(plain)).toBe(true);
  });

  it.each([
    ['gzip', () => gzipSync(Buffer.alloc(4 << 20))],
    ['zstd', () => readFileSync(GENAI_ZST)],
  ])('%s that decompresses past the bound is refused (ERR_BUFFER_TOO_LARGE), never held whole', (_kind, make) => {
    const bytes = make();
    const within = decompressTelemetry(bytes).length;
    expect(() => decompressTelemetry(bytes, within - 1)).toThrow(expect.objectContaining({ code: 'ERR_BUFFER_TOO_LARGE' }));
    expect(decompressTelemetry(bytes, within).length).toBe(within);
  });

  it('a directory of rotated files, plain, .gz and .zst, in name order, replays as the plain files do', async () => {
    const fleet = join(dir, 'fleet');
    mkdirSync(join(fleet, 'genai'), { recursive: true });
    copyFileSync(QWEN, join(fleet, 'a-qwen.json'));
    writeFileSync(join(fleet, 'b-claude.json.gz'), gzipSync(readFileSync(CLAUDE)));
    copyFileSync(GENAI_ZST, join(fleet, 'genai', 'c-genai.jsonl.zst'));
    writeFileSync(join(fleet, 'notes.txt'), 'not telemetry');
    expect(expandTelemetryPaths([fleet]).map((p) => p.slice(fleet.length + 1))).toEqual(['a-qwen.json', 'b-claude.json.gz', 'genai/c-genai.jsonl.zst']);
    const plain = await replayJson([QWEN, CLAUDE, GENAI]);
    const compressed = await replayJson([fleet]);
    expect(plain.out.length).toBeGreaterThan(5);
    expect(compressed.out).toEqual(plain.out);
    expect(compressed.code).toBe(plain.code);
  });

  it('a directory without telemetry files and a corrupt compressed file are user errors, named, with no data', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    await expect(replayJson([empty])).rejects.toThrow(/no telemetry file/);
    const bad = join(dir, 'bad.json.gz');
    writeFileSync(bad, Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.from('do-not-leak-4412 not gzip')]));
    const err = await replayJson([bad]).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('bad.json.gz: cannot read');
    expect((err as Error).message).not.toContain('do-not-leak');
  });
});

/**
 * What `replay` and `--report` read: telemetry files as the OpenTelemetry Collector's file exporter
 * writes them, plain or compressed, one by one or as whole directories of rotated files.
 *
 * - A directory stands for every telemetry file under it (`*.json`, `*.jsonl`, each optionally
 *   `.gz` or `.zst`), in name order (the exporter's rotated names sort by time), recursively.
 * - A file is decompressed by its content, not its name: gzip (magic `1f 8b`, Node's `zlib`) and
 *   Zstandard (magic `28 b5 2f fd`: Node's `zlib` where it has zstd, Node ≥ 22.15 / 23.8, else the
 *   `fzstd` package); anything else is read as it is.
 *
 * Files are loaded one at a time, when the reader reaches them ({@link TelemetryFileSource.load}),
 * so the bytes held at once are one file's, decompressed, never the whole input's.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { decompress as fzstdDecompress } from 'fzstd';

/** Names of telemetry files inside a directory. */
export const TELEMETRY_FILE_NAME = /\.(json|jsonl)(\.gz|\.zst)?$/;

const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return magic.every((b, i) => bytes[i] === b);
}

/** How a file's bytes are compressed, from their first bytes. */
export function compressionOf(bytes: Uint8Array): 'gzip' | 'zstd' | 'none' {
  if (startsWith(bytes, GZIP_MAGIC)) return 'gzip';
  if (startsWith(bytes, ZSTD_MAGIC)) return 'zstd';
  return 'none';
}

type ZstdSync = (buf: Uint8Array, options?: { maxOutputLength?: number }) => Buffer;

/** The most one input decompresses to, in bytes (what replay reads of one uncompressed input). */
export const MAX_DECOMPRESSED_BYTES = 2 ** 31 - 1;

/** Node's own zstd (22.15+, 23.8+), when this Node has it. */
const nodeZstd = (zlib as unknown as { zstdDecompressSync?: ZstdSync }).zstdDecompressSync;

/**
 * The file's bytes, decompressed when they are gzip or Zstandard (several concatenated members or
 * frames, as appending writers make them, included), at most `maxBytes` of output.
 *
 * @param maxBytes - the most the output may hold, in bytes. @defaultValue {@link MAX_DECOMPRESSED_BYTES}
 * @throws Error with the system code (`ENOENT`, `EACCES`…), a corrupt-stream message without data,
 *   or a `RangeError` coded `ERR_BUFFER_TOO_LARGE` when the output would pass `maxBytes`
 */
export function decompressTelemetry(bytes: Buffer, maxBytes: number = MAX_DECOMPRESSED_BYTES): Buffer {
  switch (compressionOf(bytes)) {
    case 'gzip':
      return zlib.gunzipSync(bytes, { maxOutputLength: maxBytes });
    case 'zstd': {
      if (nodeZstd !== undefined) return nodeZstd(bytes, { maxOutputLength: maxBytes });
      const out = fzstdDecompress(bytes);
      if (out.length > maxBytes) throw Object.assign(new RangeError(`decompressed data larger than ${maxBytes} bytes`), { code: 'ERR_BUFFER_TOO_LARGE' });
      return Buffer.from(out);
    }
    case 'none':
      return bytes;
  }
}

/** One input file, loaded when the reader reaches it. */
export interface TelemetryFileSource {
  readonly file: string;
  /** Read and decompress the file now. */
  load(): Buffer;
}

/**
 * The files an argument list stands for: each directory replaced by its telemetry files (name
 * order, recursively), each file kept as given.
 *
 * @throws Error naming the path and the system code when a path cannot be read, or a directory holds no telemetry file
 */
export function expandTelemetryPaths(paths: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string, found: string[]): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path, found);
      else if (e.isFile() && TELEMETRY_FILE_NAME.test(e.name)) found.push(path);
    }
  };
  for (const p of paths) {
    if (!statSync(p).isDirectory()) {
      out.push(p);
      continue;
    }
    const found: string[] = [];
    walk(p, found);
    if (found.length === 0) throw new Error(`${p}: no telemetry file (*.json, *.jsonl, optionally .gz or .zst) in this directory`);
    out.push(...found);
  }
  return out;
}

/** A lazily loaded, decompressed file. */
export function telemetryFileSource(file: string): TelemetryFileSource {
  return { file, load: () => decompressTelemetry(readFileSync(file)) };
}

/**
 * gemini-cli 0.61.0's session transcript, read for the batch its hooks cannot see whole: the file
 * every hook input names in `transcript_path` (`~/.gemini/tmp/<project>/chats/session-….jsonl`).
 *
 * What gemini-cli writes there (its `ChatRecordingService`, checked on the real CLI): one JSON
 * record a line, appended; a message is appended again, with the same `id`, each time it changes.
 * A model turn is a `{"type":"gemini","id":…}` record; once every call of the turn settled and
 * before the next model request (so before `BeforeModel` and `AfterAgent`), gemini-cli appends it
 * with `toolCalls: [{ id, name, args, result, status, … }]`, `status` one of `success`, `error`,
 * `cancelled`, for every call the model asked for: also those refused before they ran (invalid
 * arguments, an unknown tool, a policy or hook denial: `error`; a user's rejection: `cancelled`),
 * which fire no `AfterTool` hook.
 *
 * Only each call's `name` and `status` and a digest of the turn's `id` are taken; arguments, results
 * and texts are parsed in memory with the line that holds them and dropped. The file is read from
 * its end, a window at a time, up to {@link MAX_TRANSCRIPT_TAIL_BYTES}.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { HookBatchListing, HookListedCall } from '../hook-event.js';

/** The most bytes read from a transcript's end to find its latest model turn with calls. */
export const MAX_TRANSCRIPT_TAIL_BYTES = 32 * 1024 * 1024;
/** The first window read from the end (a batch's records usually fit). */
const FIRST_WINDOW_BYTES = 256 * 1024;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A turn's name in the guard's state: a digest of gemini-cli's message id. */
export function transcriptTurnDigest(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 32);
}

const STATUSES: ReadonlySet<string> = new Set(['success', 'error', 'cancelled']);

/**
 * The latest model turn with calls among complete transcript lines (the last one wins), or
 * `undefined` when none is among them. Pure.
 *
 * @param lines - whole lines, in file order
 * @returns the listing, or a `malformed` one when the turn's record is not what gemini-cli writes
 */
export function latestListedTurn(lines: readonly string[]): HookBatchListing | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    // Cheap test first: a record without the key cannot be a turn with calls.
    if (!line.includes('"toolCalls"')) continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      return { kind: 'unreadable', reason: 'malformed' };
    }
    if (!isObject(record) || record.type !== 'gemini' || !Array.isArray(record.toolCalls)) continue;
    if (typeof record.id !== 'string' || record.id === '') return { kind: 'unreadable', reason: 'malformed' };
    const calls: HookListedCall[] = [];
    for (const c of record.toolCalls as unknown[]) {
      if (!isObject(c) || typeof c.name !== 'string' || c.name === '') return { kind: 'unreadable', reason: 'malformed' };
      const status = typeof c.status === 'string' && STATUSES.has(c.status) ? (c.status as HookListedCall['status']) : 'other';
      calls.push({ toolName: c.name, status });
    }
    return { kind: 'listed', turn: transcriptTurnDigest(record.id), calls };
  }
  return undefined;
}

/**
 * Reads the latest model turn with calls from a gemini-cli transcript. Never rejects.
 *
 * @param path - the hook input's `transcript_path`
 * @param maxBytes - the most bytes read from the end @defaultValue {@link MAX_TRANSCRIPT_TAIL_BYTES}
 * @returns `listed` (with `turn` undefined when the transcript has no turn with calls yet), or
 *   `unreadable` with a closed reason
 */
export async function readGeminiCliTranscript(path: unknown, maxBytes: number = MAX_TRANSCRIPT_TAIL_BYTES): Promise<HookBatchListing> {
  if (typeof path !== 'string' || path === '') return { kind: 'unreadable', reason: 'no_record' };
  let handle;
  try {
    // Non-blocking: a FIFO planted at the path must not hang the hook.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return { kind: 'unreadable', reason: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no_record' : 'read_error' };
  }
  try {
    const { size } = await handle.stat().then((st) => (st.isFile() ? st : { size: -1 }));
    if (size < 0) return { kind: 'unreadable', reason: 'not_a_file' };
    let window = Math.min(size, FIRST_WINDOW_BYTES, maxBytes);
    for (;;) {
      const start = size - window;
      const buffer = Buffer.alloc(window);
      let filled = 0;
      while (filled < window) {
        const { bytesRead } = await handle.read(buffer, filled, window - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      const lines = buffer.subarray(0, filled).toString('utf8').split('\n');
      // The text after the last newline is a line still being written (or ''): not yet a record.
      lines.pop();
      // A window that starts inside the file starts inside a line: that line is read with the next window.
      const found = latestListedTurn(start === 0 ? lines : lines.slice(1));
      if (found !== undefined) return found;
      if (start === 0) return { kind: 'listed', turn: undefined, calls: [] };
      if (window >= maxBytes) return { kind: 'unreadable', reason: 'too_large' };
      window = Math.min(size, window * 4, maxBytes);
    }
  } catch {
    return { kind: 'unreadable', reason: 'read_error' };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

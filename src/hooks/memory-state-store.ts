/**
 * Per-session hook state in memory, for a resident hook endpoint (Claude Code's `type: "http"`
 * hooks answered by `serve`): the same {@link HookSessionStore} contract as the state files, without
 * files, locks or lost records.
 *
 * An update is one synchronous read-change-write on the event loop, so two events of one session
 * never interleave (no lock to time out on, no record lost). Bounded: at most `maxSessions`
 * sessions (the least recently updated is dropped first when a new one arrives: it then starts
 * afresh, which can only delay a decision, never make one up), each dropped after `maxAgeMillis`
 * without an update, and a state larger than `maxStateBytes` is not kept (`discarded: too_large`,
 * as a state file of that size).
 */
import type { HookSessionStore, HookStateRead } from './state-store.js';

/** Options of {@link MemoryHookStateStore}. */
export interface MemoryHookStateStoreOptions {
  /** Sessions kept at most. @defaultValue 10000 */
  readonly maxSessions?: number;
  /** A session untouched this long is dropped, in milliseconds. @defaultValue 24 h */
  readonly maxAgeMillis?: number;
  /** Largest state kept, in bytes of its JSON. @defaultValue 1 MiB */
  readonly maxStateBytes?: number;
  /** Wall clock. @defaultValue `Date.now` */
  readonly now?: () => number;
}

interface Entry {
  readonly state: unknown;
  readonly updatedMillis: number;
  readonly discarded: HookStateRead['discarded'];
}

/** Per-session hook state in memory, bounded in count, size and age. */
export class MemoryHookStateStore implements HookSessionStore {
  private readonly _sessions = new Map<string, Entry>();
  private readonly _maxSessions: number;
  private readonly _maxAgeMillis: number;
  private readonly _maxStateBytes: number;
  private readonly _now: () => number;

  /** @param options - bounds and clock */
  constructor(options: MemoryHookStateStoreOptions = {}) {
    this._maxSessions = Math.max(1, options.maxSessions ?? 10_000);
    this._maxAgeMillis = options.maxAgeMillis ?? 24 * 60 * 60 * 1000;
    this._maxStateBytes = options.maxStateBytes ?? 1024 * 1024;
    this._now = options.now ?? Date.now;
  }

  /** Sessions held now. */
  get size(): number {
    return this._sessions.size;
  }

  /** See {@link HookSessionStore.update}; never lost, so never `undefined` unless `change` returns it. */
  update<T>(sessionId: string, change: (read: HookStateRead) => readonly [unknown, T]): Promise<T | undefined> {
    const now = this._now();
    const held = this._sessions.get(sessionId);
    const fresh = held !== undefined && now - held.updatedMillis <= this._maxAgeMillis;
    const [next, result] = change({ current: fresh ? held.state : undefined, discarded: fresh ? held.discarded : undefined, lostRecords: 0 });
    // Kept as JSON text's parse: the state stays plain data, as between hook processes.
    const text = JSON.stringify(next);
    this._sessions.delete(sessionId);
    if (text.length > this._maxStateBytes) {
      this._sessions.set(sessionId, { state: undefined, updatedMillis: now, discarded: 'too_large' });
    } else {
      this._sessions.set(sessionId, { state: JSON.parse(text) as unknown, updatedMillis: now, discarded: undefined });
    }
    // Map order is insertion order: the first key is the least recently updated session.
    while (this._sessions.size > this._maxSessions) this._sessions.delete(this._sessions.keys().next().value as string);
    return Promise.resolve(result);
  }

  /** See {@link HookSessionStore.sweep}. */
  sweep(): Promise<number> {
    const cutoff = this._now() - this._maxAgeMillis;
    let removed = 0;
    for (const [id, entry] of this._sessions) {
      if (entry.updatedMillis >= cutoff) break; // insertion order = update order
      this._sessions.delete(id);
      removed += 1;
    }
    return Promise.resolve(removed);
  }
}

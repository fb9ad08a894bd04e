/**
 * The per-key state table both engines keep (prompts for the failure guard, sessions for the
 * repetition breaker): entries in creation order, a capacity trimmed oldest first, clock stamps as
 * small integers, idle lookup, and tombstones for keys that must not come back.
 *
 * Tombstones, when enabled: a finished key is remembered in a bounded set (its late records are
 * dropped while it is remembered); an evicted key is remembered in an {@link EvictedIdFilter}, so it
 * is never admitted again however many keys are evicted after it, in a fixed number of bytes. A
 * false positive of the filter refuses a key that was never evicted: that key is never tracked (a
 * missed prompt, never a wrong action). Internal.
 */
import { BoundedSet } from './bounded.js';
import { EvictedIdFilter } from './evicted-id-filter.js';

/** What the registry needs of an entry. */
export interface RegistryEntry {
  /** Last activity, in milliseconds since the registry's first stamp (see {@link PromptRegistry.stamp}). */
  lastSeenMillis: number;
  /** Estimated bytes the entry holds, as last set by {@link PromptRegistry.weigh}. */
  heldBytes?: number;
  /**
   * Whether the table holds the entry: set when {@link PromptRegistry.admit} creates it, cleared
   * when it leaves (trimmed, weighed out, forgotten). Creators initialise it to `false`.
   */
  held?: boolean;
}

/** Tombstone settings of a {@link PromptRegistry}. */
export interface RegistryTombstones {
  /** Finished keys remembered (their late records dropped); the oldest are forgotten beyond it. */
  readonly finishedCapacity: number;
  /** Bytes of the evicted-key filter (allocated on the first eviction). */
  readonly evictedFilterBytes: number;
  /** Hash seed of the evicted-key filter; random when absent. */
  readonly seed?: number;
}

/** Settings of a {@link PromptRegistry}. */
export interface PromptRegistrySettings<E extends RegistryEntry = RegistryEntry> {
  /** Entries held at once; creating one more trims the oldest (an eighth at a time). Minimum `1`. */
  readonly maxEntries: number;
  /** Clock in milliseconds. A non-finite reading counts as the previous stamp. */
  readonly now: () => number;
  /** Remember finished and evicted keys; absent: a dropped key may come back fresh. */
  readonly tombstones?: RegistryTombstones;
  /** Most estimated bytes held by all entries (see {@link PromptRegistry.weigh}); absent: no byte bound. */
  readonly maxBytes?: number;
  /**
   * Entries that look like junk (for prompts: never opened a batch): at capacity they are trimmed
   * first, oldest first, before any other entry. Absent: the oldest entries, whatever they hold.
   */
  readonly disposable?: (entry: E) => boolean;
}

/** Result of {@link PromptRegistry.admit}. */
export type Admission<E> =
  | { readonly status: 'existing' | 'created'; readonly entry: E; readonly trimmed: ReadonlyArray<readonly [string, E]> }
  | { readonly status: 'finished' | 'evicted' | 'refused'; readonly entry: undefined; readonly trimmed: readonly [] };

const NOTHING: readonly [] = [];

/** A bounded, insertion-ordered table of per-key state with tombstones. */
export class PromptRegistry<E extends RegistryEntry> {
  private readonly _settings: PromptRegistrySettings<E>;
  private readonly _entries = new Map<string, E>();
  private readonly _finished: BoundedSet<string> | undefined;
  private readonly _evicted: EvictedIdFilter | undefined;
  private _epoch: number | undefined;
  private _lastStamp = 0;
  private _bytes = 0;
  /**
   * The last entry {@link PromptRegistry.get} found, and its key: the records of one batch come one
   * after another, so most lookups are of the key just looked up (then no hash-table probe, whose
   * memory is cold when many keys are held). Cleared whenever an entry leaves the table.
   */
  private _lastKey: string | undefined;
  private _lastEntry: E | undefined;

  constructor(settings: PromptRegistrySettings<E>) {
    this._settings = settings;
    const t = settings.tombstones;
    this._finished = t === undefined ? undefined : new BoundedSet(t.finishedCapacity);
    this._evicted = t === undefined ? undefined : new EvictedIdFilter(t.evictedFilterBytes, t.seed);
  }

  /** Entries held now. */
  get size(): number {
    return this._entries.size;
  }

  /** Estimated bytes held by all entries. */
  get heldBytes(): number {
    return this._bytes;
  }

  /**
   * Set the entry's estimated bytes. When the total passes `maxBytes`, the oldest other entries are
   * removed until it fits, and returned: the caller records them as evicted. `undefined` when
   * nothing was removed (the common case, on the hot path: no allocation).
   */
  weigh(key: string, entry: E, bytes: number): Array<readonly [string, E]> | undefined {
    if (entry.heldBytes === bytes || this.get(key) !== entry) return undefined;
    this._bytes += bytes - (entry.heldBytes ?? 0);
    entry.heldBytes = bytes;
    const max = this._settings.maxBytes;
    if (max === undefined || this._bytes <= max) return undefined;
    const removed: Array<readonly [string, E]> = [];
    this._forgetLast();
    for (const [k, v] of this._entries) {
      if (this._bytes <= max) break;
      if (k === key) continue;
      this._entries.delete(k);
      this._bytes -= v.heldBytes ?? 0;
      v.held = false;
      removed.push([k, v]);
    }
    return removed;
  }

  /** Evicted keys recorded so far. */
  get evictedCount(): number {
    return this._evicted?.added ?? 0;
  }

  /** Estimated share of never-evicted keys that the evicted filter refuses (see {@link EvictedIdFilter}). */
  get evictedFalsePositiveRate(): number {
    return this._evicted?.falsePositiveRate ?? 0;
  }

  /**
   * The clock in milliseconds since the first stamp, rounded: small integers, so an entry holds no
   * heap number. A clock that returns a non-finite value (or throws) repeats the last stamp.
   */
  stamp(): number {
    let now: number;
    try {
      now = this._settings.now();
    } catch {
      return this._lastStamp;
    }
    if (typeof now !== 'number' || !Number.isFinite(now)) return this._lastStamp;
    this._epoch ??= now;
    this._lastStamp = Math.round(now - this._epoch);
    return this._lastStamp;
  }

  get(key: string): E | undefined {
    if (key === this._lastKey) return this._lastEntry;
    const entry = this._entries.get(key);
    if (entry !== undefined) {
      this._lastKey = key;
      this._lastEntry = entry;
    }
    return entry;
  }

  /**
   * Make `entry`, held under `key`, the last entry found, so the next {@link PromptRegistry.get} of
   * `key` probes no hash table: for a caller that keeps a reference to an entry beside another
   * index (a trace) and reaches it without the key's hash-table probe, whose memory is cold when many
   * entries are held. `false` (and nothing changed) when the entry has left the table. The caller
   * passes the key the entry was admitted under.
   */
  prime(key: string, entry: E): boolean {
    if (entry.held !== true) return false;
    this._lastKey = key;
    this._lastEntry = entry;
    return true;
  }

  private _forgetLast(): void {
    this._lastKey = undefined;
    this._lastEntry = undefined;
  }

  /** Whether the key finished (while remembered) or was evicted (always; or a false positive). */
  tombstone(key: string): 'finished' | 'evicted' | undefined {
    if (this._finished?.has(key) === true) return 'finished';
    if (this._evicted?.has(key) === true) return 'evicted';
    return undefined;
  }

  /**
   * The key's entry, creating it with `create` unless the key has a tombstone or `create` returns
   * `undefined` (`refused`). Creating at capacity first removes the oldest entries and returns them
   * in `trimmed`: the caller records them with {@link PromptRegistry.forget} as evicted.
   */
  admit(key: string, create: () => E | undefined): Admission<E> {
    const existing = this.get(key);
    if (existing !== undefined) return { status: 'existing', entry: existing, trimmed: NOTHING };
    const dead = this.tombstone(key);
    if (dead !== undefined) return { status: dead, entry: undefined, trimmed: NOTHING };
    const entry = create();
    if (entry === undefined) return { status: 'refused', entry: undefined, trimmed: NOTHING };
    const trimmed = this._trim();
    this._entries.set(key, entry);
    entry.held = true;
    return { status: 'created', entry, trimmed };
  }

  /**
   * Remove the oldest entries once the table holds `maxEntries`: an eighth at a time, in one pass,
   * so the cost per insert stays O(1) amortised (dropping one at a time from a `Map` is not O(1)
   * in V8: iteration walks the deleted slots).
   */
  private _trim(): Array<readonly [string, E]> {
    const map = this._entries;
    const max = this._settings.maxEntries;
    if (map.size < max) return [];
    const drop = Math.max(1, map.size - max + 1, Math.floor(max / 8));
    const removed: Array<readonly [string, E]> = [];
    this._forgetLast();
    const disposable = this._settings.disposable;
    // Junk first (one pass over the table, once per eighth of it: O(1) amortised), then the oldest.
    const others: Array<readonly [string, E]> = [];
    for (const [k, v] of map) {
      if (removed.length >= drop) break;
      if (disposable === undefined || disposable(v)) removed.push([k, v]);
      else if (others.length < drop) others.push([k, v]);
    }
    for (const o of others) {
      if (removed.length >= drop) break;
      removed.push(o);
    }
    for (const [k, v] of removed) {
      map.delete(k);
      this._bytes -= v.heldBytes ?? 0;
      v.held = false;
    }
    return removed;
  }

  /**
   * Drop the key's entry (if held). With tombstones, `finished` keys are remembered for a while and
   * `evicted` ones for good; `dropped` (and every key without tombstones) may come back fresh.
   */
  forget(key: string, how: 'finished' | 'evicted' | 'dropped'): void {
    const entry = this._entries.get(key);
    if (key === this._lastKey) this._forgetLast();
    if (entry !== undefined) {
      this._bytes -= entry.heldBytes ?? 0;
      this._entries.delete(key);
      entry.held = false;
    }
    if (how === 'finished') this._finished?.add(key);
    else if (how === 'evicted') this._evicted?.add(key);
  }

  /** Entries in creation order (a snapshot: safe to forget while iterating). */
  entries(): Array<[string, E]> {
    return [...this._entries];
  }

  /**
   * Entries idle for more than `idleMillis` by the clock now; `holdLonger(entry)` true keeps an
   * entry until it is idle `holdFactor` times as long.
   */
  idle(idleMillis: number, holdLonger?: (entry: E) => boolean, holdFactor = 4): Array<[string, E]> {
    const now = this.stamp();
    const limit = now - idleMillis;
    const longLimit = now - holdFactor * idleMillis;
    const out: Array<[string, E]> = [];
    for (const [key, entry] of this._entries) {
      if (entry.lastSeenMillis >= limit) continue;
      if (holdLonger !== undefined && entry.lastSeenMillis >= longLimit && holdLonger(entry)) continue;
      out.push([key, entry]);
    }
    return out;
  }
}

/**
 * Bounded collections with O(1) inserts. Internal.
 *
 * Each keeps two generations of at most `ceil(max / 2)` entries: inserts go to the young one; when
 * it fills, it becomes the old one and the previous old one is dropped whole. An entry is therefore
 * kept for at least `max / 2` and at most `max` later inserts. (Dropping the oldest entry one at a
 * time from a `Map` is not O(1) in V8: iteration walks the deleted slots.)
 */

/**
 * A `Set` that forgets its oldest entries, keeping at most `max`. The last value added or found is
 * remembered (a run of operations on one value probes no hash table).
 */
export class BoundedSet<T> {
  private readonly _half: number;
  private _young = new Set<T>();
  private _old: Set<T> | undefined;
  /** A value known to be in the young generation (`undefined`: none). */
  private _lastYoung: T | undefined;
  private _generation = 0;

  constructor(max: number) {
    this._half = Math.max(1, Math.ceil(max / 2));
  }

  add(v: T): void {
    if (v === this._lastYoung && v !== undefined) return;
    if (this._young.has(v)) {
      this._lastYoung = v;
      return;
    }
    this._young.add(v);
    if (this._young.size >= this._half) {
      this._old = this._young;
      this._young = new Set();
      this._lastYoung = undefined;
      this._generation += 1;
    } else {
      this._lastYoung = v;
    }
  }

  has(v: T): boolean {
    if (v === this._lastYoung && v !== undefined) return true;
    return this._young.has(v) || (this._old?.has(v) ?? false);
  }

  /** Entries held (at most `max`). */
  get size(): number {
    return this._young.size + (this._old?.size ?? 0);
  }

  /**
   * How many times the young generation has been retired, starting at `0`. A value added while the
   * generation is `g` is held, and would be found in the young generation, for as long as the
   * generation is still `g` (unless deleted): a caller that notes `g` may skip adding it again.
   */
  get generation(): number {
    return this._generation;
  }

  delete(v: T): void {
    this._young.delete(v);
    this._old?.delete(v);
    if (v === this._lastYoung) this._lastYoung = undefined;
  }
}

/**
 * A `Map` that forgets its oldest entries, keeping at most `max`. The last key found by `get` is
 * remembered with its value (a run of lookups of one key probes no hash table).
 */
export class BoundedMap<K, V> {
  private readonly _half: number;
  private _young = new Map<K, V>();
  private _old: Map<K, V> | undefined;
  private _lastKey: K | undefined;
  private _lastValue: V | undefined;

  constructor(max: number) {
    this._half = Math.max(1, Math.ceil(max / 2));
  }

  set(k: K, v: V): void {
    this._young.set(k, v);
    if (this._young.size >= this._half) {
      this._old = this._young;
      this._young = new Map();
      this._lastKey = undefined; // it may have been in the generation just dropped
      this._lastValue = undefined;
    } else if (k === this._lastKey) {
      // (an undefined value lets the old generation answer: forget rather than remember it)
      if (v === undefined) this._lastKey = undefined;
      this._lastValue = v;
    }
  }

  get(k: K): V | undefined {
    if (k === this._lastKey && k !== undefined) return this._lastValue;
    let v = this._young.get(k);
    if (v === undefined) v = this._old?.get(k);
    if (v !== undefined) {
      this._lastKey = k;
      this._lastValue = v;
    }
    return v;
  }

  delete(k: K): void {
    this._young.delete(k);
    this._old?.delete(k);
    if (k === this._lastKey) {
      this._lastKey = undefined;
      this._lastValue = undefined;
    }
  }
}

/**
 * Bounded collections with O(1) inserts. Internal.
 *
 * Each keeps two generations of at most `ceil(max / 2)` entries: inserts go to the young one; when
 * it fills, it becomes the old one and the previous old one is dropped whole. An entry is therefore
 * kept for at least `max / 2` and at most `max` later inserts. (Dropping the oldest entry one at a
 * time from a `Map` is not O(1) in V8: iteration walks the deleted slots.)
 */

/** A `Set` that forgets its oldest entries, keeping at most `max`. */
export class BoundedSet<T> {
  private readonly _half: number;
  private _young = new Set<T>();
  private _old: Set<T> | undefined;

  constructor(max: number) {
    this._half = Math.max(1, Math.ceil(max / 2));
  }

  add(v: T): void {
    if (this._young.has(v)) return;
    this._young.add(v);
    if (this._young.size >= this._half) {
      this._old = this._young;
      this._young = new Set();
    }
  }

  has(v: T): boolean {
    return this._young.has(v) || (this._old?.has(v) ?? false);
  }

  /** Entries held (at most `max`). */
  get size(): number {
    return this._young.size + (this._old?.size ?? 0);
  }

  delete(v: T): void {
    this._young.delete(v);
    this._old?.delete(v);
  }
}

/** A `Map` that forgets its oldest entries, keeping at most `max`. */
export class BoundedMap<K, V> {
  private readonly _half: number;
  private _young = new Map<K, V>();
  private _old: Map<K, V> | undefined;

  constructor(max: number) {
    this._half = Math.max(1, Math.ceil(max / 2));
  }

  set(k: K, v: V): void {
    this._young.set(k, v);
    if (this._young.size >= this._half) {
      this._old = this._young;
      this._young = new Map();
    }
  }

  get(k: K): V | undefined {
    const v = this._young.get(k);
    if (v !== undefined) return v;
    return this._old?.get(k);
  }

  delete(k: K): void {
    this._young.delete(k);
    this._old?.delete(k);
  }
}

/**
 * A fixed-size probabilistic set of evicted prompt ids (a Bloom filter). Internal.
 *
 * An id added is always found again (no false negatives), whatever happens later, in a fixed number
 * of bytes. An id never added may be found too (a false positive): the engine then never tracks that
 * new prompt, so the guard misses it, which is the safe side (it can never remind or stop on it).
 * The false-positive rate grows with the number of ids added; {@link EvictedIdFilter.falsePositiveRate}
 * estimates it from the share of bits set.
 */

/** Hash functions a lookup uses: 7 is the optimum at about 10 bits an id (1% false positives). */
const HASHES = 7;

/** Bits of the id's two 32-bit hashes, from which the 7 positions are derived (double hashing). */
function hashPair(id: string, seed: number): [number, number] {
  // FNV-1a and a murmur-style mix over UTF-16 code units, each seeded per filter.
  let a = (0x811c9dc5 ^ seed) >>> 0;
  let b = (0x9747b28c + seed) >>> 0;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b ^= b >>> 16;
  b = Math.imul(b, 0xc2b2ae35);
  b ^= b >>> 13;
  // An odd step visits distinct positions for a power-of-two or any odd-sized table.
  return [a >>> 0, (b | 1) >>> 0];
}

/** A Bloom filter of evicted ids, allocated on the first {@link EvictedIdFilter.add}. */
export class EvictedIdFilter {
  private readonly _bits: number;
  private readonly _seed: number;
  private _table: Uint8Array | undefined;
  private _set = 0;
  private _added = 0;

  /**
   * @param bytes - size of the table in bytes (8 bits each); at least 8
   * @param seed - hash seed (random per engine by default, so ids cannot be chosen to collide ahead of time)
   */
  constructor(bytes: number, seed = (Math.random() * 0x100000000) >>> 0) {
    this._bits = Math.max(8, Math.floor(bytes)) * 8;
    this._seed = seed;
  }

  /** Bytes the table takes once allocated. */
  get byteLength(): number {
    return this._bits / 8;
  }

  /** Ids added so far (with repeats). */
  get added(): number {
    return this._added;
  }

  /**
   * Estimated probability that an id never added is reported as added: `(bits set / bits)^7`.
   * `0` before the first add.
   */
  get falsePositiveRate(): number {
    return (this._set / this._bits) ** HASHES;
  }

  add(id: string): void {
    const table = (this._table ??= new Uint8Array(this._bits / 8));
    const [h1, h2] = hashPair(id, this._seed);
    for (let i = 0; i < HASHES; i++) {
      const bit = (h1 + i * h2) % this._bits;
      const mask = 1 << (bit & 7);
      const byte = bit >>> 3;
      const v = table[byte] as number;
      if ((v & mask) === 0) {
        table[byte] = v | mask;
        this._set += 1;
      }
    }
    this._added += 1;
  }

  has(id: string): boolean {
    const table = this._table;
    if (table === undefined) return false;
    const [h1, h2] = hashPair(id, this._seed);
    for (let i = 0; i < HASHES; i++) {
      const bit = (h1 + i * h2) % this._bits;
      if (((table[bit >>> 3] as number) & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }
}

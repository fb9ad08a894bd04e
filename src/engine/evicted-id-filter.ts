/**
 * A fixed-size probabilistic set of evicted prompt ids that ages: two generations of a Bloom
 * filter. Internal.
 *
 * Ids go into the young generation; once it holds its capacity (about 10 bits an id, where 7
 * hashes give 0.8% false positives), it becomes the old one and the previous old one is cleared
 * for the next young one. A lookup asks both. So an id added is found again (no false negative)
 * for at least {@link EvictedIdFilter.generationCapacity} later adds and at most twice that, and
 * the false-positive rate never passes about 1.6% however many ids are added (a filter that never
 * aged refused 54% of new prompts after 3 M junk ones). A false positive makes a new prompt
 * untracked: a miss, never a false stop; an id forgotten after so many evictions is tracked afresh
 * from its next record (its count restarts: a miss as well, never a false stop).
 * {@link EvictedIdFilter.falsePositiveRate} estimates the current rate from the share of bits set.
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

/** Bits per id a generation holds at capacity: 7 hashes are the optimum at k / ln 2 ≈ 10.1 bits an id. */
const BITS_PER_ID = HASHES / Math.LN2;

/** One generation: a bit table and how many of its bits are set. */
interface Generation {
  table: Uint8Array;
  set: number;
  added: number;
}

/** Two generations of a Bloom filter of evicted ids, allocated on the first {@link EvictedIdFilter.add}. */
export class EvictedIdFilter {
  private readonly _bits: number;
  private readonly _seed: number;
  private readonly _capacity: number;
  private _young: Generation | undefined;
  private _old: Generation | undefined;
  private _added = 0;

  /**
   * @param bytes - size of both tables together in bytes (each generation half); at least 16
   * @param seed - hash seed (random per engine by default, so ids cannot be chosen to collide ahead of time)
   */
  constructor(bytes: number, seed = (Math.random() * 0x100000000) >>> 0) {
    this._bits = Math.max(8, Math.floor(bytes / 2)) * 8;
    this._seed = seed;
    this._capacity = Math.max(1, Math.floor(this._bits / BITS_PER_ID));
  }

  /** Bytes the tables take once allocated (both generations). */
  get byteLength(): number {
    return this._bits / 4;
  }

  /** Ids added so far (with repeats). */
  get added(): number {
    return this._added;
  }

  /** Ids a generation holds before it ages: an id added is found for at least this many later adds. */
  get generationCapacity(): number {
    return this._capacity;
  }

  /**
   * Estimated probability that an id never added (or forgotten) is reported as added: each
   * generation's `(bits set / bits)^7`, combined. `0` before the first add.
   */
  get falsePositiveRate(): number {
    const rate = (g: Generation | undefined): number => (g === undefined ? 0 : (g.set / this._bits) ** HASHES);
    return 1 - (1 - rate(this._young)) * (1 - rate(this._old));
  }

  add(id: string): void {
    let young = this._young;
    if (young === undefined) young = this._young = { table: new Uint8Array(this._bits / 8), set: 0, added: 0 };
    else if (young.added >= this._capacity) {
      // Age: the young generation becomes the old one; the old one's table is cleared and reused.
      const reused = this._old;
      this._old = young;
      if (reused === undefined) young = { table: new Uint8Array(this._bits / 8), set: 0, added: 0 };
      else {
        reused.table.fill(0);
        reused.set = 0;
        reused.added = 0;
        young = reused;
      }
      this._young = young;
    }
    const table = young.table;
    const [h1, h2] = hashPair(id, this._seed);
    for (let i = 0; i < HASHES; i++) {
      const bit = (h1 + i * h2) % this._bits;
      const mask = 1 << (bit & 7);
      const byte = bit >>> 3;
      const v = table[byte] as number;
      if ((v & mask) === 0) {
        table[byte] = v | mask;
        young.set += 1;
      }
    }
    young.added += 1;
    this._added += 1;
  }

  has(id: string): boolean {
    if (this._young === undefined) return false;
    const [h1, h2] = hashPair(id, this._seed);
    return this._in(this._young.table, h1, h2) || (this._old !== undefined && this._in(this._old.table, h1, h2));
  }

  private _in(table: Uint8Array, h1: number, h2: number): boolean {
    for (let i = 0; i < HASHES; i++) {
      const bit = (h1 + i * h2) % this._bits;
      if (((table[bit >>> 3] as number) & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }
}

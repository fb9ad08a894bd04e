/**
 * Ids as they leave the guard (telemetry attributes, decision lines, reports): an id is input (a
 * prompt or session id a producer chose), so its length is the producer's. Up to
 * {@link MAX_OUTPUT_ID_LENGTH} characters it is written as it is; a longer one is written as its
 * first 64 characters, `…#`, and a 64-bit digest of the whole id (FNV-1a over its UTF-16 code
 * units), so two long ids that share a prefix stay apart and the output of one decision is bounded.
 */

/** Longest id written as it is, in UTF-16 code units. */
export const MAX_OUTPUT_ID_LENGTH = 128;
/** Characters of a longer id kept before its digest. */
const KEPT_PREFIX = 64;

let lastIn: string | undefined;
let lastOut = '';

/** 64-bit FNV-1a of the string's UTF-16 code units, as 16 hex digits (two 32-bit halves, no BigInt). */
export function fnv1a64(s: string): string {
  // offset basis 0xcbf29ce484222325, prime 0x100000001b3 (= 2^40 + 0x1b3)
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < s.length; i++) {
    lo = (lo ^ s.charCodeAt(i)) >>> 0;
    // (hi:lo) * (2^40 + 0x1b3) mod 2^64
    const loMul = lo * 0x1b3;
    const carry = Math.floor(loMul / 0x100000000);
    const newLo = loMul >>> 0;
    hi = (Math.imul(hi, 0x1b3) + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = newLo;
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/**
 * The id as written in output: unchanged up to {@link MAX_OUTPUT_ID_LENGTH} characters, else its
 * first 64 characters, `…#` and a 16-hex-digit digest of the whole id.
 */
export function outputId(id: string): string {
  if (id.length <= MAX_OUTPUT_ID_LENGTH) return id;
  // The same long id is written once per decision: the digest of the last one is kept.
  if (id !== lastIn) {
    lastIn = id;
    lastOut = `${id.slice(0, KEPT_PREFIX)}…#${fnv1a64(id)}`;
  }
  return lastOut;
}

/**
 * The repetition breaker's in-memory digest of a call's canonical arguments: a fast, non-cryptographic
 * 60-bit hash plus the canonical text's length, computed straight from the `function_args` JSON text
 * when it can be (no parse, no allocation), else from the canonical JSON of the parsed value.
 *
 * What it protects against, and what not:
 * - Accidents: two different calls of the same tool whose canonical arguments have the same length
 *   get the same digest with a chance of about 2^-60. The breaker compares a call with the previous
 *   call of its session only, so this is the chance that one call wrongly continues a run.
 * - Not adversaries: the hash is not cryptographic. Whoever writes the arguments (the model) can
 *   construct two different argument texts with equal digests, and so make different calls count as
 *   one run — a false warning or stop of its own session, nothing more. Breaking that takes
 *   `argumentsFingerprint` (SHA-256), at several times the cost a call.
 * - Privacy: a digest of short arguments can be inverted by brute force, like any unsalted hash.
 *   Digests are held only in memory, one per session (its last call), and never leave the engine:
 *   no metric, log, span, report or listener sees them. Arguments themselves are never stored.
 *
 * `argumentsFingerprint` (in `fingerprint.ts`) is the cryptographic fingerprint of the same canonical text.
 *
 * Longer than the ~350-line norm on purpose: the scanner must decide, token by token, exactly when
 * the text already is what `JSON.stringify` would write (strings, numbers, key order), and that
 * reads best in one place beside the hash it feeds.
 */

/** A digest, written in place (the engine keeps one per session and one scratch). */
export interface ArgumentsDigest {
  /** UTF-16 length of the canonical JSON text; `-n` marks the n-th uncomparable call (never equal). */
  length: number;
  /** Two 30-bit lanes of the hash (small integers: no heap number per session). */
  high: number;
  low: number;
}

/** A fresh digest of nothing (length 0). */
export function emptyArgumentsDigest(): ArgumentsDigest {
  return { length: 0, high: 0, low: 0 };
}

/** Whether two digests are of the same canonical text (up to the collision chance above). */
export function sameArgumentsDigest(a: ArgumentsDigest, b: ArgumentsDigest): boolean {
  return a.length === b.length && a.high === b.high && a.low === b.low;
}

// ------------------------------------------------------------------------------------------------
// the hash: two lanes over the UTF-16 code units of the canonical text, each finished by the
// murmur3 avalanche; lane A is FNV-1a, lane B a multiply-xorshift with another odd constant.

const SEED_A = 0x811c9dc5 | 0;
const SEED_B = 0x9747b28c | 0;
let laneA = SEED_A;
let laneB = SEED_B;
let emitted = 0;

function resetHash(): void {
  laneA = SEED_A;
  laneB = SEED_B;
  emitted = 0;
}

function emit(c: number): void {
  laneA = Math.imul(laneA ^ c, 0x01000193);
  laneB = Math.imul(laneB ^ c, 0x85ebca77);
  laneB ^= laneB >>> 15;
  emitted++;
}

function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 2; // 30 bits
}

function finishHash(into: ArgumentsDigest): void {
  into.length = emitted;
  into.high = avalanche(laneA);
  into.low = avalanche(laneB ^ Math.imul(emitted, 0x27d4eb2f));
}

/**
 * Digest of a canonical JSON text (from `canonicalJson` or `canonicalArgumentsText`).
 * @param canonical - The canonical text.
 * @param into - Written in place.
 */
export function digestCanonicalText(canonical: string, into: ArgumentsDigest): void {
  resetHash();
  for (let i = 0; i < canonical.length; i++) emit(canonical.charCodeAt(i));
  finishHash(into);
}

// ------------------------------------------------------------------------------------------------
// the fast path: JSON text -> digest of its canonical JSON, without parsing

/** Deepest nesting and most top-level keys the fast path handles (beyond: the parsed path). */
const MAX_DEPTH = 64;
const MAX_TOP_KEYS = 64;

// The scanner's state lives in module variables (one scan at a time, no allocation); every loop
// works on local copies of them and writes them back once.
let src = '';
let pos = 0;
/**
 * Whether the scan hashes what it reads. The canonical text of a valid, canonically written value
 * is its text without the whitespace outside strings, so one pass both checks and hashes it, as
 * long as the top-level keys come in order; when they do not, hashing stops and the entries are
 * hashed again in key order afterwards.
 */
let hashing = false;
/** Top-level object entries: [keyStart, keyEnd, valueStart, valueEnd] (key bounds inside the quotes). */
const topEntries = new Int32Array(MAX_TOP_KEYS * 4);
let topCount = 0;
const order = new Int32Array(MAX_TOP_KEYS);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(): void {
  const s = src;
  const n = s.length;
  let p = pos;
  while (p < n && isSpace(s.charCodeAt(p))) p++;
  pos = p;
}

/** Hash `src[start, end)` as it is (when hashing). */
function emitRange(start: number, end: number): void {
  if (!hashing) return;
  const s = src;
  let a = laneA;
  let b = laneB;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x85ebca77);
    b ^= b >>> 15;
  }
  laneA = a;
  laneB = b;
  emitted += end - start;
}

/** Hash one code unit (when hashing). */
function emitOne(c: number): void {
  if (hashing) emit(c);
}

/**
 * A string token at `pos` (the opening quote) that `JSON.stringify` would write the same way: only
 * the escapes it writes itself (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`; no `\u`, no `\/`), no raw
 * control character, no lone surrogate. `noEscapes`: no escape at all (keys, so that their raw text
 * orders as their value). Leaves `pos` after the closing quote (the token hashed as written, when
 * hashing); false when not canonical or invalid.
 */
function scanString(noEscapes: boolean): boolean {
  const s = src;
  const n = s.length;
  const start = pos;
  let p = start + 1;
  for (;;) {
    if (p >= n) return false;
    const c = s.charCodeAt(p++);
    if (c === QUOTE) break;
    if (c < 0x20) return false;
    if (c === BACKSLASH) {
      if (noEscapes || p >= n) return false;
      const e = s.charCodeAt(p++);
      // " \ b f n r t
      if (e !== QUOTE && e !== BACKSLASH && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return false;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // a high surrogate followed by a low one is a character; anything else JSON.stringify escapes
      if (c >= 0xdc00 || p >= n) return false;
      const d = s.charCodeAt(p);
      if (d < 0xdc00 || d > 0xdfff) return false;
      p++;
    }
  }
  pos = p;
  emitRange(start, p);
  return true;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** A number token that `JSON.stringify(JSON.parse(token))` writes back unchanged (hashed as written). */
function scanNumber(): boolean {
  const start = pos;
  let c = src.charCodeAt(pos);
  if (c === 0x2d) c = src.charCodeAt(++pos); // -
  if (c === 0x30) {
    pos++;
  } else if (c >= 0x31 && c <= 0x39) {
    while (pos < src.length && isDigit(src.charCodeAt(pos))) pos++;
  } else {
    return false;
  }
  let simple = true;
  if (pos < src.length && src.charCodeAt(pos) === 0x2e) {
    simple = false;
    pos++;
    if (pos >= src.length || !isDigit(src.charCodeAt(pos))) return false;
    while (pos < src.length && isDigit(src.charCodeAt(pos))) pos++;
  }
  c = pos < src.length ? src.charCodeAt(pos) : 0;
  if (c === 0x65 || c === 0x45) {
    simple = false;
    pos++;
    c = pos < src.length ? src.charCodeAt(pos) : 0;
    if (c === 0x2b || c === 0x2d) pos++;
    if (pos >= src.length || !isDigit(src.charCodeAt(pos))) return false;
    while (pos < src.length && isDigit(src.charCodeAt(pos))) pos++;
  }
  const digits = pos - start - (src.charCodeAt(start) === 0x2d ? 1 : 0);
  let ok: boolean;
  // An integer of at most 15 digits is exact and written back as is, except "-0" (written "0").
  if (simple && digits <= 15) ok = !(digits === 1 && src.charCodeAt(start) === 0x2d && src.charCodeAt(start + 1) === 0x30);
  else {
    const token = src.slice(start, pos);
    const v = Number(token);
    ok = Number.isFinite(v) && String(v) === token;
  }
  if (ok) emitRange(start, pos);
  return ok;
}

function scanLiteral(word: string): boolean {
  if (!src.startsWith(word, pos)) return false;
  emitRange(pos, pos + word.length);
  pos += word.length;
  return true;
}

/** Code-unit order of two ranges of `src` (the raw text of escape-free keys). */
function compareRanges(aStart: number, aEnd: number, bStart: number, bEnd: number): number {
  const n = Math.min(aEnd - aStart, bEnd - bStart);
  for (let i = 0; i < n; i++) {
    const d = src.charCodeAt(aStart + i) - src.charCodeAt(bStart + i);
    if (d !== 0) return d;
  }
  return aEnd - aStart - (bEnd - bStart);
}

/**
 * A value at `pos`. Objects below the top level must have strictly increasing keys (so their
 * canonical form is their text without whitespace); the top-level object's entries are recorded
 * to be ordered afterwards when they do not come in order.
 */
function scanValue(depth: number): boolean {
  if (pos >= src.length) return false;
  const c = src.charCodeAt(pos);
  switch (c) {
    case QUOTE:
      return scanString(false);
    case 0x7b: // {
      return scanObject(depth);
    case 0x5b: {
      // [
      if (depth >= MAX_DEPTH) return false;
      pos++;
      emitOne(0x5b);
      skipSpace();
      if (pos < src.length && src.charCodeAt(pos) === 0x5d) {
        pos++;
        emitOne(0x5d);
        return true;
      }
      for (;;) {
        skipSpace();
        if (!scanValue(depth + 1)) return false;
        skipSpace();
        if (pos >= src.length) return false;
        const d = src.charCodeAt(pos++);
        if (d !== 0x5d && d !== 0x2c) return false;
        emitOne(d);
        if (d === 0x5d) return true;
      }
    }
    case 0x74:
      return scanLiteral('true');
    case 0x66:
      return scanLiteral('false');
    case 0x6e:
      return scanLiteral('null');
    default:
      return scanNumber();
  }
}

function scanObject(depth: number): boolean {
  if (depth >= MAX_DEPTH) return false;
  pos++;
  emitOne(0x7b);
  skipSpace();
  if (pos < src.length && src.charCodeAt(pos) === 0x7d) {
    pos++;
    emitOne(0x7d);
    return true;
  }
  let prevStart = -1;
  let prevEnd = -1;
  for (;;) {
    skipSpace();
    if (pos >= src.length || src.charCodeAt(pos) !== QUOTE) return false;
    const keyStart = pos + 1;
    if (!scanString(true)) return false;
    const keyEnd = pos - 1;
    if (prevStart >= 0 && compareRanges(prevStart, prevEnd, keyStart, keyEnd) >= 0) {
      // Below the top level keys must come in order; the top level is ordered afterwards.
      if (depth > 0) return false;
      hashing = false;
    }
    prevStart = keyStart;
    prevEnd = keyEnd;
    skipSpace();
    if (pos >= src.length || src.charCodeAt(pos++) !== 0x3a) return false; // :
    emitOne(0x3a);
    skipSpace();
    const valueStart = pos;
    if (!scanValue(depth + 1)) return false;
    if (depth === 0) {
      if (topCount >= MAX_TOP_KEYS) return false;
      const k = topCount++ * 4;
      topEntries[k] = keyStart;
      topEntries[k + 1] = keyEnd;
      topEntries[k + 2] = valueStart;
      topEntries[k + 3] = pos;
    }
    skipSpace();
    if (pos >= src.length) return false;
    const d = src.charCodeAt(pos++);
    if (d !== 0x7d && d !== 0x2c) return false;
    emitOne(d);
    if (d === 0x7d) return true;
  }
}

/** Hash `src[start, end)` without the whitespace outside strings (the range is valid JSON). */
function emitCompact(start: number, end: number): void {
  let inString = false;
  for (let i = start; i < end; i++) {
    const c = src.charCodeAt(i);
    if (inString) {
      emit(c);
      if (c === BACKSLASH) emit(src.charCodeAt(++i));
      else if (c === QUOTE) inString = false;
    } else if (!isSpace(c)) {
      emit(c);
      if (c === QUOTE) inString = true;
    }
  }
}

/**
 * Digest of the canonical JSON of the value `text` holds, computed from the text when that is
 * exact without parsing: valid JSON whose strings are written as `JSON.stringify` writes them,
 * whose numbers are written in their shortest form and whose objects below the top level have
 * their keys in order; the top-level object's keys may come in any order (they are ordered here),
 * and whitespace is free. Pretty-printed `function_args` of a call with one argument, or with
 * several in any order, qualify.
 *
 * @param text - The `function_args` text.
 * @param into - Written in place when the result is true.
 * @returns True when `into` holds the digest of `canonicalArgumentsText(text)`; false when the
 *   text needs parsing (the caller then digests the canonical text of the parsed value).
 */
export function digestJsonText(text: string, into: ArgumentsDigest): boolean {
  src = text;
  pos = 0;
  topCount = 0;
  resetHash();
  hashing = true;
  try {
    skipSpace();
    if (pos >= src.length) return false;
    if (!scanValue(0)) return false;
    skipSpace();
    if (pos !== src.length) return false;
    if (hashing) {
      // Read in canonical order: the stream hashed is the canonical text.
      finishHash(into);
      return true;
    }
    // The top-level keys came out of order: hash the entries again in key order (insertion sort:
    // a handful of keys); equal keys need the parser.
    resetHash();
    const n = topCount;
    for (let i = 0; i < n; i++) {
      let j = i;
      const ks = topEntries[i * 4] as number;
      const ke = topEntries[i * 4 + 1] as number;
      while (j > 0) {
        const o = order[j - 1] as number;
        const cmp = compareRanges(topEntries[o * 4] as number, topEntries[o * 4 + 1] as number, ks, ke);
        if (cmp === 0) return false;
        if (cmp < 0) break;
        order[j] = o;
        j--;
      }
      order[j] = i;
    }
    emit(0x7b);
    for (let i = 0; i < n; i++) {
      const k = (order[i] as number) * 4;
      if (i > 0) emit(0x2c);
      emitCompact((topEntries[k] as number) - 1, (topEntries[k + 1] as number) + 1);
      emit(0x3a);
      emitCompact(topEntries[k + 2] as number, topEntries[k + 3] as number);
    }
    emit(0x7d);
    finishHash(into);
    return true;
  } finally {
    src = '';
    hashing = false;
  }
}

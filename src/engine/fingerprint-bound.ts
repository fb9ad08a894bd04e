/**
 * The work bound for fingerprinting in-process arguments. Internal.
 *
 * A JavaScript host can pass anything as a call's arguments: a DAG (the same object referenced twice
 * at every level costs 2^depth steps to serialise: depth 22 blocked `beforeToolCall` 9 s), one
 * 1 MiB string referenced 4,000 times (a 4 GiB serialisation: out of memory), a 50 MiB `Buffer`
 * (whose `toJSON` builds an array of 52 million numbers: 28 s), a `toJSON` that returns any of
 * these. The engine serialises in-process arguments with {@link canonicalJsonWithin} under this
 * bound, in values, characters, depth and `toJSON` calls; over it, the call gets no repetition
 * verdict (a miss: it neither counts nor resets the run) and the hook answers `none`.
 * Arguments from telemetry are JSON text, a tree linear in its length, and are not bounded.
 */
import type { CanonicalJsonBound } from './fingerprint.js';

/**
 * Default bound: 100,000 values, 128 levels of nesting, 4 Mi characters of strings and keys (each
 * counted once per visit), 10,000 `toJSON` calls. At the bound, serialising and digesting take
 * about 150 ms at most (`bench/hook-bounds.mjs`); real tool arguments hold tens to thousands of
 * values and at most a file's text (a call carrying more than 4 Mi characters gets no verdict).
 */
export const DEFAULT_FINGERPRINT_BOUND: CanonicalJsonBound = { maxNodes: 100_000, maxDepth: 128, maxChars: 4 * 1024 * 1024, maxToJsonCalls: 10_000 };

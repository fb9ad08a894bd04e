import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';

/**
 * Serializes a value to canonical JSON: object keys sorted at every depth, no whitespace.
 *
 * Two values that differ only in the insertion order of their object keys produce the same
 * string, so the result can be hashed to compare tool-call arguments. Otherwise the output
 * follows `JSON.stringify` semantics:
 *
 * - keys are the own enumerable string keys (`Object.keys`), sorted by UTF-16 code unit
 *   (the default `Array.prototype.sort` order);
 * - array order is kept;
 * - object properties whose value is `undefined`, a function or a symbol are dropped;
 *   the same values inside an array (and array holes) become `null`;
 * - non-finite numbers become `null`; `-0` becomes `0`;
 * - a `toJSON(key)` method is honoured (so a `Date` becomes its ISO string), and boxed
 *   `Number` / `String` / `Boolean` objects are unwrapped;
 * - a `Map` or `Set` has no enumerable own keys and serializes as `{}`.
 *
 * A top-level value that JSON cannot represent (`undefined`, a function, a symbol) yields
 * `"null"`, so the result is always a string (unlike `JSON.stringify`, which returns
 * `undefined`).
 *
 * The same object may appear several times (a shared, acyclic reference); only an object
 * that contains itself is rejected.
 *
 * @param value - Any value; typically the parsed arguments of a tool call.
 * @returns The canonical JSON text.
 * @throws {TypeError} If `value` contains a cycle (an object reachable from itself), or a
 *   `bigint` (as `JSON.stringify` does).
 *
 * @example
 * ```ts
 * canonicalJson({ view: 'ranges', scope: 'uncompressed' });
 * // => '{"scope":"uncompressed","view":"ranges"}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, '', new Set<object>(), undefined, 0) ?? 'null';
}

/** Bounds of {@link canonicalJsonWithin}: what one serialisation may visit, build and call. */
export interface CanonicalJsonBound {
  /** Values visited: every array element and object property counts, once per reference (a shared object once per path to it). */
  readonly maxNodes: number;
  /** Nesting depth of arrays and objects. */
  readonly maxDepth: number;
  /** UTF-16 code units of strings and keys visited, each counted once per visit (one string referenced 4,000 times counts 4,000 times). */
  readonly maxChars: number;
  /** `toJSON` methods called (host code: each call's result is bounded like any other value). */
  readonly maxToJsonCalls: number;
}

/**
 * Whether serialising `value` from `depth` can stay within what is left of `budget` (which it does
 * not consume), counted the way the serialiser visits it: values once per reference, characters of
 * strings and keys once per visit, depth, binary views by their length. A value with a `toJSON`
 * counts as one value here; the serialiser measures what its `toJSON` returns before serialising
 * it. Iterative and allocation-light: O(min(size, the bound)).
 */
function fits(value: unknown, budget: Budget, depth: number): boolean {
  const stack: Array<[unknown, number]> = [[value, depth]];
  let nodes = budget.nodes;
  let chars = budget.chars;
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (--nodes < 0) return false;
    if (typeof v === 'string') {
      if ((chars -= v.length) < 0) return false;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (d >= budget.maxDepth) return false;
    if (ArrayBuffer.isView(v)) {
      if (viewLength(v) > nodes) return false;
      continue;
    }
    try {
      if ('toJSON' in v && typeof (v as { toJSON?: unknown }).toJSON === 'function') continue;
      if (Array.isArray(v)) {
        if (v.length > nodes) return false;
        for (let i = 0; i < v.length; i++) stack.push([v[i], d + 1]);
      } else {
        const keys = Object.keys(v);
        if (keys.length > nodes) return false;
        for (const k of keys) {
          if ((chars -= k.length) < 0) return false;
          stack.push([(v as Record<string, unknown>)[k], d + 1]);
        }
      }
    } catch {
      // A throwing getter or proxy: the serialiser throws too (the engine counts such a call as distinct).
      return true;
    }
  }
  return true;
}

/** Thrown inside the bounded serialiser when a bound is passed (one instance: no stack captured per call). */
const OVER_BOUND = new Error('over the canonical JSON bound');

/** What is left of a bound while serialising. */
interface Budget {
  nodes: number;
  chars: number;
  toJsonCalls: number;
  readonly maxDepth: number;
}

/** Elements a binary view enumerates as (a `Buffer`'s `toJSON` builds an array of as many). */
function viewLength(view: ArrayBufferView): number {
  const length = (view as { length?: unknown }).length;
  return typeof length === 'number' ? length : view.byteLength;
}

/**
 * {@link canonicalJson} within a bound on the work: `undefined` (and nothing more built) as soon as
 * serialising would visit more than `maxNodes` values, nest deeper than `maxDepth`, read more than
 * `maxChars` of strings and keys, or call more than `maxToJsonCalls` `toJSON` methods. Binary data
 * (a `Buffer`, any typed array or `DataView`) counts as its length in values and is refused before
 * its `toJSON` or keys are read, so a 50 MiB `Buffer` costs nothing. The work is O(the bound) plus
 * what the host's own `toJSON` methods do.
 *
 * @throws {TypeError} under the same conditions as {@link canonicalJson} (cycles within the bound, `bigint`)
 */
export function canonicalJsonWithin(value: unknown, bound: CanonicalJsonBound): string | undefined {
  const budget: Budget = { nodes: bound.maxNodes, chars: bound.maxChars, toJsonCalls: bound.maxToJsonCalls, maxDepth: bound.maxDepth };
  // Measured first, cheaply (no string built): a DAG is refused after counting, not after serialising.
  if (!fits(value, budget, 0)) return undefined;
  try {
    return serialize(value, '', new Set<object>(), budget, 0) ?? 'null';
  } catch (err) {
    if (err === OVER_BOUND) return undefined;
    throw err;
  }
}

/**
 * Fingerprints a tool call by its name and arguments only (never its result).
 *
 * The digest covers `toolName + '\u0000' + canonicalJson(args)`, so argument key order does not
 * matter while any change of tool name or argument value does. Source: the seed PR's
 * `sha1(toolName + canonical-JSON(args))`, upgraded here to SHA-256.
 *
 * @param toolName - The tool's name, e.g. the `function_name` log attribute.
 * @param args - The parsed arguments (see {@link parseArgumentsJson}).
 * @returns The first 96 bits of the SHA-256 digest, as 16 base64url characters (collisions between
 *   two different calls: about 2^-96).
 * @throws {TypeError} Under the same conditions as {@link canonicalJson} (cycles, `bigint`);
 *   never for values produced by `JSON.parse`.
 *
 * @example
 * ```ts
 * argumentsFingerprint('acp_status', { scope: 'uncompressed', view: 'ranges' });
 * ```
 */
export function argumentsFingerprint(toolName: string, args: unknown): string {
  return canonicalFingerprint(toolName, canonicalJson(args));
}

/**
 * The fingerprint of a call whose arguments are JSON text (the `function_args` attribute): the same
 * value {@link argumentsFingerprint} gives for the parsed arguments, computed with the engine's
 * native JSON (keys sorted by a replacer). Text that is not JSON is fingerprinted as
 * `{ raw: text }`.
 *
 * @throws {RangeError} for nesting deeper than the engine's stack allows
 */
export function argumentsTextFingerprint(toolName: string, text: string): string {
  return canonicalFingerprint(toolName, canonicalArgumentsText(text));
}

/**
 * The canonical JSON ({@link canonicalJson}) of the value a `function_args` text holds, computed
 * with the engine's native JSON (keys sorted by a replacer); for text that is not JSON, the
 * canonical JSON of `{ raw: text }`.
 *
 * @param text - The attribute value.
 * @returns The canonical text (it holds the arguments: hash it and drop it).
 * @throws {RangeError} for nesting deeper than the engine's stack allows
 */
export function canonicalArgumentsText(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return canonicalJson({ raw: text });
  }
  try {
    return (isSortedFlat(value) ? JSON.stringify(value) : JSON.stringify(value, sortKeys)) ?? 'null';
  } catch (err) {
    // Array-index-like keys ("0", "10") cannot be reordered in a JS object: serialise by hand.
    if (err !== INDEX_KEY) throw err;
    return canonicalJson(value);
  }
}

/** Keys a JS object always orders numerically (array indices), whatever the insertion order. */
const INDEX_LIKE = /^(?:0|[1-9]\d{0,9})$/;
const INDEX_KEY = new Error('index-like key');

/**
 * True for a primitive, or a plain object whose keys are already in sorted order and whose values
 * are all primitives (the common shape of tool arguments): the engine's plain `JSON.stringify` is
 * then already canonical, without a replacer call per value.
 */
function isSortedFlat(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) return false;
  let previous: string | undefined;
  for (const k in value) {
    if (INDEX_LIKE.test(k)) return false;
    if (previous !== undefined && !(previous < k)) return false;
    const v = (value as Record<string, unknown>)[k];
    if (v !== null && typeof v === 'object') return false;
    previous = k;
  }
  return true;
}

/** `JSON.stringify` replacer that rebuilds plain objects with sorted keys (UTF-16 order, as canonicalJson). */
function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.length < 2) return value;
  for (const k of keys) if (INDEX_LIKE.test(k)) throw INDEX_KEY;
  keys.sort();
  // No prototype: a "__proto__" key (JSON.parse makes it an own property) stays a plain key.
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const k of keys) out[k] = (value as Record<string, unknown>)[k];
  return out;
}

function canonicalFingerprint(toolName: string, canonical: string): string {
  const text = `${toolName}\u0000${canonical}`;
  const digest = oneShotHash === undefined ? createHash('sha256').update(text, 'utf8').digest() : oneShotHash('sha256', text, 'buffer');
  return digest.subarray(0, FINGERPRINT_BYTES).toString('base64url');
}

/** Bytes of the SHA-256 digest kept: 96 bits, 16 base64url characters (held per session in memory). */
const FINGERPRINT_BYTES = 12;

/** `crypto.hash` (Node 20.12+, 21.7+): a one-shot digest without a Hash object per call. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'buffer') => Buffer }).hash;

/** Successful result of {@link parseArgumentsJson}. */
export type ArgumentsParseOk = { readonly ok: true; readonly value: unknown };

/** Failed result of {@link parseArgumentsJson}: the text was not valid JSON. */
export type ArgumentsParseFailed = { readonly ok: false };

/** Result of {@link parseArgumentsJson}, discriminated on `ok`. */
export type ArgumentsParseResult = ArgumentsParseOk | ArgumentsParseFailed;

/**
 * Parses a tool call's `function_args` attribute.
 *
 * qwen-code 0.24.4 writes this attribute as pretty-printed JSON (`JSON.stringify(args, null, 2)`,
 * via its `safeJsonStringify`); whitespace is irrelevant because the parsed value is what gets
 * fingerprinted. Never throws: invalid JSON, an empty string or a non-string input (an attribute
 * of another type at runtime) yield `{ ok: false }`.
 *
 * @param text - The attribute value.
 * @returns `{ ok: true, value }` with the parsed value, or `{ ok: false }`.
 */
export function parseArgumentsJson(text: string): ArgumentsParseResult {
  if (typeof text !== 'string') return { ok: false };
  try {
    const value: unknown = JSON.parse(text);
    return { ok: true, value };
  } catch {
    return { ok: false };
  }
}

/** Returns `undefined` for values JSON cannot represent (the caller decides drop vs `null`). With a budget, throws {@link OVER_BOUND} past it. */
function serialize(input: unknown, key: string, ancestors: Set<object>, budget: Budget | undefined, depth: number): string | undefined {
  let value = input;
  if (budget !== undefined && --budget.nodes < 0) throw OVER_BOUND;
  if (typeof value === 'object' && value !== null && 'toJSON' in value && typeof value.toJSON === 'function') {
    if (budget !== undefined) {
      if (--budget.toJsonCalls < 0) throw OVER_BOUND;
      if (ArrayBuffer.isView(value) && viewLength(value) > budget.nodes) throw OVER_BOUND;
    }
    const replaced: unknown = value.toJSON(key);
    value = replaced;
    // What a toJSON returns is measured before it is serialised, like the value it stands for.
    if (budget !== undefined && typeof value === 'object' && value !== null && !fits(value, { ...budget, nodes: budget.nodes + 1 }, depth)) throw OVER_BOUND;
  }
  if (value instanceof Number) value = value.valueOf();
  else if (value instanceof String) value = value.valueOf();
  else if (value instanceof Boolean) value = value.valueOf();

  const kind = typeof value;
  switch (kind) {
    case 'string': {
      const text = String(value);
      if (budget !== undefined && (budget.chars -= text.length) < 0) throw OVER_BOUND;
      return JSON.stringify(text);
    }
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value === true ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('canonicalJson: cannot serialize a bigint');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'object': {
      if (typeof value !== 'object' || value === null) return 'null';
      if (budget !== undefined) {
        if (depth >= budget.maxDepth) throw OVER_BOUND;
        if (ArrayBuffer.isView(value) && viewLength(value) > budget.nodes) throw OVER_BOUND;
      }
      if (ancestors.has(value)) {
        throw new TypeError('canonicalJson: cannot serialize a cyclic structure');
      }
      ancestors.add(value);
      try {
        return Array.isArray(value)
          ? serializeArray(value, ancestors, budget, depth + 1)
          : serializeObject(value, ancestors, budget, depth + 1);
      } finally {
        ancestors.delete(value);
      }
    }
    default: {
      const _exhaustive: never = kind;
      return _exhaustive;
    }
  }
}

function serializeArray(array: readonly unknown[], ancestors: Set<object>, budget: Budget | undefined, depth: number): string {
  if (budget !== undefined && array.length > budget.nodes) throw OVER_BOUND;
  const parts: string[] = [];
  for (let i = 0; i < array.length; i++) {
    parts.push(serialize(array[i], String(i), ancestors, budget, depth) ?? 'null');
  }
  return `[${parts.join(',')}]`;
}

function serializeObject(object: object, ancestors: Set<object>, budget: Budget | undefined, depth: number): string {
  const entries: [string, unknown][] = Object.entries(object);
  if (budget !== undefined && entries.length > budget.nodes) throw OVER_BOUND;
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const parts: string[] = [];
  for (const [key, child] of entries) {
    if (budget !== undefined && (budget.chars -= key.length) < 0) throw OVER_BOUND;
    const text = serialize(child, key, ancestors, budget, depth);
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

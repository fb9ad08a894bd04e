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
  return serialize(value, '', new Set<object>()) ?? 'null';
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

/** Returns `undefined` for values JSON cannot represent (the caller decides drop vs `null`). */
function serialize(input: unknown, key: string, ancestors: Set<object>): string | undefined {
  let value = input;
  if (typeof value === 'object' && value !== null && 'toJSON' in value && typeof value.toJSON === 'function') {
    const replaced: unknown = value.toJSON(key);
    value = replaced;
  }
  if (value instanceof Number) value = value.valueOf();
  else if (value instanceof String) value = value.valueOf();
  else if (value instanceof Boolean) value = value.valueOf();

  const kind = typeof value;
  switch (kind) {
    case 'string':
      return JSON.stringify(String(value));
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
      if (ancestors.has(value)) {
        throw new TypeError('canonicalJson: cannot serialize a cyclic structure');
      }
      ancestors.add(value);
      try {
        return Array.isArray(value)
          ? serializeArray(value, ancestors)
          : serializeObject(value, ancestors);
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

function serializeArray(array: readonly unknown[], ancestors: Set<object>): string {
  const parts: string[] = [];
  for (let i = 0; i < array.length; i++) {
    parts.push(serialize(array[i], String(i), ancestors) ?? 'null');
  }
  return `[${parts.join(',')}]`;
}

function serializeObject(object: object, ancestors: Set<object>): string {
  const entries: [string, unknown][] = Object.entries(object);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const parts: string[] = [];
  for (const [key, child] of entries) {
    const text = serialize(child, key, ancestors);
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

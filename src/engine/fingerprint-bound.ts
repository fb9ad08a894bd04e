/**
 * A work bound for fingerprinting in-process arguments. Internal.
 *
 * Canonical serialisation visits a shared sub-object once per reference, so arguments built as a
 * DAG (the same object referenced twice at every level) cost 2^depth steps although they hold few
 * objects: at depth 22 that blocked `beforeToolCall` for seconds. Before serialising, the engine
 * walks the value the way the serialiser would and stops at the bound; over it, the call gets no
 * repetition verdict (a miss: it neither counts nor resets the run).
 */

/** Bounds of {@link withinFingerprintBound}. */
export interface FingerprintBound {
  /** Values visited (every array element and object property counts, once per reference). */
  readonly maxNodes: number;
  /** Nesting depth of arrays and objects. */
  readonly maxDepth: number;
}

/**
 * Default bound: 100,000 values (about 10 ms of canonical serialisation; real tool arguments hold
 * tens to thousands) and 128 levels of nesting.
 */
export const DEFAULT_FINGERPRINT_BOUND: FingerprintBound = { maxNodes: 100_000, maxDepth: 128 };

/**
 * Whether serialising `value` canonically stays within `bound`. Never throws, never calls user code
 * (`toJSON` results are not followed; such a value counts as one node). O(min(size, maxNodes)).
 */
export function withinFingerprintBound(value: unknown, bound: FingerprintBound = DEFAULT_FINGERPRINT_BOUND): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  let nodes = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (++nodes > bound.maxNodes) return false;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= bound.maxDepth) return false;
    try {
      if ('toJSON' in v && typeof (v as { toJSON?: unknown }).toJSON === 'function') continue;
      if (Array.isArray(v)) {
        if (nodes + v.length > bound.maxNodes) return false;
        for (let i = 0; i < v.length; i++) stack.push([v[i], depth + 1]);
      } else {
        const keys = Object.keys(v);
        if (nodes + keys.length > bound.maxNodes) return false;
        for (const k of keys) stack.push([(v as Record<string, unknown>)[k], depth + 1]);
      }
    } catch {
      // A throwing getter or proxy: the serialiser would throw too; leave it to its fallback.
      return true;
    }
  }
  return true;
}

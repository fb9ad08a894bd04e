/**
 * Adversarial edges of the last-lookup caches of `BoundedMap` and `BoundedSet`: values and keys
 * that are `undefined` or `null`, and keys held in both generations. The oracle is the map as it
 * answered before it had a cache: the young generation's value when it is not `undefined`,
 * otherwise the old generation's (a `null` in the young generation is an answer).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedMap, BoundedSet } from '../../src/engine/bounded.js';

type Gens<K, V> = { _young: Map<K, V>; _old: Map<K, V> | undefined };

/** What `get` answered before the cache: young first unless `undefined`, then old. */
function oracle<K, V>(m: BoundedMap<K, V>, k: K): V | undefined {
  const g = m as unknown as Gens<K, V>;
  const v = g._young.get(k);
  return v !== undefined ? v : g._old?.get(k);
}

describe('BoundedMap: undefined and null values against the uncached answer', () => {
  it('a key set to undefined after a lookup still answers the older generation', () => {
    const m = new BoundedMap<string, string | undefined>(4); // half = 2
    m.set('a', 'old');
    m.set('b', 'x'); // flip: a and b are old
    expect(m.get('a')).toBe('old'); // remembered
    m.set('a', undefined); // young: a → undefined (no flip)
    expect(m.get('a')).toBe(oracle(m, 'a'));
    expect(m.get('a')).toBe('old');
  });

  it('a null value in the young generation is the answer, not the older value', () => {
    const m = new BoundedMap<string, string | null>(4);
    m.set('a', 'old');
    m.set('b', 'x'); // flip
    m.set('a', null); // young: a → null
    expect(m.get('a')).toBe(oracle(m, 'a'));
    expect(m.get('a')).toBeNull();
  });

  it('any sequence of operations with undefined/null values and keys answers as the generations do (fast-check)', () => {
    const key = fc.constantFrom<string | undefined>('a', 'b', 'c', 'd', undefined);
    const value = fc.constantFrom<number | null | undefined>(0, 1, 2, null, undefined);
    const op = fc.oneof(
      fc.record({ op: fc.constant('set' as const), key, value }),
      fc.record({ op: fc.constantFrom('get' as const, 'delete' as const), key }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 6 }), (ops, max) => {
        const m = new BoundedMap<string | undefined, number | null | undefined>(max);
        for (const o of ops) {
          if (o.op === 'set') m.set(o.key, o.value);
          else if (o.op === 'get') expect(m.get(o.key)).toBe(oracle(m, o.key));
          else m.delete(o.key);
          for (const k of ['a', 'b', 'c', 'd', undefined]) expect(m.get(k)).toBe(oracle(m, k));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('BoundedSet: undefined members and deletes against the generations', () => {
  it('any sequence of add/has/delete with undefined answers as the generations do (fast-check)', () => {
    const v = fc.constantFrom<string | undefined>('a', 'b', 'c', undefined);
    const op = fc.record({ op: fc.constantFrom('add' as const, 'has' as const, 'delete' as const), v });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 6 }), (ops, max) => {
        const s = new BoundedSet<string | undefined>(max);
        const g = s as unknown as { _young: Set<string | undefined>; _old: Set<string | undefined> | undefined };
        for (const o of ops) {
          if (o.op === 'add') s.add(o.v);
          else if (o.op === 'delete') s.delete(o.v);
          for (const k of ['a', 'b', 'c', undefined]) expect(s.has(k)).toBe(g._young.has(k) || (g._old?.has(k) ?? false));
        }
      }),
      { numRuns: 300 },
    );
  });
});

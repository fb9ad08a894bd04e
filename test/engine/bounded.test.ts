/**
 * The engines' bounded collections: a `BoundedMap` and a `BoundedSet` answer as their two
 * generations do, whatever the sequence of operations (their last-lookup caches included).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedMap, BoundedSet } from '../../src/engine/bounded.js';

describe('BoundedMap', () => {
  type Op = { readonly op: 'set'; readonly key: number; readonly value: number } | { readonly op: 'get' | 'delete'; readonly key: number };
  const key = fc.integer({ min: 0, max: 7 });
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ op: fc.constant('set' as const), key, value: fc.integer() }),
    fc.record({ op: fc.constantFrom('get' as const, 'delete' as const), key }),
  );

  it('get is always what the generations hold (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), fc.integer({ min: 1, max: 8 }), (ops, max) => {
        const m = new BoundedMap<string, number>(max);
        const gens = m as unknown as { _young: Map<string, number>; _old: Map<string, number> | undefined };
        for (const o of ops) {
          const k = `k${o.key}`;
          if (o.op === 'set') m.set(k, o.value);
          else if (o.op === 'get') m.get(k);
          else m.delete(k);
          for (let i = 0; i <= 7; i++) expect(m.get(`k${i}`)).toBe(gens._young.get(`k${i}`) ?? gens._old?.get(`k${i}`));
        }
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    { desc: 'a value set again is the new value', steps: [['set', 'a', 1], ['get', 'a', 1], ['set', 'a', 2], ['get', 'a', 2]] },
    { desc: 'a deleted key is gone, though just looked up', steps: [['set', 'a', 1], ['get', 'a', 1], ['delete', 'a'], ['get', 'a', undefined]] },
    // max 4: generations of two entries; the fourth set drops the generation of the first two
    { desc: 'a key looked up, then dropped with its generation, is gone', steps: [['set', 'a', 1], ['get', 'a', 1], ['set', 'b', 2], ['set', 'c', 3], ['get', 'a', 1], ['set', 'd', 4], ['get', 'a', undefined], ['get', 'b', undefined], ['get', 'c', 3], ['get', 'd', 4]] },
  ] as const)('$desc', ({ steps }) => {
    const m = new BoundedMap<string, number>(4);
    for (const [op, k, v] of steps as readonly (readonly [string, string, number?])[]) {
      if (op === 'set') m.set(k, v as number);
      else if (op === 'delete') m.delete(k);
      else expect(m.get(k)).toBe(v);
    }
  });
});

describe('BoundedSet', () => {
  type Op = { readonly op: 'add' | 'has' | 'delete'; readonly value: number };
  const op: fc.Arbitrary<Op> = fc.record({ op: fc.constantFrom('add' as const, 'has' as const, 'delete' as const), value: fc.integer({ min: 0, max: 7 }) });

  it('has is always what the generations hold, and an added value is held (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), fc.integer({ min: 1, max: 8 }), (ops, max) => {
        const s = new BoundedSet<string>(max);
        const gens = s as unknown as { _young: Set<string>; _old: Set<string> | undefined };
        for (const o of ops) {
          const v = `v${o.value}`;
          if (o.op === 'add') {
            s.add(v);
            expect(s.has(v)).toBe(true);
          } else if (o.op === 'has') s.has(v);
          else s.delete(v);
          for (let i = 0; i <= 7; i++) expect(s.has(`v${i}`)).toBe(gens._young.has(`v${i}`) || (gens._old?.has(`v${i}`) ?? false));
          expect(s.size).toBeLessThanOrEqual(max + 1);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a value added at generation g is in the young generation while the generation is still g, unless deleted (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 80 }), fc.integer({ min: 1, max: 8 }), (ops, max) => {
        const s = new BoundedSet<string>(max);
        const young = () => (s as unknown as { _young: Set<string> })._young;
        const addedAt = new Map<string, number>();
        let last = s.generation;
        for (const o of ops) {
          const v = `v${o.value}`;
          if (o.op === 'add') {
            const g = s.generation;
            s.add(v);
            // a value that filled the young generation went with it: noted at the generation it is held in
            addedAt.set(v, young().has(v) ? s.generation : g);
          } else if (o.op === 'has') s.has(v);
          else {
            s.delete(v);
            addedAt.delete(v);
          }
          expect(s.generation - last === 0 || s.generation - last === 1).toBe(true);
          last = s.generation;
          for (const [value, g] of addedAt) if (g === s.generation) expect(young().has(value)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a value added again after its generation was dropped is held again', () => {
    const s = new BoundedSet<string>(4); // generations of two
    s.add('a');
    s.add('a'); // known young: no second entry
    s.add('b'); // young full: becomes old
    s.add('c');
    s.add('d'); // the generation of a and b is dropped
    expect(s.has('a')).toBe(false);
    s.add('a');
    expect(s.has('a')).toBe(true);
  });
});

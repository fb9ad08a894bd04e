import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digestCanonicalText, digestJsonText, emptyArgumentsDigest, sameArgumentsDigest } from '../src/engine/call-digest.js';
import type { ArgumentsDigest } from '../src/engine/call-digest.js';
import { canonicalArgumentsText, canonicalJson } from '../src/engine/fingerprint.js';

/** The reference: digest of the canonical JSON of the parsed value (or of `{ raw }`). */
function slow(text: string): ArgumentsDigest {
  const d = emptyArgumentsDigest();
  digestCanonicalText(canonicalArgumentsText(text), d);
  return d;
}

function fast(text: string): ArgumentsDigest | undefined {
  const d = emptyArgumentsDigest();
  return digestJsonText(text, d) ? d : undefined;
}

/** JSON text of `value` with its top-level keys in a given order and some indentation. */
function write(value: unknown, indent: number | string, topOrder: number[]): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value, null, indent);
  const keys = Object.keys(value);
  const ordered = topOrder.length === 0 ? keys : [...keys].sort((a, b) => (topOrder[keys.indexOf(a) % topOrder.length] ?? 0) - (topOrder[keys.indexOf(b) % topOrder.length] ?? 0));
  const inner = ordered.map((k) => `${JSON.stringify(k)}: ${JSON.stringify((value as Record<string, unknown>)[k], null, indent)}`);
  return `{${inner.join(', ')}}`;
}

describe('digestJsonText: the digest of the canonical JSON, computed from the text', () => {
  it.each([
    ['qwen-code pretty, one argument', '{\n  "file_path": "/workspace/demo/missing.txt"\n}'],
    ['pretty, top-level keys out of order', '{\n  "file_path": "/a.ts",\n  "content": "x\\ny",\n  "append": false\n}'],
    ['compact canonical', '{"a":[1,2,{"b":null,"c":"d"}],"z":-3.5}'],
    ['a bare string', '"x"'],
    ['a number', '12'],
    ['an array', '[ true, false, null ]'],
    ['empty containers', '{ "a": {}, "b": [] }'],
    ['non-ASCII and a surrogate pair', '{"é":"😀 ü"}'],
    ['index-like keys at the top', '{"9":"a","10":"b"}'],
    ['canonical escapes', '{"s":"tab\\t quote\\" backslash\\\\"}'],
    ['a large integer written in its shortest form', '{"n": 100000000000000000000}'],
  ])('%s: fast path, equal to the parsed path', (_d, text) => {
    const f = fast(text);
    expect(f).toBeDefined();
    expect(f).toEqual(slow(text));
    expect(f!.length).toBe(canonicalArgumentsText(text).length);
  });

  it.each([
    ['nested keys out of order', '{"a":{"z":1,"b":2}}'],
    ['a \\u escape', '{"a":"\\u0041"}'],
    ['an escaped slash', '"a\\/b"'],
    ['a non-shortest number', '{"a":1.0}'],
    ['minus zero', '[-0]'],
    ['an exponent', '1e3'],
    ['an integer beyond 2^53 that does not round-trip', '{"n": 123456789012345678901}'],
    ['duplicate top-level keys', '{"a":1,"a":2}'],
    ['duplicate nested keys', '{"x":{"a":1,"a":2}}'],
    ['an escaped key', '{"a\\"b":1}'],
    ['a lone surrogate', '"\ud800"'],
    ['not JSON', 'not json'],
    ['truncated', '{\n  "file_path": "/a'],
    ['trailing garbage', '{"a":1} x'],
    ['empty', ''],
    ['a leading zero', '[01]'],
    ['a trailing comma', '[1,]'],
  ])('%s: left to the parsed path', (_d, text) => {
    expect(fast(text)).toBeUndefined();
  });

  it('same arguments give the same digest whatever the whitespace and top-level key order; different arguments differ', () => {
    const a = fast('{\n  "view": "ranges",\n  "scope": "uncompressed"\n}')!;
    expect(sameArgumentsDigest(a, fast('{"scope":"uncompressed","view":"ranges"}')!)).toBe(true);
    expect(sameArgumentsDigest(a, slow('{"view": "ranges", "scope": "uncompressed"}'))).toBe(true);
    expect(sameArgumentsDigest(a, fast('{"scope":"compressed","view":"ranges"}')!)).toBe(false);
    expect(sameArgumentsDigest(a, fast('{"scope":"uncompressed","view":"rangez"}')!)).toBe(false);
  });

  it('property: for any JSON value, written with any indentation and top-level key order, a fast digest equals the parsed one', () => {
    let taken = 0;
    let runs = 0;
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 1, 2, '\t'), fc.array(fc.nat(), { maxLength: 8 }), (value, indent, topOrder) => {
        const text = write(value, indent, topOrder);
        const f = fast(text);
        const expected = emptyArgumentsDigest();
        digestCanonicalText(canonicalJson(JSON.parse(text)), expected);
        runs++;
        if (f !== undefined) {
          taken++;
          expect(f).toEqual(expected);
        }
        expect(slow(text)).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
    expect(taken / runs).toBeGreaterThan(0.3); // the fast path is exercised, not just skipped
  });

  it('property: any text the fast path accepts is JSON, and its digest is the parsed one', () => {
    const jsonish = fc.stringMatching(/^[\s{}[\]",:0-9eE.+\-tfrunalsx\\é😀]{0,24}$/u);
    fc.assert(
      fc.property(fc.oneof(jsonish, fc.string(), fc.jsonValue().map((v) => JSON.stringify(v))), (text) => {
        const f = fast(text);
        if (f === undefined) return;
        expect(() => JSON.parse(text)).not.toThrow();
        expect(f).toEqual(slow(text));
      }),
      { numRuns: 5000 },
    );
  });
});

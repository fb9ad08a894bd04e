import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  argumentsFingerprint,
  argumentsTextFingerprint,
  canonicalJson,
  parseArgumentsJson,
} from '../src/engine/fingerprint.js';

type SerializeCase = { readonly desc: string; readonly value: unknown; readonly expected: string };

describe('canonicalJson', () => {
  it.each<SerializeCase>([
    { desc: 'sorts top-level keys', value: { view: 'ranges', scope: 'uncompressed' }, expected: '{"scope":"uncompressed","view":"ranges"}' },
    { desc: 'keeps array order', value: [3, 1, 2], expected: '[3,1,2]' },
    { desc: 'sorts keys of nested objects, inside arrays too', value: { b: { d: 1, c: [{ z: 1, y: 2 }] }, a: null }, expected: '{"a":null,"b":{"c":[{"y":2,"z":1}],"d":1}}' },
    { desc: 'drops undefined, function and symbol properties', value: { a: undefined, b: 1, c: () => 1, d: Symbol('s') }, expected: '{"b":1}' },
    { desc: 'turns undefined, function and symbol array items into null', value: [undefined, () => 1, Symbol('s'), 1], expected: '[null,null,null,1]' },
    { desc: 'turns array holes into null', value: ((): unknown[] => { const a: unknown[] = []; a[0] = 1; a[2] = 3; return a; })(), expected: '[1,null,3]' },
    { desc: 'emits no whitespace and escapes strings', value: { 'k"y': 'a\nb', e: {} , f: [] }, expected: '{"e":{},"f":[],"k\\"y":"a\\nb"}' },
    { desc: 'non-finite numbers become null', value: [NaN, Infinity, -0], expected: '[null,null,0]' },
    { desc: 'honours toJSON (Date)', value: { at: new Date(0) }, expected: '{"at":"1970-01-01T00:00:00.000Z"}' },
    { desc: 'unwraps boxed primitives', value: [Object(1), Object('s'), Object(false)], expected: '[1,"s",false]' },
    { desc: 'top-level undefined is "null"', value: undefined, expected: 'null' },
    { desc: 'primitives', value: 'x', expected: '"x"' },
    { desc: 'accepts shared acyclic references', value: ((): unknown => { const s = { k: 1 }; return { a: s, b: [s] }; })(), expected: '{"a":{"k":1},"b":[{"k":1}]}' },
  ])('$desc', ({ value, expected }) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('is independent of key insertion order', () => {
    expect(canonicalJson({ a: 1, b: { c: 2, d: 3 } })).toBe(canonicalJson({ b: { d: 3, c: 2 }, a: 1 }));
  });

  it('agrees with JSON.parse / JSON.stringify on JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toStrictEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(JSON.parse(JSON.stringify(value, null, 2)))).toBe(text);
      }),
    );
  });

  type ThrowCase = { readonly desc: string; readonly make: () => unknown };
  it.each<ThrowCase>([
    { desc: 'a self-referencing object', make: () => { const o: Record<string, unknown> = {}; o['self'] = o; return o; } },
    { desc: 'a cycle through an array', make: () => { const a: unknown[] = []; a.push({ a }); return a; } },
    { desc: 'a bigint', make: () => ({ n: 1n }) },
  ])('throws a TypeError on $desc', ({ make }) => {
    expect(() => canonicalJson(make())).toThrow(TypeError);
  });
});

describe('argumentsFingerprint', () => {
  const base = argumentsFingerprint('acp_status', { scope: 'uncompressed', view: 'ranges' });

  it('is the first 96 bits of the SHA-256 digest of tool + NUL + canonical JSON, base64url', () => {
    expect(base).toMatch(/^[A-Za-z0-9_-]{16}$/);
    const full = createHash('sha256').update('acp_status\u0000{"scope":"uncompressed","view":"ranges"}').digest();
    expect(base).toBe(full.subarray(0, 12).toString('base64url'));
  });

  type FingerprintCase = { readonly desc: string; readonly tool: string; readonly args: unknown; readonly same: boolean };
  it.each<FingerprintCase>([
    { desc: 'same for reordered keys', tool: 'acp_status', args: { view: 'ranges', scope: 'uncompressed' }, same: true },
    { desc: 'same for parsed pretty JSON', tool: 'acp_status', args: JSON.parse('{\n  "view": "ranges",\n  "scope": "uncompressed"\n}'), same: true },
    { desc: 'differs when an argument changes', tool: 'acp_status', args: { scope: 'compressed', view: 'ranges' }, same: false },
    { desc: 'differs when an argument is added', tool: 'acp_status', args: { scope: 'uncompressed', view: 'ranges', x: 1 }, same: false },
    { desc: 'differs when the tool changes', tool: 'acp_search', args: { scope: 'uncompressed', view: 'ranges' }, same: false },
  ])('$desc', ({ tool, args, same }) => {
    expect(argumentsFingerprint(tool, args) === base).toBe(same);
  });
});

describe('parseArgumentsJson', () => {
  type ParseCase = { readonly desc: string; readonly text: unknown; readonly expected: ReturnType<typeof parseArgumentsJson> };
  it.each<ParseCase>([
    { desc: 'pretty JSON as qwen-code writes it', text: JSON.stringify({ scope: 'uncompressed', view: 'ranges' }, null, 2), expected: { ok: true, value: { scope: 'uncompressed', view: 'ranges' } } },
    { desc: 'compact JSON', text: '{"a":[1,2]}', expected: { ok: true, value: { a: [1, 2] } } },
    { desc: 'a JSON scalar', text: 'null', expected: { ok: true, value: null } },
    { desc: 'garbage', text: '{not json', expected: { ok: false } },
    { desc: 'truncated JSON', text: '{\n  "file_path": "/a', expected: { ok: false } },
    { desc: 'an empty string', text: '', expected: { ok: false } },
    { desc: 'a non-string at runtime', text: 42, expected: { ok: false } },
  ])('$desc', ({ text, expected }) => {
    // The attribute may hold any type at runtime; the function is typed for strings.
    expect(parseArgumentsJson(text as string)).toStrictEqual(expected);
  });
});

describe('argumentsTextFingerprint', () => {
  it.each([
    ['pretty, keys out of order', '{\n  "view": "ranges",\n  "scope": "uncompressed"\n}', { scope: 'uncompressed', view: 'ranges' }],
    ['nested objects and arrays', '{"b":[{"z":1,"a":[true,null,"é"]}],"a":{"y":2.5,"x":-0}}', { a: { x: 0, y: 2.5 }, b: [{ a: [true, null, 'é'], z: 1 }] }],
    ['a bare string', '"x"', 'x'],
    ['unicode keys', '{"é":1,"e":2,"Z":3}', { Z: 3, e: 2, é: 1 }],
    ['array-index-like keys', '{"9":"a","10":"b","x":{"2":1,"1":2}}', { 10: 'b', 9: 'a', x: { 1: 2, 2: 1 } }],
    ['sorted flat object', '{"a":1,"b":"two","c":null}', { c: null, b: 'two', a: 1 }],
    ['a "__proto__" key (found by fast-check)', '{"__proto__":"","":0}', JSON.parse('{"__proto__":"","":0}')],
  ])('%s: equals the fingerprint of the parsed value', (_d, text, value) => {
    expect(argumentsTextFingerprint('t', text)).toBe(argumentsFingerprint('t', value));
  });

  it('text that is not JSON is fingerprinted as { raw }', () => {
    expect(argumentsTextFingerprint('t', 'not json')).toBe(argumentsFingerprint('t', { raw: 'not json' }));
  });
});

describe('argumentsTextFingerprint (property)', () => {
  it('equals argumentsFingerprint of the parsed value for arbitrary JSON, pretty or compact', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        expect(argumentsTextFingerprint('tool', text)).toBe(argumentsFingerprint('tool', JSON.parse(text)));
      }),
      { numRuns: 2000 },
    );
  });
});

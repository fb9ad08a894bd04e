/**
 * The in-process hook's work bound (issue 13 item 5, issue 34 item 6): arguments a JavaScript host
 * can pass are serialised within a bound in values, characters, depth and `toJSON` calls. Over it
 * the call gets no repetition verdict: it neither counts nor resets the run, and the hook answers
 * `none`. The shapes are the issue's: a DAG (2^depth paths), 4,000 references to one 1 MiB string
 * (4 GiB serialised: the host ran out of memory), a 50 MiB Buffer (28 s), a `toJSON` returning a
 * depth-22 DAG (9.2 s).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_FINGERPRINT_BOUND } from '../src/engine/fingerprint-bound.js';
import { canonicalJson, canonicalJsonWithin } from '../src/engine/fingerprint.js';
import { createRepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';

const MiB = 1024 * 1024;

/** An object of depth `d` whose two keys reference the same child: d + 1 objects, 2^(d+1) paths. */
function dag(d: number): unknown {
  let node: unknown = { leaf: 'x' };
  for (let i = 0; i < d; i++) node = { left: node, right: node };
  return node;
}

function nested(d: number): unknown {
  let node: unknown = 1;
  for (let i = 0; i < d; i++) node = [node];
  return node;
}

const oneMiB = 'x'.repeat(MiB);
/** A 50 MiB Buffer whose toJSON records being called (Buffer's own builds an array of every byte). */
function watchedBuffer(): { value: Buffer; called: () => boolean } {
  const value = Buffer.alloc(50 * MiB);
  let called = false;
  const own = value.toJSON.bind(value);
  Object.defineProperty(value, 'toJSON', {
    value: () => {
      called = true;
      return own();
    },
  });
  return { value, called: () => called };
}

describe('canonicalJsonWithin: within the bound it is canonicalJson; past it, undefined', () => {
  it.each([
    { desc: 'a small tree', value: { b: [1, 2, { c: 'd' }], a: 1 }, within: true },
    { desc: 'primitives', value: 'text', within: true },
    { desc: 'a Date (its toJSON is followed)', value: { at: new Date(0) }, within: true },
    { desc: 'a small Buffer (its toJSON is followed)', value: { b: Buffer.from('abc') }, within: true },
    { desc: 'a 50 MiB ArrayBuffer (no own keys: {})', value: new ArrayBuffer(50 * MiB), within: true },
    { desc: 'a DAG of depth 10 (2,047 paths)', value: dag(10), within: true },
    { desc: 'one 1 MiB string referenced 3 times', value: Array.from({ length: 3 }, () => oneMiB), within: true },
    { desc: 'one 1 MiB string referenced 5 times (5 Mi characters)', value: Array.from({ length: 5 }, () => oneMiB), within: false },
    { desc: 'nesting at the depth bound', value: nested(DEFAULT_FINGERPRINT_BOUND.maxDepth), within: true },
    { desc: 'a DAG of depth 22 (over 8 million paths)', value: dag(22), within: false },
    { desc: 'a DAG of depth 60', value: dag(60), within: false },
    { desc: 'nesting past the depth bound', value: nested(DEFAULT_FINGERPRINT_BOUND.maxDepth + 1), within: false },
    { desc: 'an array longer than the node bound', value: new Array(DEFAULT_FINGERPRINT_BOUND.maxNodes + 1).fill(0), within: false },
    { desc: '4,000 references to one 1 MiB string', value: Array.from({ length: 4_000 }, () => oneMiB), within: false },
    { desc: 'a 50 MiB Uint8Array (no toJSON: 52 million keys)', value: { data: new Uint8Array(50 * MiB) }, within: false },
    { desc: 'a 50 MiB Float64Array view', value: new Float64Array(new ArrayBuffer(50 * MiB)), within: false },
    { desc: 'a toJSON returning a depth-22 DAG', value: { toJSON: () => dag(22) }, within: false },
    { desc: '20,000 Dates (20,000 toJSON calls)', value: Array.from({ length: 20_000 }, () => new Date(0)), within: false },
  ])('$desc → within: $within', ({ value, within }) => {
    const out = canonicalJsonWithin(value, DEFAULT_FINGERPRINT_BOUND);
    if (within) expect(out).toBe(canonicalJson(value));
    else expect(out).toBeUndefined();
  });

  it('a 50 MiB Buffer is refused before its toJSON is called', () => {
    const b = watchedBuffer();
    expect(canonicalJsonWithin({ file: b.value }, DEFAULT_FINGERPRINT_BOUND)).toBeUndefined();
    expect(b.called()).toBe(false);
  });

  it('a cycle is cut by the node bound (no verdict), never followed forever', () => {
    const o: Record<string, unknown> = {};
    o.self = o;
    expect(canonicalJsonWithin(o, DEFAULT_FINGERPRINT_BOUND)).toBeUndefined();
  });

  it.each([
    { bound: 'maxNodes', value: [1, 2, 3], limit: { maxNodes: 3 } },
    { bound: 'maxChars', value: ['abc', 'abc'], limit: { maxChars: 5 } },
    { bound: 'maxDepth', value: [[[1]]], limit: { maxDepth: 2 } },
    { bound: 'maxToJsonCalls', value: [new Date(0), new Date(0)], limit: { maxToJsonCalls: 1 } },
  ])('each bound is enforced on its own: $bound', ({ value, limit }) => {
    const loose = { maxNodes: 1_000, maxDepth: 100, maxChars: 1_000, maxToJsonCalls: 100 };
    expect(canonicalJsonWithin(value, loose)).toBe(canonicalJson(value));
    expect(canonicalJsonWithin(value, { ...loose, ...limit })).toBeUndefined();
  });
});

describe('beforeToolCall with hostile arguments', () => {
  const huge = [
    { desc: 'a DAG of depth 60', args: () => dag(60) },
    { desc: '4,000 references to one 1 MiB string', args: () => ({ parts: Array.from({ length: 4_000 }, () => oneMiB) }) },
    { desc: 'a 50 MiB Buffer', args: () => ({ file: Buffer.alloc(50 * MiB) }) },
    { desc: 'a toJSON returning a depth-22 DAG', args: () => ({ toJSON: () => dag(22) }) },
  ];
  it.each(huge)('$desc: answered (none), no verdict, and the run around it unchanged: the third identical call still warns', async ({ args }) => {
    const guard = createRepeatedToolFailureGuard({ mode: 'enforce', sweepIntervalMillis: 0 });
    const call = (callId: string, a: unknown) => guard.control.beforeToolCall({ sessionId: 's', promptId: 's########1', callId, toolName: 'acp_status', arguments: a }).type;
    const same = { view: 'ranges' };
    expect(call('c1', same)).toBe('none');
    expect(call('c2', same)).toBe('none');
    expect(call('c3', args())).toBe('none');
    expect(call('c4', same)).toBe('warn');
    await guard.shutdown();
  });
});

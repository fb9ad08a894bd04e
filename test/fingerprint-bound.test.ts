/**
 * Issue 13 item 5: arguments with shared sub-objects (a DAG) made canonical serialisation take
 * 2^depth steps inside `beforeToolCall`. Over the work bound the call gets no repetition verdict: it
 * neither counts nor resets the run, and the hook answers `none`.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_FINGERPRINT_BOUND, withinFingerprintBound } from '../src/engine/fingerprint-bound.js';
import { createRepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';

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

describe('withinFingerprintBound', () => {
  it.each([
    { desc: 'a small tree', value: { a: 1, b: [1, 2, { c: 'd' }] }, expected: true },
    { desc: 'primitives', value: 'text', expected: true },
    { desc: 'a DAG of depth 10 (2,047 paths)', value: dag(10), expected: true },
    { desc: 'a DAG of depth 22 (over 8 million paths)', value: dag(22), expected: false },
    { desc: 'a DAG of depth 60', value: dag(60), expected: false },
    { desc: 'nesting at the depth bound', value: nested(DEFAULT_FINGERPRINT_BOUND.maxDepth), expected: true },
    { desc: 'nesting past the depth bound', value: nested(DEFAULT_FINGERPRINT_BOUND.maxDepth + 1), expected: false },
    { desc: 'an array longer than the node bound', value: new Array(DEFAULT_FINGERPRINT_BOUND.maxNodes + 1).fill(0), expected: false },
    { desc: 'a Date (toJSON is not followed)', value: { at: new Date(0) }, expected: true },
  ])('$desc → $expected', ({ value, expected }) => {
    expect(withinFingerprintBound(value)).toBe(expected);
  });

  it('a cycle is cut by the node bound, not followed forever', () => {
    const o: Record<string, unknown> = {};
    o.self = o;
    expect(withinFingerprintBound(o)).toBe(false);
  });
});

describe('beforeToolCall with DAG arguments', () => {
  it('gets no verdict and leaves the run as it was: the third identical call still warns', async () => {
    const guard = createRepeatedToolFailureGuard({ mode: 'enforce', sweepIntervalMillis: 0 });
    const call = (callId: string, args: unknown) =>
      guard.control.beforeToolCall({ sessionId: 's', promptId: 's########1', callId, toolName: 'acp_status', arguments: args }).type;
    const same = { view: 'ranges' };
    expect(call('c1', same)).toBe('none');
    expect(call('c2', same)).toBe('none');
    expect(call('c3', dag(60))).toBe('none');
    expect(call('c4', same)).toBe('warn');
    await guard.shutdown();
  });
});

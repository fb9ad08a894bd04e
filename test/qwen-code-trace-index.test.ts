/**
 * The qwen-code profile's trace index (trace → prompt, trace → interaction span) under streams that
 * stress it: few traces, including the invalid ids `''` and all zeros, prompts sharing traces,
 * subagent and nested (out-of-scope) spans, small prompt tables, idle sweeps and byte-budget
 * evictions (an evicted prompt gets no later decision), and 2^16 prompt-only traces flooding the
 * index while a prompt is open (its subagent's calls stay out of scope: a single map of both kinds
 * of entry failed that, so the profile keeps two).
 */
import fc from 'fast-check';
import type { SpanContext } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { createRepeatedToolFailureGuard } from '../src/index.js';
import type { BatchDecision } from '../src/engine/failure-types.js';
import type { LogRecordView, SpanView, WireProfile } from '../src/profiles/wire-profile.js';
import { QwenCodeProfile } from '../src/profiles/qwen-code/qwen-code-profile.js';

const TRACES = ['', '00000000000000000000000000000000', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'cccccccccccccccccccccccccccccccc'];
const SPANS = ['1111111111111111', '2222222222222222', '3333333333333333', '4444444444444444', '5555555555555555', '6666666666666666'];
const PROMPTS = ['sess-1########1', 'sess-1########2', 'sess-2########1', 'sess-1########1#sub'];
const SESSIONS = ['sess-1', 'sess-2', undefined];

type Cmd =
  | { k: 'interaction'; end: boolean; t: number; s: number; p: number; msg: string | undefined; cancelled: boolean }
  | { k: 'llm'; t: number; s: number; parent: number | undefined; p: number; ctx: string | undefined; session: number }
  | { k: 'subagent'; t: number; s: number }
  | { k: 'tool'; end: boolean; exec: boolean; t: number; s: number; parent: number | undefined; call: number; nested: boolean; status: string | undefined }
  | { k: 'toolLog'; t: number | undefined; s: number; p: number; call: number; status: string; exec: string | undefined; err: string | undefined; args: string | undefined }
  | { k: 'apiLog'; t: number | undefined; p: number; session: number }
  | { k: 'userPrompt'; p: number }
  | { k: 'loop'; p: number }
  | { k: 'tick'; ms: number }
  | { k: 'sweep' }
  | { k: 'batch'; t: number; s: number; p: number; calls: { call: number; fail: boolean; under: number | undefined }[] };

// (biased to a few valid traces and one prompt, so that batches close with complete calls)
const t = fc.oneof({ weight: 1, arbitrary: fc.constantFrom(0, 1, 4) }, { weight: 4, arbitrary: fc.constantFrom(2, 3) });
const s = fc.nat(SPANS.length - 1);
const p = fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(PROMPTS.length - 1) });
const call = fc.nat(3);
const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ k: fc.constant('interaction' as const), end: fc.boolean().chain((b) => (b ? fc.boolean() : fc.constant(false))).chain((b) => (b ? fc.boolean() : fc.constant(false))), t, s, p, msg: fc.constantFrom(undefined, 'acp_prompt', 'cron', 'userQuery'), cancelled: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('llm' as const), t, s, parent: optional(s), p, ctx: fc.constantFrom(undefined, 'interaction', 'subagent'), session: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('subagent' as const), t, s }) },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('tool' as const), end: fc.boolean(), exec: fc.boolean(), t, s, parent: optional(s), call, nested: fc.boolean(), status: fc.constantFrom(undefined, 'error', 'success') }) },
  {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant('toolLog' as const),
      t: optional(t),
      s,
      p,
      call,
      status: fc.constantFrom('error', 'success', 'cancelled'),
      exec: fc.constantFrom(undefined, 'error', 'success'),
      err: fc.constantFrom(undefined, 'file_not_found', 'shell_execute_error'),
      args: fc.constantFrom(undefined, '{"path":"/x"}'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('apiLog' as const), t: optional(t), p, session: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('userPrompt' as const), p }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('loop' as const), p }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('tick' as const), ms: fc.constantFrom(10, 2_000) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'sweep' as const }) },
  // a model request under the interaction span `s` and its tool calls (each under `s`, or under another span)
  {
    weight: 6,
    arbitrary: fc.record({
      k: fc.constant('batch' as const),
      t,
      s: fc.constantFrom(0, 1),
      p,
      calls: fc.array(fc.record({ call, fail: fc.boolean(), under: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: s }) }), { maxLength: 3 }),
    }),
  },
);

/** A guard with the qwen-code profile, a settable clock, and everything it reports. */
function pair(maxOpenPrompts: number, maxCallsPerBatch: number, maxHeldBytes?: number) {
  let now = 1_700_000_000_000;
  const make = (create: (e: never, r: never) => WireProfile) => {
    let profile: WireProfile | undefined;
    const events: unknown[] = [];
    const guard = createRepeatedToolFailureGuard({
      mode: 'enforce',
      maxOpenPrompts,
      maxCallsPerBatch,
      promptIdleMillis: 1_000,
      ...(maxHeldBytes === undefined ? {} : { maxHeldBytes }),
      sweepIntervalMillis: 0,
      clock: () => now,
      profile: (engine, repetition) => {
        profile = create(engine as never, repetition as never);
        return profile;
      },
    });
    guard.addListener({
      onDecision: (d) => events.push(['decision', d]),
      onUnjudgedBatch: (...a) => events.push(['unjudged', ...a]),
      onEviction: (...a) => events.push(['eviction', ...a]),
      onPromptForgotten: (...a) => events.push(['forgotten', ...a]),
      onRepetitionDecision: (r) => events.push(['repetition', r]),
    });
    return { guard, profile: profile as WireProfile, events };
  };
  const current = make((e, r) => new QwenCodeProfile(e, r));
  let calls = 100;
  return { current, nextCall: () => calls++, advance: (ms: number) => (now += ms), hr: (): [number, number] => [Math.floor(now / 1000), (now % 1000) * 1e6] };
}

const sc = (traceId: string, spanId: string): SpanContext => ({ traceId, spanId, traceFlags: 1 });

function span(name: string, traceId: string, spanId: string, parent: string | undefined, attributes: Record<string, unknown>, time: [number, number]): SpanView {
  return { name, attributes, spanContext: () => sc(traceId, spanId), parentSpanContext: parent === undefined ? undefined : sc(traceId, parent), startTime: time, endTime: time };
}

function log(attributes: Record<string, unknown>, traceId: string | undefined, spanId: string, time: [number, number]): LogRecordView {
  return { hrTime: time, attributes: attributes as LogRecordView['attributes'], spanContext: traceId === undefined ? undefined : sc(traceId, spanId), instrumentationScope: { name: 'qwen-code' } };
}

/** Run one command. */
function run(h: ReturnType<typeof pair>, c: Cmd): void {
  const both = (f: (profile: WireProfile) => void) => f(h.current.profile);
  h.advance(1);
  const time = h.hr();
  switch (c.k) {
    case 'interaction': {
      const v = span('qwen-code.interaction', TRACES[c.t]!, SPANS[c.s]!, undefined, { 'qwen-code.prompt_id': PROMPTS[c.p], 'qwen-code.message_type': c.msg, ...(c.end ? { 'qwen-code.turn_status': c.cancelled ? 'cancelled' : 'ok' } : {}) }, time);
      both((pr) => (c.end ? pr.onSpanEnd(v) : pr.onSpanStart(v)));
      return;
    }
    case 'llm': {
      const v = span('qwen-code.llm_request', TRACES[c.t]!, SPANS[c.s]!, c.parent === undefined ? undefined : SPANS[c.parent], { 'qwen-code.prompt_id': PROMPTS[c.p], 'llm_request.context': c.ctx, 'session.id': SESSIONS[c.session] }, time);
      both((pr) => pr.onSpanStart(v));
      return;
    }
    case 'subagent': {
      const v = span('qwen-code.subagent', TRACES[c.t]!, SPANS[c.s]!, undefined, {}, time);
      both((pr) => pr.onSpanStart(v));
      return;
    }
    case 'tool': {
      const attrs: Record<string, unknown> = { 'tool.call_id': `c${c.call}`, 'gen_ai.tool.name': 'read_file', 'gen_ai.tool.call.arguments': '{"path":"/x"}' };
      if (c.nested) attrs.parent_call_id = 'c9';
      if (c.exec && c.end && c.status !== undefined) Object.assign(attrs, { execution_status: c.status, error_type: c.status === 'error' ? 'file_not_found' : undefined });
      const v = span(c.exec ? 'qwen-code.tool.execution' : 'qwen-code.tool', TRACES[c.t]!, SPANS[c.s]!, c.parent === undefined ? undefined : SPANS[c.parent], attrs, time);
      both((pr) => (c.end ? pr.onSpanEnd(v) : pr.onSpanStart(v)));
      return;
    }
    case 'toolLog': {
      const v = log(
        { 'event.name': 'qwen-code.tool_call', prompt_id: PROMPTS[c.p], call_id: `c${c.call}`, function_name: 'read_file', status: c.status, execution_status: c.exec, error_type: c.err, function_args: c.args, tool_type: 'native' },
        c.t === undefined ? undefined : TRACES[c.t],
        SPANS[c.s]!,
        time,
      );
      both((pr) => pr.onLogRecord(v));
      return;
    }
    case 'apiLog': {
      const v = log({ 'event.name': 'qwen-code.api_request', prompt_id: PROMPTS[c.p], 'session.id': SESSIONS[c.session] }, c.t === undefined ? undefined : TRACES[c.t], SPANS[0]!, time);
      both((pr) => pr.onLogRecord(v));
      return;
    }
    case 'userPrompt': {
      const v = log({ 'event.name': 'qwen-code.user_prompt', prompt_id: PROMPTS[c.p] }, undefined, SPANS[0]!, time);
      both((pr) => pr.onLogRecord(v));
      return;
    }
    case 'loop': {
      const v = log({ 'event.name': 'loop_detected', prompt_id: PROMPTS[c.p], loop_type: 'turn_tool_call_cap' }, undefined, SPANS[0]!, time);
      both((pr) => pr.onLogRecord(v));
      return;
    }
    case 'tick':
      h.advance(c.ms);
      return;
    case 'sweep':
      h.current.guard.sweep();
      return;
    case 'batch': {
      run(h, { k: 'llm', t: c.t, s: 5, parent: c.s, p: c.p, ctx: 'interaction', session: 0 });
      for (const x of c.calls) {
        // (a fresh call id: an id once seen out of scope stays out of scope in its trace)
        const id = h.nextCall();
        const parent = x.under ?? c.s;
        const status = x.fail ? 'error' : 'success';
        run(h, { k: 'tool', end: false, exec: false, t: c.t, s: 2, parent, call: id, nested: false, status: undefined });
        run(h, { k: 'tool', end: false, exec: true, t: c.t, s: 3, parent: 2, call: id, nested: false, status: undefined });
        run(h, { k: 'tool', end: true, exec: true, t: c.t, s: 3, parent: 2, call: id, nested: false, status });
        run(h, { k: 'tool', end: true, exec: false, t: c.t, s: 2, parent, call: id, nested: false, status: undefined });
        run(h, { k: 'toolLog', t: c.t, s: 2, p: c.p, call: id, status, exec: status, err: x.fail ? 'file_not_found' : undefined, args: '{"path":"/x"}' });
      }
      return;
    }
  }
}

/** An evicted prompt is evicted for good: no decision of it after its eviction. */
function expectNoDecisionAfterEviction(events: readonly unknown[]): void {
  const evicted = new Set<string>();
  for (const e of events as [string, ...unknown[]][]) {
    if (e[0] === 'eviction') evicted.add(e[1] as string);
    else if (e[0] === 'decision') expect(evicted.has((e[1] as BatchDecision).promptId), (e[1] as BatchDecision).promptId).toBe(false);
  }
}

describe('the qwen-code trace index', () => {
  it('no decision after an eviction, on any small stream (fast-check)', async () => {
    let decisions = 0;
    const TALLY: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 20, maxLength: 120 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 4 }), async (cmds, maxOpen, maxCalls) => {
        const h = pair(maxOpen, maxCalls);
        for (const c of cmds) run(h, c);
        h.current.guard.sweep();
        expectNoDecisionAfterEviction(h.current.events);
        for (const e of h.current.events) {
          const k = String((e as unknown[])[0]);
          TALLY[k] = (TALLY[k] ?? 0) + 1;
        }
        decisions = TALLY.decision ?? 0;
        await h.current.guard.shutdown();
      }),
      { numRuns: 300 },
    );
    // not vacuous: batches are judged, prompts are forgotten (the trace index follows), the breaker decides
    expect(decisions).toBeGreaterThan(150);
    expect(TALLY.forgotten).toBeGreaterThan(100);
    expect(TALLY.repetition).toBeGreaterThan(50);
  });

  it('a subagent tool span under an unseen parent stays out of scope after 2^16 other traces', async () => {
    const h = pair(8, 64);
    const S0 = SPANS[0]!;
    const P0 = PROMPTS[0]!;
    run(h, { k: 'interaction', end: false, t: 2, s: 0, p: 0, msg: 'acp_prompt', cancelled: false });
    run(h, { k: 'llm', t: 2, s: 1, parent: 0, p: 0, ctx: 'interaction', session: 0 });
    // another prompt's model requests (logs only), each on a trace of its own: 70,000 traces
    for (let i = 0; i < 70_000; i++) {
      const v = log({ 'event.name': 'qwen-code.api_request', prompt_id: PROMPTS[2], 'session.id': 'sess-2' }, i.toString(16).padStart(32, 'f'), S0, h.hr());
      h.current.profile.onLogRecord(v);
    }
    // P0's trace again, then a tool span whose parent (a subagent's, not seen) is not the interaction
    run(h, { k: 'toolLog', t: 2, s: 2, p: 0, call: 0, status: 'success', exec: 'success', err: undefined, args: undefined });
    for (let round = 0; round < 3; round++) {
      run(h, { k: 'tool', end: false, exec: false, t: 2, s: 4, parent: 5, call: 1 + round, nested: false, status: undefined });
      run(h, { k: 'tool', end: true, exec: false, t: 2, s: 4, parent: 5, call: 1 + round, nested: false, status: undefined });
      run(h, { k: 'toolLog', t: 2, s: 4, p: 0, call: 1 + round, status: 'error', exec: 'error', err: 'file_not_found', args: undefined });
    }
    run(h, { k: 'interaction', end: true, t: 2, s: 0, p: 0, msg: 'acp_prompt', cancelled: false });
    // Design: calls under anything but the interaction span are out of scope (a subagent's), so
    // P0's one batch holds only c0 and the breaker sees no run of identical calls.
    const decisions = h.current.events.filter((e) => (e as unknown[])[0] === 'decision').map((e) => (e as [string, BatchDecision])[1]);
    expect(decisions.filter((d) => d.promptId === P0).map((d) => d.receipt.observations.map((o) => o.callId))).toEqual([['c0']]);
    expect(h.current.events.filter((e) => (e as unknown[])[0] === 'repetition')).toEqual([]);
    await h.current.guard.shutdown();
  });

  it('byte-budget evictions: an evicted prompt never comes back, whichever prompt was looked up last', async () => {
    // 64 KiB held at most; each prompt's batch holds calls with long tool names, so admitting and
    // growing a prompt evicts the oldest ones by bytes, not by count
    const h = pair(64, 16, 65_536);
    const big = 'n'.repeat(3_000);
    const evictedSeen: string[] = [];
    for (let i = 0; i < 40; i++) {
      const promptId = `sess-${i}########1`;
      const trace = (i + 1).toString(16).padStart(32, '0');
      const view = (name: string, spanId: string, parent: string | undefined, attributes: Record<string, unknown>) => span(name, trace, spanId, parent, attributes, h.hr());
      const both = (f: (pr: WireProfile) => void) => f(h.current.profile);
      both((pr) => pr.onSpanStart(view('qwen-code.interaction', 'a000000000000001', undefined, { 'qwen-code.prompt_id': promptId, 'qwen-code.message_type': 'acp_prompt' })));
      for (let b = 0; b < 3; b++) {
        both((pr) => pr.onSpanStart(view('qwen-code.llm_request', `b00000000000000${b}`, 'a000000000000001', { 'qwen-code.prompt_id': promptId, 'llm_request.context': 'interaction' })));
        for (let c = 0; c < 4; c++) {
          const callId = `call-${b}-${c}-${big}`;
          const tool = view('qwen-code.tool', `c0000000000000${b}${c}`, 'a000000000000001', { 'tool.call_id': callId, 'gen_ai.tool.name': `${big}${c}` });
          both((pr) => pr.onSpanStart(tool));
          both((pr) => pr.onSpanEnd(tool));
          const l = log({ 'event.name': 'qwen-code.tool_call', prompt_id: promptId, call_id: callId, function_name: `${big}${c}`, status: 'error', execution_status: 'error', error_type: 'file_not_found' }, trace, `c0000000000000${b}${c}`, h.hr());
          both((pr) => pr.onLogRecord(l));
          // an evicted prompt's records again: the oldest evicted one, looked up right after the live one
          const first = evictedSeen[0];
          if (first !== undefined) {
            const late = log({ 'event.name': 'qwen-code.tool_call', prompt_id: first, call_id: `late-${i}-${b}-${c}`, status: 'error', execution_status: 'error', error_type: 'file_not_found' }, undefined, '0000000000000001', h.hr());
            both((pr) => pr.onLogRecord(late));
          }
        }
        for (const e of h.current.events as [string, ...unknown[]][]) if (e[0] === 'eviction' && !evictedSeen.includes(e[1] as string)) evictedSeen.push(e[1] as string);
      }
      // (the prompt stays open: its bytes stay held)
    }
    const reasons = (h.current.events as [string, ...unknown[]][]).filter((e) => e[0] === 'eviction').map((e) => e[2]);
    expect(reasons.length).toBeGreaterThan(0); // the byte budget did evict (64 prompts may be open: not by count)
    expect((h.current.events as [string, ...unknown[]][]).some((e) => e[0] === 'decision')).toBe(true);
    expectNoDecisionAfterEviction(h.current.events);
    await h.current.guard.shutdown();
  });
});

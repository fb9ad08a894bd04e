/**
 * What the qwen-code profile keeps knowing about a prompt's trace and session while many other
 * traces and sessions pass through its bounded indexes. Found by a differential run of the profile
 * with its trace records (216e091) against the one before (01b745c): the two disagree on these
 * streams (01b745c forgets; 216e091 keeps knowing). The expected values come from the design and
 * the wire reference, not from either implementation.
 *
 * - Design non-goal "subagent-internal loops" and wire reference §1.2: a foreground call's
 *   `qwen-code.tool` span's parent is the interaction span (subagent or tool contexts take
 *   precedence as parents); a tool span under any other span is out of scope.
 * - Wire reference §8 ("Batch boundaries are not emitted"): with spans, a batch is the calls between
 *   two interaction `qwen-code.llm_request` spans of a prompt; `qwen-code.api_request` logs are the
 *   boundary only for logs-only input. A session whose llm_request spans are seen has its batches
 *   split by those spans alone.
 */
import type { SpanContext } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { createRepeatedToolFailureGuard } from '../src/index.js';
import type { BatchDecision } from '../src/engine/failure-types.js';
import type { LogRecordView, SpanView, WireProfile } from '../src/profiles/wire-profile.js';
import { QwenCodeProfile } from '../src/profiles/qwen-code/qwen-code-profile.js';

function harness() {
  let now = 1_700_000_000_000;
  let profile: WireProfile | undefined;
  const decisions: BatchDecision[] = [];
  const guard = createRepeatedToolFailureGuard({
    mode: 'enforce',
    maxOpenPrompts: 64,
    sweepIntervalMillis: 0,
    clock: () => now,
    profile: (engine, repetition) => {
      profile = new QwenCodeProfile(engine as never, repetition as never);
      return profile;
    },
  });
  guard.addListener({ onDecision: (d) => decisions.push(d) });
  const hr = (): [number, number] => {
    now += 1;
    return [Math.floor(now / 1000), (now % 1000) * 1e6];
  };
  const sc = (traceId: string, spanId: string): SpanContext => ({ traceId, spanId, traceFlags: 1 });
  const span = (name: string, traceId: string, spanId: string, parent: string | undefined, attributes: Record<string, unknown>): SpanView => {
    const time = hr();
    return { name, attributes, spanContext: () => sc(traceId, spanId), parentSpanContext: parent === undefined ? undefined : sc(traceId, parent), startTime: time, endTime: time };
  };
  const log = (attributes: Record<string, unknown>, traceId: string, spanId: string): LogRecordView => ({
    hrTime: hr(),
    attributes: attributes as LogRecordView['attributes'],
    spanContext: sc(traceId, spanId),
    instrumentationScope: { name: 'qwen-code' },
  });
  const p = () => profile as WireProfile;
  return {
    guard,
    decisions,
    start: (v: SpanView) => p().onSpanStart(v),
    end: (v: SpanView) => p().onSpanEnd(v),
    log: (v: LogRecordView) => p().onLogRecord(v),
    span,
    logOf: log,
    /** One call that failed (file not found): its tool span under `parent`, and its tool_call log. */
    failedCall(traceId: string, parent: string, promptId: string, sessionId: string, callId: string, spanId: string): void {
      const tool = span('qwen-code.tool', traceId, spanId, parent, { 'tool.call_id': callId, 'gen_ai.tool.name': 'read_file' });
      p().onSpanStart(tool);
      p().onSpanEnd(tool);
      p().onLogRecord(
        log({ 'event.name': 'qwen-code.tool_call', prompt_id: promptId, 'session.id': sessionId, call_id: callId, function_name: 'read_file', status: 'error', execution_status: 'error', error_type: 'file_not_found', tool_type: 'native' }, traceId, spanId),
      );
    },
  };
}

const callsOf = (decisions: readonly BatchDecision[], promptId: string) => decisions.filter((d) => d.promptId === promptId).map((d) => d.receipt.observations.map((o) => o.callId));

describe('the qwen-code profile under many other traces and sessions', () => {
  it("an api_request log of a span session is no boundary, however many sessions' model requests came since", async () => {
    const h = harness();
    const T = 'abababababababababababababababab';
    const I = 'a000000000000001';
    const P = 's1########1';
    h.start(h.span('qwen-code.interaction', T, I, undefined, { 'qwen-code.prompt_id': P, 'qwen-code.message_type': 'acp_prompt', 'session.id': 's1' }));
    h.start(h.span('qwen-code.llm_request', T, 'b000000000000001', I, { 'qwen-code.prompt_id': P, 'llm_request.context': 'interaction', 'session.id': 's1' }));
    h.log(h.logOf({ 'event.name': 'qwen-code.api_request', prompt_id: P, 'session.id': 's1' }, T, 'b000000000000001'));
    h.failedCall(T, I, P, 's1', 'c1', 'c000000000000001');
    // 17,000 other sessions' model requests (one open prompt of their own each would evict P: one
    // prompt's requests carrying 17,000 session ids stand for them; the profile keys sessions by id)
    for (let i = 0; i < 17_000; i++) {
      h.start(h.span('qwen-code.llm_request', 'dddddddddddddddddddddddddddddddd', 'b000000000000002', 'a000000000000002', { 'qwen-code.prompt_id': 'f########1', 'llm_request.context': 'interaction', 'session.id': `other-${i}` }));
    }
    // an api_request log of P's session with P's prompt id and no llm_request span (a side query's
    // request): not a boundary, since session s1's llm_request spans were seen
    h.log(h.logOf({ 'event.name': 'qwen-code.api_request', prompt_id: P, 'session.id': 's1' }, T, 'b000000000000003'));
    h.failedCall(T, I, P, 's1', 'c2', 'c000000000000002');
    h.end(h.span('qwen-code.interaction', T, I, undefined, { 'qwen-code.prompt_id': P, 'qwen-code.message_type': 'acp_prompt', 'qwen-code.turn_status': 'ok' }));
    // one model request, so one batch holding both calls
    expect(callsOf(h.decisions, P)).toEqual([['c1', 'c2']]);
    await h.guard.shutdown();
  });

  it("a tool span under another span than its trace's interaction span stays out of scope after 2^16 other traces' interaction spans", async () => {
    const h = harness();
    const T = 'abababababababababababababababab';
    const I = 'a000000000000001';
    const P1 = 's1########1';
    const P2 = 's1########2';
    h.start(h.span('qwen-code.interaction', T, I, undefined, { 'qwen-code.prompt_id': P1, 'qwen-code.message_type': 'acp_prompt' }));
    // other traces' interaction spans (one open prompt's, so none is forgotten), before and after a
    // record of P2 on trace T (the trace is now linked to P2; its interaction span is still I)
    const flood = (tag: string, n: number) => {
      for (let i = 0; i < n; i++) h.start(h.span('qwen-code.interaction', `${tag}${i.toString(16).padStart(24, '0')}`, I, undefined, { 'qwen-code.prompt_id': 'f########2', 'qwen-code.message_type': 'acp_prompt' }));
    };
    flood('eeeeeee1', 32_767);
    h.log(h.logOf({ 'event.name': 'qwen-code.api_request', prompt_id: P2, 'session.id': 's1' }, T, 'b000000000000003'));
    flood('eeeeeee2', 32_768);
    // three model requests of P2 (logs only), each followed by a call whose tool span's parent is
    // not I (a subagent's span, unseen): out of scope, so P2 has no batch with a call
    for (const [i, callId] of ['c5', 'c6', 'c7'].entries()) {
      h.log(h.logOf({ 'event.name': 'qwen-code.api_request', prompt_id: P2, 'session.id': 's1' }, T, `b00000000000001${i}`));
      h.failedCall(T, 'f000000000000009', P2, 's1', callId, `c00000000000001${i}`);
    }
    h.log(h.logOf({ 'event.name': 'qwen-code.api_request', prompt_id: P2, 'session.id': 's1' }, T, 'b000000000000020'));
    expect(callsOf(h.decisions, P2).flat()).toEqual([]);
    await h.guard.shutdown();
  });
});

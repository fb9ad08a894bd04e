/**
 * The byte estimate that `maxHeldBytes` bounds (`src/engine/failure-types.ts`: a prompt, plus each
 * call it holds in its open, closing and pending batches, plus each judged call id) must follow a
 * prompt whose control hook reduces a batch late: after the next model request has begun and the
 * new batch's first calls are held. A stale, higher estimate evicts prompts the bound allows (found
 * by a differential review: a prompt evicted at 64,736 estimated bytes of 65,536 lost its warning
 * and its stop).
 */
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { CALL_ESTIMATE_BYTES, CLOSED_CALL_ESTIMATE_BYTES, PROMPT_ESTIMATE_BYTES } from '../src/engine/failure-types.js';
import { RepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';
import { RecordedSpan } from '../src/otlp/records.js';
import type { RecordedLog } from '../src/otlp/records.js';

const PROMPT = 'A########1';
const TRACE = 'a'.repeat(32);
const hex = (n: number): string => n.toString(16).padStart(16, '0');

function prompt(guard: RepeatedToolFailureGuard) {
  let ids = 0;
  let ms = 0;
  const time = (): [number, number] => [1_800_000_000 + Math.floor(ms / 1000), (ms % 1000) * 1_000_000];
  const span = (name: string, attributes: Record<string, unknown>, parentSpanId?: string): RecordedSpan =>
    new RecordedSpan({
      name,
      attributes,
      spanContext: { traceId: TRACE, spanId: hex(++ids), traceFlags: 1 },
      parentSpanContext: parentSpanId === undefined ? undefined : { traceId: TRACE, spanId: parentSpanId, traceFlags: 1 },
      startTime: time(),
      endTime: time(),
      scopeName: 'qwen-code',
    });
  const interaction = span('qwen-code.interaction', { 'qwen-code.prompt_id': PROMPT, 'session.id': 'A', 'qwen-code.message_type': 'acp_prompt' });
  const parent = interaction.spanContext().spanId;
  guard.spanProcessor.onStart(interaction as never, ROOT_CONTEXT);
  return {
    /** A model request, then `calls` tool spans started. Returns the tool spans. */
    request(calls: string[]): RecordedSpan[] {
      ms += 10;
      guard.spanProcessor.onStart(span('qwen-code.llm_request', { 'qwen-code.prompt_id': PROMPT, 'session.id': 'A', 'llm_request.context': 'interaction' }, parent) as never, ROOT_CONTEXT);
      return calls.map((id) => {
        const tool = span('qwen-code.tool', { 'session.id': 'A', 'tool.call_id': id, 'gen_ai.tool.name': 'read_file' }, parent);
        guard.spanProcessor.onStart(tool as never, ROOT_CONTEXT);
        return tool;
      });
    },
    /** Each call's failing `tool_call` log, then its tool span's end. */
    settle(tools: RecordedSpan[]): void {
      for (const tool of tools) {
        ms += 1;
        const log: RecordedLog = {
          hrTime: time(),
          attributes: {
            'session.id': 'A',
            'event.name': 'qwen-code.tool_call',
            prompt_id: PROMPT,
            call_id: tool.attributes['tool.call_id'] as string,
            function_name: 'read_file',
            status: 'error',
            execution_status: 'error',
            error_type: 'file_not_found',
            tool_type: 'native',
          },
          spanContext: { traceId: TRACE, spanId: hex(++ids), traceFlags: 1 },
          eventName: undefined,
          instrumentationScope: { name: 'qwen-code' },
          body: undefined,
          resource: undefined,
        };
        guard.logRecordProcessor.onEmit(log as never);
        guard.spanProcessor.onEnd(tool as never);
      }
    },
  };
}

describe('the held-bytes estimate follows a batch the control hook reduces late', () => {
  it.each(['warn', 'enforce'] as const)('%s, the hook after the next batch began', (mode) => {
    const guard = new RepeatedToolFailureGuard({ mode, profile: 'qwen-code', sweepIntervalMillis: 0, clock: () => 1_000 });
    const decisions: string[] = [];
    guard.addListener({ onDecision: (d) => decisions.push(d.outcome.decision) });
    const a = prompt(guard);
    const first = ['c1', 'c2', 'c3', 'c4', 'c5'];
    a.settle(a.request(first));
    // The next model request closes batch 1; in-process it waits for the hook (pending). Batch 2's
    // first two calls are held: open 2 + pending 5 calls, 5 judged ids.
    const second = a.request(['c6', 'c7']);
    expect(guard.engine.heldBytes).toBe(PROMPT_ESTIMATE_BYTES + 7 * CALL_ESTIMATE_BYTES + 5 * CLOSED_CALL_ESTIMATE_BYTES);
    expect(guard.control.afterToolBatch({ promptId: PROMPT, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true })).toEqual({ type: 'none' });
    expect(decisions).toEqual(['tracked']);
    // Batch 2's records merge into calls it holds: the reduced batch no longer counts.
    a.settle(second);
    expect(guard.engine.heldBytes).toBe(PROMPT_ESTIMATE_BYTES + 2 * CALL_ESTIMATE_BYTES + 5 * CLOSED_CALL_ESTIMATE_BYTES);
    void guard.shutdown();
  });
});

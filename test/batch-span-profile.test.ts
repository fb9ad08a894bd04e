import { context, trace } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { createRepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';
import type { RepeatedToolFailureGuardOptions } from '../src/otel/config.js';
import type { BatchDecision } from '../src/engine/failure-types.js';

interface Call {
  name?: string;
  status?: string;
  executionStatus?: string;
  errorType?: string;
  duplicate?: boolean;
  open?: boolean;
}

function setup(options: RepeatedToolFailureGuardOptions = {}) {
  const logs = new InMemoryLogRecordExporter();
  const guard = createRepeatedToolFailureGuard({
    mode: 'shadow',
    profile: 'batch-span',
    sweepIntervalMillis: 0,
    loggerProvider: new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: logs })] }),
    ...options,
  });
  const decisions: BatchDecision[] = [];
  guard.addListener({ onDecision: (d) => decisions.push(d) });
  const provider = new TracerProvider({ spanProcessors: [guard.spanProcessor] });
  const tracer = provider.getTracer('agent');
  let seq = 0;
  /** Starts a batch span with its calls; returns the batch span and the calls left open. */
  const batch = (promptId: string, calls: Call[], attrs: Record<string, string> = {}) => {
    const b = tracer.startSpan('runToolCalls', { attributes: { 'qwen-code.prompt_id': promptId, ...attrs } });
    const ctx = trace.setSpan(context.active(), b);
    const open: Span[] = [];
    for (const c of calls) {
      const s = tracer.startSpan('execute_tool', { attributes: { 'tool.call_id': `c${++seq}`, 'gen_ai.tool.name': c.name ?? 'read_file' } }, ctx);
      const status = c.status ?? 'error';
      s.setAttributes({
        status,
        execution_status: c.executionStatus ?? (status === 'success' ? 'success' : 'error'),
        tool_type: 'native',
        provider_duplicate: c.duplicate ?? false,
      });
      if ((c.executionStatus ?? 'error') === 'error' && status === 'error') s.setAttribute('error_type', c.errorType ?? 'file_not_found');
      if (c.open) open.push(s);
      else s.end();
    }
    return { span: b, open };
  };
  const run = (promptId: string, calls: Call[]) => batch(promptId, calls).span.end();
  return { guard, decisions, batch, run, logs, provider };
}

const P = 'p########1';

describe('batch-span profile (the design\'s runToolCalls boundary)', () => {
  it('a batch closes when its batch span ends; 4 + 4 failures warn (would_warn in shadow)', async () => {
    const s = setup();
    s.run(P, [{}, {}, {}, {}]);
    expect(s.decisions.map((d) => d.outcome.decision)).toEqual(['tracked']);
    s.run(P, [{}, {}, {}, {}]);
    s.run(P, [{}]);
    expect(s.decisions.map((d) => [d.batch, d.outcome.decision])).toEqual([
      [1, 'tracked'],
      [2, 'would_warn'],
      [3, 'would_stop'],
    ]);
    await s.provider.shutdown();
  });

  it('eight failures in one batch do not warn', async () => {
    const s = setup();
    s.run(P, Array.from({ length: 8 }, () => ({})));
    expect(s.decisions[0]?.outcome).toMatchObject({ decision: 'tracked', failureCount: 8, batchCount: 1 });
    await s.provider.shutdown();
  });

  it('a child still running when the batch span ends makes it incomplete; its late end is never counted', async () => {
    const s = setup();
    s.run(P, [{}, {}]);
    const b = s.batch(P, [{}, { open: true }]);
    b.span.end();
    expect(s.decisions[1]?.outcome).toMatchObject({ decision: 'reset', resetReason: 'incomplete' });
    for (const o of b.open) o.end();
    s.run(P, [{}, {}]);
    expect(s.decisions.map((d) => [d.batch, d.outcome.decision, d.outcome.failureCount])).toEqual([
      [1, 'tracked', 2],
      [2, 'reset', 2],
      [3, 'tracked', 2],
    ]);
    expect(s.guard.engine.lateRecords).toBe(1);
    await s.provider.shutdown();
  });

  it('provider duplicates neither count nor reset', async () => {
    const s = setup();
    s.run(P, [{}, {}, {}, {}]);
    s.run(P, [{}, {}, {}, {}, { status: 'cancelled', executionStatus: 'not_started', duplicate: true }]);
    expect(s.decisions[1]?.outcome.decision).toBe('would_warn');
    await s.provider.shutdown();
  });

  it('interleaved prompts do not mix', async () => {
    const s = setup();
    const Q = 'q########1';
    for (let i = 0; i < 3; i++) {
      const a = s.batch(P, [{}, {}, {}, {}]);
      const b = s.batch(Q, [{ status: 'success' }]);
      a.span.end();
      b.span.end();
    }
    expect(s.decisions.filter((d) => d.promptId === P).map((d) => d.outcome.decision)).toEqual(['tracked', 'would_warn', 'would_stop']);
    expect(s.decisions.filter((d) => d.promptId === Q).map((d) => d.outcome.decision)).toEqual(['none', 'none', 'none']);
    await s.provider.shutdown();
  });

  it('a custom batch span name and attribute mapping', async () => {
    const s = setup({ batchSpan: { batchSpanName: 'runToolCalls', attributes: { terminalStatus: 'status' } } });
    s.run(P, [{}]);
    expect(s.decisions).toHaveLength(1);
    const other = setup({ batchSpan: { batchSpanName: 'schedule_tool_calls' } });
    other.run(P, [{}]);
    expect(other.decisions).toHaveLength(0);
    await s.provider.shutdown();
    await other.provider.shutdown();
  });

  it('enforce with the control hook: remind, then stop after the next matching batch settles', async () => {
    const s = setup({ mode: 'enforce' });
    const drain = { promptId: P, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true };
    s.run(P, [{}, {}, {}, {}]);
    const a1 = s.guard.control.afterToolBatch(drain);
    s.run(P, [{}, {}, {}, {}]);
    const a2 = s.guard.control.afterToolBatch(drain);
    const pending = s.batch(P, [{}]);
    // the hook cannot decide before the batch settles: nothing is pending yet
    expect(s.guard.control.afterToolBatch(drain).type).toBe('none');
    pending.span.end();
    const a3 = s.guard.control.afterToolBatch(drain);
    expect([a1.type, a2.type, a3.type]).toEqual(['none', 'remind', 'stop']);
    await s.provider.shutdown();
  });
});

/**
 * The `genai` profile on arbitrary agent runs (real SDK): it never reports an error to the host,
 * emits only the closed error-type vocabulary, and never emits a raw error type, tool name or
 * error text, whatever the producer wrote.
 */
import fc from 'fast-check';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Span } from '@opentelemetry/api';
import { setGlobalErrorHandler } from '@opentelemetry/core';
import { afterEach, describe, expect, it } from 'vitest';
import { GENAI_ERROR_TYPES } from '../src/profiles/genai/error-types.js';
import { guardedSdk } from './helpers/setup.js';

interface ToolCall {
  readonly tool: string;
  readonly status: 0 | 1 | 2;
  readonly errorType?: string;
  readonly exceptionType?: string;
  readonly message: string;
  readonly nested: boolean;
}
interface Run {
  readonly conversation?: string;
  readonly agentSpan: boolean;
  readonly rounds: readonly (readonly ToolCall[])[];
}

/** Strings long enough to be recognisable in the output, unlike any emitted label. */
const arbSecret = fc.string({ minLength: 6, maxLength: 24 }).map((s) => `Zq${s.replace(/\s/g, '_')}`);
const arbTypeName = fc.oneof(
  arbSecret,
  fc.constantFrom('FileNotFoundError', 'builtins.TimeoutError', '_OTHER', 'asyncio.CancelledError', 'ECONNREFUSED', ''),
);
const arbCall: fc.Arbitrary<ToolCall> = fc.record(
  {
    tool: fc.oneof(arbSecret, fc.constant('read_file')),
    status: fc.constantFrom(0 as const, 1 as const, 2 as const),
    errorType: arbTypeName,
    exceptionType: arbTypeName,
    message: arbSecret,
    nested: fc.boolean(),
  },
  { requiredKeys: ['tool', 'status', 'message', 'nested'] },
);
const arbRun: fc.Arbitrary<Run> = fc.record(
  {
    conversation: fc.string({ maxLength: 8 }),
    agentSpan: fc.boolean(),
    rounds: fc.array(fc.array(arbCall, { minLength: 0, maxLength: 4 }), { maxLength: 12 }),
  },
  { requiredKeys: ['agentSpan', 'rounds'] },
);

function play(tracer: ReturnType<typeof guardedSdk>['tracer'], run: Run): void {
  const common = run.conversation === undefined ? {} : { 'gen_ai.conversation.id': run.conversation };
  const root = tracer.startSpan(run.agentSpan ? 'invoke_agent a' : 'request', {
    attributes: run.agentSpan ? { 'gen_ai.operation.name': 'invoke_agent', ...common } : common,
  });
  const ctx = trace.setSpan(context.active(), root);
  let seq = 0;
  for (const round of run.rounds) {
    tracer.startSpan('chat m', { attributes: { 'gen_ai.operation.name': 'chat', ...common } }, ctx).end();
    const open: Array<[Span, ToolCall]> = round.map((c) => [
      tracer.startSpan(`execute_tool ${c.tool}`, {
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': c.tool, 'gen_ai.tool.call.id': `c${++seq}`, ...common },
      }, ctx),
      c,
    ]);
    for (const [span, c] of open) {
      if (c.nested) {
        const inner: Context = trace.setSpan(ctx, span);
        tracer.startSpan('chat m', { attributes: { 'gen_ai.operation.name': 'chat' } }, inner).end();
      }
      if (c.errorType !== undefined) span.setAttribute('error.type', c.errorType);
      if (c.exceptionType !== undefined) span.addEvent('exception', { 'exception.type': c.exceptionType, 'exception.message': c.message });
      span.setStatus(c.status === 2 ? { code: SpanStatusCode.ERROR, message: c.message } : { code: c.status });
      span.end();
    }
  }
  root.end();
}

describe('genai profile: arbitrary runs (property)', () => {
  afterEach(() => setGlobalErrorHandler(() => undefined));

  it('never reports an error, emits only the vocabulary, never a raw type, tool name or message', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arbRun, { minLength: 1, maxLength: 3 }), fc.constantFrom('shadow' as const, 'warn' as const, 'enforce' as const), async (runs, mode) => {
        const errors: unknown[] = [];
        setGlobalErrorHandler((e) => errors.push(e));
        const s = guardedSdk({ profile: 'genai', mode });
        for (const run of runs) play(s.tracer, run);
        s.guard.finishAll();
        const logs = s.guardLogs.getFinishedLogRecords();
        const points = await s.metricPoints();
        await s.shutdown();
        expect(errors).toEqual([]);
        const vocabulary: readonly string[] = GENAI_ERROR_TYPES;
        for (const l of logs) {
          const t = l.attributes['execution_error_type'];
          if (t !== undefined) expect(vocabulary).toContain(t);
        }
        const emitted = JSON.stringify([logs.map((l) => [l.attributes, l.body]), points]);
        const secrets = runs.flatMap((r) => r.rounds.flat().flatMap((c) => [c.tool, c.message, c.errorType ?? '', c.exceptionType ?? '']));
        for (const secret of secrets) if (secret.startsWith('Zq')) expect(emitted).not.toContain(secret);
        expect(emitted).not.toContain('read_file');
      }),
      { numRuns: 60 },
    );
  });
});

import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { aiSdkOperation } from '../src/profiles/ai-sdk/ai-sdk-dialect.js';
import { detectWireProfiles } from '../src/profiles/registry.js';
import { guardedSdk } from './helpers/setup.js';

const summary = (ds: ReadonlyArray<{ batch: number; outcome: { decision: string; resetReason?: string } }>) =>
  ds.map((d) => `${d.batch}:${d.outcome.decision}${d.outcome.resetReason === undefined ? '' : `/${d.outcome.resetReason}`}`);

/** A failing call as the SDK records it: status ERROR and an exception event typed by the error's name (no error.type). */
function fail(span: Span, name = 'Error'): void {
  span.recordException({ name, message: 'ENOENT: no such file or directory, open /secret/path' });
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'ENOENT: no such file or directory, open /secret/path' });
}

describe('ai-sdk profile: the AI SDK 6 ai.* spans', () => {
  it.each([
    [{ name: 'ai.generateText', attributes: { 'ai.operationId': 'ai.generateText' } }, 'invoke_agent'],
    [{ name: 'ai.streamText', attributes: {} }, 'invoke_agent'],
    [{ name: 'ai.generateText.doGenerate', attributes: { 'ai.operationId': 'ai.generateText.doGenerate' } }, 'model_call'],
    [{ name: 'ai.streamText.doStream', attributes: {} }, 'model_call'],
    [{ name: 'ai.toolCall', attributes: { 'ai.operationId': 'ai.toolCall' } }, 'execute_tool'],
    [{ name: 'ai.embed', attributes: { 'ai.operationId': 'ai.embed' } }, undefined],
    [{ name: 'execute_tool read_file', attributes: { 'gen_ai.operation.name': 'execute_tool' } }, undefined],
  ] as const)('%o -> %s', (span, op) => {
    expect(aiSdkOperation(span)).toBe(op);
  });

  it('is detected from ai.* span names, before genai', () => {
    const sample = { serviceNames: new Set<string>(), scopeNames: new Set<string>(), spanNames: new Set(['ai.generateText', 'ai.toolCall']), eventNames: new Set<string>(), spanAttributeKeys: new Set<string>() };
    expect(detectWireProfiles(sample)[0]).toBe('ai-sdk');
  });

  it('one generateText call is a prompt, a doGenerate a batch boundary, ai.toolCall the call; a tool\'s own generateText is not the run\'s', async () => {
    const sdk = guardedSdk({ profile: 'ai-sdk' });
    const t = sdk.tracer;
    const root = t.startSpan('ai.generateText', { attributes: { 'ai.operationId': 'ai.generateText' } });
    const ctx = trace.setSpan(context.active(), root);
    let id = 0;
    for (let round = 0; round < 5; round++) {
      t.startSpan('ai.generateText.doGenerate', { attributes: { 'ai.operationId': 'ai.generateText.doGenerate' } }, ctx).end();
      for (let k = 0; k < 2; k++) {
        const call = t.startSpan('ai.toolCall', { attributes: { 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': 'read_file', 'ai.toolCall.id': `c${++id}`, 'ai.toolCall.args': '{"path":"missing.txt"}' } }, ctx);
        // A subagent inside the tool: its failing calls are out of scope.
        const inner = t.startSpan('ai.generateText', { attributes: { 'ai.operationId': 'ai.generateText' } }, trace.setSpan(ctx, call));
        const innerCall = t.startSpan('ai.toolCall', { attributes: { 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': 'grep', 'ai.toolCall.id': `i${id}` } }, trace.setSpan(ctx, inner));
        fail(innerCall);
        innerCall.end();
        inner.end();
        fail(call);
        call.end();
      }
    }
    t.startSpan('ai.generateText.doGenerate', { attributes: { 'ai.operationId': 'ai.generateText.doGenerate' } }, ctx).end();
    root.end();
    expect(summary(sdk.decisions)).toEqual(['1:tracked', '2:tracked', '3:tracked', '4:would_warn', '5:would_stop']);
    expect(sdk.decisions[0]?.receipt.observations.map((o) => [o.policyToolName, o.executionStatus])).toEqual([
      ['read_file', 'error'],
      ['read_file', 'error'],
    ]);
    await sdk.shutdown();
  });
});

describe('genai profile: an agent_step span (AI SDK 7 @ai-sdk/otel) is the batch', () => {
  // Without the step, a batch closes only at the next model call (or the run's end): each step
  // would be judged one step late.
  it('the step closes its batch when it ends, before the next model call starts', async () => {
    const sdk = guardedSdk({ profile: 'genai' });
    const t = sdk.tracer;
    const root = t.startSpan('invoke_agent mock-model', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
    const ctx = trace.setSpan(context.active(), root);
    const judgedAtStepEnd: number[] = [];
    let id = 0;
    for (let n = 1; n <= 3; n++) {
      const step = t.startSpan(`step ${n}`, { attributes: { 'gen_ai.operation.name': 'agent_step' } }, ctx);
      const sctx = trace.setSpan(ctx, step);
      t.startSpan('chat mock-model', { attributes: { 'gen_ai.operation.name': 'chat' } }, sctx).end();
      const calls = [0, 1].map(() => t.startSpan('execute_tool read_file', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read_file', 'gen_ai.tool.call.id': `c${++id}` } }, sctx));
      for (const c of calls) {
        fail(c);
        c.end();
      }
      step.end();
      judgedAtStepEnd.push(sdk.decisions.length);
    }
    root.end();
    expect(judgedAtStepEnd).toEqual([1, 2, 3]);
    expect(sdk.decisions.map((d) => d.receipt.observations.length)).toEqual([2, 2, 2]);
    expect(summary(sdk.decisions)).toEqual(['1:tracked', '2:tracked', '3:tracked']);
    await sdk.shutdown();
  });
});

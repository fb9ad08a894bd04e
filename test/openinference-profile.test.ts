import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Span } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { openInferenceOperation } from '../src/profiles/openinference/openinference-dialect.js';
import { detectWireProfiles } from '../src/profiles/registry.js';
import { genAiPromptId } from '../src/profiles/genai/genai-profile.js';
import type { RepeatedToolFailureGuardOptions } from '../src/otel/config.js';
import { guardedSdk } from './helpers/setup.js';

/**
 * The `openinference` profile on the real SDK, with spans shaped as the OpenInference
 * instrumentations write them (openinference-semantic-conventions 0.1.42: `openinference.span.kind`
 * AGENT / CHAIN / LLM / TOOL, `tool.name`, OpenTelemetry `exception` events). Expected decisions
 * are the design's (8 failures of one key across at least 2 batches warn; the next stops).
 */
const KIND = 'openinference.span.kind';

function oiSdk(options: RepeatedToolFailureGuardOptions = {}) {
  const sdk = guardedSdk({ profile: 'openinference', ...options });
  const span = (name: string, kind: string, parent: Context | undefined, attributes: Record<string, string> = {}): Span =>
    sdk.tracer.startSpan(name, { attributes: { [KIND]: kind, ...attributes } }, parent ?? context.active());
  type Call = { tool?: string; fails?: 'FileNotFoundError' | 'PermissionError' | 'untyped' };
  return {
    ...sdk,
    span,
    /** One step: a CHAIN span holding one LLM call and then its tool calls, started together. */
    step(under: Context, calls: Call[]): void {
      const step = span('Step', 'CHAIN', under);
      const ctx = trace.setSpan(under, step);
      span('OpenAIModel.generate', 'LLM', ctx).end();
      const open = calls.map((c) => span('SimpleTool', 'TOOL', ctx, { 'tool.name': c.tool ?? 'read_file', 'input.value': '{"path": "/secret/x"}' }));
      open.forEach((s, i) => {
        const c = calls[i] as Call;
        if (c.fails !== undefined) {
          if (c.fails !== 'untyped') s.recordException({ name: c.fails, message: 'No such file or directory: /secret/x' });
          s.setStatus({ code: SpanStatusCode.ERROR, message: 'Error running tool' });
        } else s.setStatus({ code: SpanStatusCode.OK });
        s.end();
      });
      step.end();
    },
  };
}

const summary = (ds: ReadonlyArray<{ batch: number; outcome: { decision: string; resetReason?: string } }>) =>
  ds.map((d) => `${d.batch}:${d.outcome.decision}${d.outcome.resetReason === undefined ? '' : `/${d.outcome.resetReason}`}`);

describe('openinference profile: span kinds', () => {
  it.each([
    ['AGENT', 'invoke_agent'],
    ['LLM', 'model_call'],
    ['TOOL', 'execute_tool'],
    ['CHAIN', undefined],
    ['RETRIEVER', undefined],
    [undefined, undefined],
  ] as const)('%s -> %s', (kind, op) => {
    expect(openInferenceOperation({ name: 'x', attributes: kind === undefined ? {} : { [KIND]: kind } })).toBe(op);
  });

  it('auto recognises it by the span kind attribute or by the instrumentation scope, before genai', () => {
    const none = new Set<string>();
    const sample = (keys: string[], scopes: string[]) => ({ serviceNames: none, scopeNames: new Set(scopes), spanNames: none, eventNames: none, spanAttributeKeys: new Set(keys) });
    expect(detectWireProfiles(sample([KIND, 'tool.name'], []))[0]).toBe('openinference');
    expect(detectWireProfiles(sample([], ['openinference.instrumentation.smolagents']))[0]).toBe('openinference');
    // OpenInference with its optional GenAI attributes on: still its own profile first.
    expect(detectWireProfiles(sample([KIND, 'gen_ai.operation.name', 'gen_ai.tool.name'], []))).toEqual(['openinference', 'genai']);
    expect(detectWireProfiles(sample(['gen_ai.operation.name', 'gen_ai.tool.name'], []))).toEqual(['genai']);
  });
});

describe('openinference profile on the real SDK (shadow)', () => {
  it.each([
    ["profile 'openinference'", {}],
    ['no profile option (auto)', { profile: undefined }],
  ])('%s: smolagents shape (AGENT > CHAIN step > LLM + TOOL): warns at batch 8, stops at 9, route agent_run', async (_l, options) => {
    const a = oiSdk(options);
    const run = a.span('conformance_agent.run', 'AGENT', undefined);
    const ctx = trace.setSpan(context.active(), run);
    for (let i = 0; i < 10; i++) a.step(ctx, [{ fails: 'FileNotFoundError' }]);
    a.step(ctx, [{ tool: 'final_answer' }]);
    run.end();
    expect(summary(a.decisions)).toEqual(['1:tracked', '2:tracked', '3:tracked', '4:tracked', '5:tracked', '6:tracked', '7:tracked', '8:would_warn', '9:would_stop', '10:none', '11:none']);
    expect(a.decisions.every((d) => d.promptId === genAiPromptId(run.spanContext()) && d.route === 'agent_run')).toBe(true);
    await a.shutdown();
  });

  it('OpenAI Agents shape: the agent span under the trace root AGENT is the same run (orchestration), not a subagent', async () => {
    const a = oiSdk();
    const root = a.span('Agent workflow', 'AGENT', undefined);
    const rootCtx = trace.setSpan(context.active(), root);
    const chain = a.span('Agent workflow', 'CHAIN', rootCtx);
    const agent = a.span('conformance_agent', 'AGENT', trace.setSpan(rootCtx, chain), { 'agent.name': 'conformance_agent' });
    const agentCtx = trace.setSpan(rootCtx, agent);
    for (let i = 0; i < 9; i++) a.step(agentCtx, [{ fails: 'PermissionError' }, { tool: 'list_dir' }]);
    agent.end();
    chain.end();
    root.end();
    expect(summary(a.decisions).slice(-2)).toEqual(['8:would_warn', '9:would_stop']);
    expect(new Set(a.decisions.map((d) => d.promptId))).toEqual(new Set([genAiPromptId(root.spanContext())]));
    await a.shutdown();
  });

  it('an agent invoked as a tool (AGENT inside a TOOL span) is out of scope; the calling tool is the call', async () => {
    const a = oiSdk();
    const run = a.span('orchestrator', 'AGENT', undefined);
    const ctx = trace.setSpan(context.active(), run);
    for (let i = 0; i < 3; i++) {
      a.span('generation', 'LLM', ctx).end();
      const tool = a.span('research_agent', 'TOOL', ctx, { 'tool.name': 'research_agent' });
      const inner = trace.setSpan(ctx, tool);
      const sub = a.span('research_agent', 'AGENT', inner);
      for (let k = 0; k < 9; k++) a.step(trace.setSpan(inner, sub), [{ fails: 'FileNotFoundError' }]);
      sub.end();
      tool.setStatus({ code: SpanStatusCode.OK });
      tool.end();
    }
    run.end();
    expect(a.decisions.map((d) => d.receipt.observations.map((o) => o.policyToolName))).toEqual([['research_agent'], ['research_agent'], ['research_agent']]);
    expect(a.decisions.every((d) => d.outcome.decision === 'none')).toBe(true);
    await a.shutdown();
  });

  it('OpenAI Agents tool errors carry no type (status ERROR only): unknown, enforcement disabled, never a warning', async () => {
    const a = oiSdk();
    const run = a.span('Agent workflow', 'AGENT', undefined);
    const ctx = trace.setSpan(context.active(), run);
    for (let i = 0; i < 10; i++) a.step(ctx, [{ fails: 'untyped' }]);
    run.end();
    expect(summary(a.decisions.filter((d) => d.outcome.decision !== 'none'))).toEqual(['1:reset/unknown']);
    await a.shutdown();
  });

  it('emits neither tool names, inputs nor error text', async () => {
    const a = oiSdk();
    const run = a.span('agent.run', 'AGENT', undefined);
    const ctx = trace.setSpan(context.active(), run);
    for (let i = 0; i < 9; i++) a.step(ctx, [{ fails: 'FileNotFoundError' }]);
    run.end();
    const emitted = JSON.stringify(a.guardLogs.getFinishedLogRecords().map((r) => [r.attributes, r.body]));
    for (const s of ['read_file', '/secret/', 'No such file', 'FileNotFoundError']) expect(emitted).not.toContain(s);
    expect(emitted).toContain('file_not_found');
    await a.shutdown();
  });
});

import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { emittedErrorType, errorTypeKey, GENAI_ERROR_TYPES } from '../src/profiles/genai/error-types.js';
import { genAiOperation, genAiPromptId, toolOutcome } from '../src/profiles/genai/genai-profile.js';
import type { SpanView } from '../src/profiles/wire-profile.js';
import { REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_TEXT } from '../src/core/failure/reducer.js';
import { guardedSdk } from './helpers/setup.js';
import type { RepeatedToolFailureGuardOptions } from '../src/otel/config.js';

/** A finished execute_tool span as the profile sees it. */
function toolSpan(init: {
  attributes?: Record<string, unknown>;
  status?: number;
  exceptionType?: string;
}): SpanView {
  return {
    name: 'execute_tool read_file',
    attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read_file', ...init.attributes },
    spanContext: () => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }),
    startTime: [1, 0],
    endTime: [2, 0],
    status: { code: init.status ?? 0 },
    events: init.exceptionType === undefined ? [] : [{ name: 'exception', attributes: { 'exception.type': init.exceptionType } }],
  };
}

const ERROR = SpanStatusCode.ERROR;

describe('genai profile: outcome of one execute_tool span (table)', () => {
  // Expected values from the design's eligibility rules: a typed execution error is eligible;
  // unclassified errors are unknown; cancellations, calls that never ran are not failures.
  const rows: Array<[string, Parameters<typeof toolSpan>[0], { terminal: string; execution: string; key?: string }]> = [
    ['unset status: success', {}, { terminal: 'success', execution: 'success' }],
    ['ok status: success', { status: SpanStatusCode.OK }, { terminal: 'success', execution: 'success' }],
    ['error + error.type FileNotFoundError', { status: ERROR, attributes: { 'error.type': 'FileNotFoundError' } }, { terminal: 'error', execution: 'error', key: 'file_not_found' }],
    ['error.type without error status is still an error', { attributes: { 'error.type': 'timeout' } }, { terminal: 'error', execution: 'error', key: 'timeout' }],
    ['error + exception event (pydantic-ai ModelRetry)', { status: ERROR, exceptionType: 'pydantic_ai.exceptions.ToolRetryError' }, { terminal: 'error', execution: 'error', key: 'tool_retry' }],
    ['error + exception event (Strands raised FileNotFoundError)', { status: ERROR, exceptionType: 'FileNotFoundError' }, { terminal: 'error', execution: 'error', key: 'file_not_found' }],
    ['error.type wins over the exception event', { status: ERROR, attributes: { 'error.type': 'ECONNREFUSED' }, exceptionType: 'ValueError' }, { terminal: 'error', execution: 'error', key: 'connection_error' }],
    // It ran and failed, with no class: the design's unclassified error (ineligible; the reducer resets as unknown).
    ['error status, no type at all: untyped', { status: ERROR }, { terminal: 'error', execution: 'error' }],
    ['error.type _OTHER is unclassified: untyped', { status: ERROR, attributes: { 'error.type': '_OTHER' } }, { terminal: 'error', execution: 'error' }],
    ['asyncio CancelledError: cancelled', { status: ERROR, exceptionType: 'asyncio.exceptions.CancelledError' }, { terminal: 'cancelled', execution: 'cancelled' }],
    ['Strands cancellation attribute: cancelled', { attributes: { 'strands.cancellation.type': 'CancelledError' } }, { terminal: 'cancelled', execution: 'cancelled' }],
    ['pydantic-ai validation failure: not_started', { status: ERROR, attributes: { 'pydantic_ai.tool.failure_stage': 'validation' }, exceptionType: 'ToolRetryError' }, { terminal: 'error', execution: 'not_started' }],
    ['pydantic-ai deferral: not_started', { attributes: { 'pydantic_ai.tool.deferral.name': 'ApprovalRequired' } }, { terminal: 'error', execution: 'not_started' }],
    // Issue #33 (3): a known catch-all error.type (ADK 2.13 TOOL_ERROR, MCP_TOOL_ERROR) gives way to the exception's type.
    ['ADK catch-all TOOL_ERROR with a recorded exception: keyed on the exception', { status: ERROR, attributes: { 'error.type': 'TOOL_ERROR' }, exceptionType: 'PermissionError' }, { terminal: 'error', execution: 'error', key: 'permission_denied' }],
    ['ADK catch-all TOOL_ERROR alone: no type', { status: ERROR, attributes: { 'error.type': 'TOOL_ERROR' } }, { terminal: 'error', execution: 'error' }],
    ['ADK catch-all MCP_TOOL_ERROR alone: no type', { status: ERROR, attributes: { 'error.type': 'MCP_TOOL_ERROR' } }, { terminal: 'error', execution: 'error' }],
    ['a specific error.type is kept', { status: ERROR, attributes: { 'error.type': 'HTTP_ERROR' } }, { terminal: 'error', execution: 'error', key: errorTypeKey('HTTP_ERROR') }],
    // Issue #33 (4): ADK ReflectAndRetryToolPlugin answers for a raising tool; only the experimental source marks the failure.
    ['ADK on_tool_error_callback response (no status, no type): a failure with no type', { attributes: { 'adk.experimental.response.source': 'on_tool_error_callback' } }, { terminal: 'error', execution: 'error' }],
    ['ADK before_tool_callback response: a success', { attributes: { 'adk.experimental.response.source': 'before_tool_callback' } }, { terminal: 'success', execution: 'success' }],
  ];
  it.each(rows)('%s', (_label, init, want) => {
    const f = toolOutcome(toolSpan(init));
    expect(f.toolName).toBe('read_file');
    expect(f.terminalStatus).toBe(want.terminal);
    expect(f.spanExecutionStatus).toBe(want.execution);
    expect(f.spanErrorType).toBe(want.key);
  });

  it('a raw type outside the allowlist gets a private key, distinct per raw type, emitted as other', () => {
    const a = toolOutcome(toolSpan({ status: ERROR, attributes: { 'error.type': 'acme.QuotaExceeded' } })).spanErrorType;
    const b = toolOutcome(toolSpan({ status: ERROR, attributes: { 'error.type': 'acme.RateLimited' } })).spanErrorType;
    expect(a).toMatch(/^genai_other_[0-9a-f]{8}$/);
    expect(b).toMatch(/^genai_other_[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    expect(emittedErrorType(a as string)).toBe('other');
    expect(errorTypeKey('acme.QuotaExceeded')).toBe(a);
  });

  it('emits only the closed vocabulary; other profiles\' types pass unchanged', () => {
    for (const raw of ['FileNotFoundError', 'ENOENT', 'TimeoutError', 'ToolRetryError', 'x.y.Z', '500', 'some text with spaces']) {
      const key = errorTypeKey(raw) as string;
      expect(GENAI_ERROR_TYPES as readonly string[]).toContain(emittedErrorType(key));
    }
    expect(emittedErrorType('shell_execute_error')).toBe('shell_execute_error');
  });
});

describe('genai profile: operations from names', () => {
  it.each([
    [{ name: 'invoke_agent support', attributes: {} }, 'invoke_agent'],
    [{ name: 'agent run', attributes: {} }, 'invoke_agent'],
    [{ name: 'running tool', attributes: {} }, 'execute_tool'],
    [{ name: 'whatever', attributes: { 'gen_ai.operation.name': 'generate_content' } }, 'model_call'],
    [{ name: 'text_completion gpt', attributes: {} }, 'model_call'],
    [{ name: 'execute_event_loop_cycle', attributes: { 'gen_ai.operation.name': 'execute_event_loop_cycle' } }, undefined],
    [{ name: 'POST', attributes: {} }, undefined],
  ] as const)('%o -> %s', (span, op) => {
    expect(genAiOperation(span)).toBe(op);
  });
});

/** A scripted GenAI agent on the real SDK: runs, model calls and tool calls as spans. */
function agentSdk(options: RepeatedToolFailureGuardOptions = {}) {
  const sdk = guardedSdk({ profile: 'genai', ...options });
  const tracer: Tracer = sdk.tracer;
  const child = (name: string, op: string, parent: Context, attributes: Record<string, string> = {}): Span =>
    tracer.startSpan(name, { attributes: { 'gen_ai.operation.name': op, ...attributes } }, parent);
  let callSeq = 0;
  type ToolSpec = { name?: string; errorType?: string; ok?: boolean; untyped?: boolean };
  const endTool = (s: Span, t: ToolSpec): void => {
    if (t.ok !== true) {
      s.setStatus({ code: SpanStatusCode.ERROR, message: 'No such file or directory: /secret/path' });
      if (t.untyped !== true) s.setAttribute('error.type', t.errorType ?? 'FileNotFoundError');
    }
    s.end();
  };
  return {
    ...sdk,
    /** Starts an agent run (or, with `op: null`, a plain root span). */
    run(name = 'invoke_agent support', op: string | null = 'invoke_agent', attributes: Record<string, string> = {}) {
      const span = tracer.startSpan(name, { attributes: op === null ? attributes : { 'gen_ai.operation.name': op, ...attributes } });
      const ctx = trace.setSpan(context.active(), span);
      return {
        span,
        ctx,
        promptId: genAiPromptId(span.spanContext()),
        /** One model call, then its tool calls run in parallel (all started before any ends). */
        round(tools: ToolSpec[], under: Context = ctx): void {
          child('chat model', 'chat', under).end();
          const open = tools.map((t) =>
            child(`execute_tool ${t.name ?? 'read_file'}`, 'execute_tool', under, {
              'gen_ai.tool.name': t.name ?? 'read_file',
              'gen_ai.tool.call.id': `call_${++callSeq}`,
            }),
          );
          open.forEach((s, i) => endTool(s, tools[i] as ToolSpec));
        },
        tool(t: ToolSpec, under: Context = ctx): Span {
          return child(`execute_tool ${t.name ?? 'read_file'}`, 'execute_tool', under, { 'gen_ai.tool.name': t.name ?? 'read_file', 'gen_ai.tool.call.id': `call_${++callSeq}` });
        },
        endTool,
        child,
        end(): void {
          child('chat model', 'chat', ctx).end();
          span.end();
        },
      };
    },
  };
}

const summary = (ds: ReadonlyArray<{ batch: number; outcome: { decision: string; resetReason?: string } }>) =>
  ds.map((d) => `${d.batch}:${d.outcome.decision}${d.outcome.resetReason === undefined ? '' : `/${d.outcome.resetReason}`}`);

describe('genai profile on the real SDK (shadow)', () => {
  // In process the default profile is `auto`: an in-house agent that follows the GenAI conventions
  // (default Resource, no agent name) is read by `genai` without naming it.
  it.each([
    ["profile 'genai'", {}],
    ['no profile option (auto)', { profile: undefined }],
    ["profile 'auto'", { profile: 'auto' as const }],
  ])('%s: 8 failures in one batch do not warn; the next batch of the same key warns, the one after stops', async (_label, options) => {
    const a = agentSdk(options);
    const r = a.run();
    r.round(Array.from({ length: 8 }, () => ({})));
    r.round([{}]);
    r.round([{}]);
    r.end();
    expect(summary(a.decisions)).toEqual(['1:tracked', '2:would_warn', '3:would_stop']);
    expect(a.decisions.every((d) => d.promptId === r.promptId && d.route === 'agent_run')).toBe(true);
    expect(a.decisions[0]?.receipt.observations).toHaveLength(8);
    await a.shutdown();
  });

  it('a same-tool success resets; another tool\'s success does not; a second error type is a new key', async () => {
    const a = agentSdk();
    const r = a.run();
    r.round([{}, {}]);
    r.round([{}, { name: 'list_dir', ok: true }]);
    r.round([{ ok: true }]);
    r.round([{}]);
    r.round([{ errorType: 'PermissionError' }]);
    r.end();
    expect(summary(a.decisions)).toEqual(['1:tracked', '2:tracked', '3:reset/success', '4:tracked', '5:tracked']);
    expect(a.decisions[4]?.outcome.candidateOrdinal).toBe(3);
    await a.shutdown();
  });

  it('an error without error.type or exception type resets as unknown', async () => {
    const a = agentSdk();
    const r = a.run();
    r.round([{ untyped: true }]);
    r.end();
    expect(summary(a.decisions)).toEqual(['1:reset/unknown']);
    await a.shutdown();
  });

  it('a new agent run is a new prompt: 6 + 6 failing rounds in one conversation never warn', async () => {
    const a = agentSdk();
    for (let k = 0; k < 2; k++) {
      const r = a.run('invoke_agent support', 'invoke_agent', { 'gen_ai.conversation.id': 'conv-1' });
      for (let i = 0; i < 6; i++) r.round([{}]);
      r.end();
    }
    expect(new Set(a.decisions.map((d) => d.promptId)).size).toBe(2);
    expect(a.decisions.filter((d) => d.outcome.decision === 'would_warn')).toHaveLength(0);
    expect(a.decisions.every((d) => d.sessionId === 'conv-1')).toBe(true);
    await a.shutdown();
  });

  it('model calls and tools inside a tool call, and a sub-agent run, are not the run\'s own', async () => {
    const a = agentSdk();
    const r = a.run();
    for (let i = 0; i < 3; i++) {
      a.tracer.startSpan('chat model', { attributes: { 'gen_ai.operation.name': 'chat' } }, r.ctx).end();
      const outer = r.tool({ name: 'delegate' });
      const inner = trace.setSpan(r.ctx, outer);
      // The tool asks a model and runs a tool of its own, then starts a sub-agent that fails 9 times.
      r.child('chat model', 'chat', inner).end();
      r.endTool(r.tool({ name: 'inner_tool' }, inner), {});
      const sub = r.child('invoke_agent helper', 'invoke_agent', inner);
      const subCtx = trace.setSpan(r.ctx, sub);
      for (let k = 0; k < 9; k++) {
        r.child('chat model', 'chat', subCtx).end();
        r.endTool(r.tool({}, subCtx), {});
      }
      sub.end();
      r.endTool(outer, { name: 'delegate', errorType: 'RuntimeError' });
    }
    r.end();
    // One outer call a batch, three batches; nothing from inside the tool reached the prompt.
    expect(a.decisions.map((d) => d.receipt.observations.length)).toEqual([1, 1, 1]);
    expect(a.decisions.map((d) => d.receipt.observations[0]?.policyToolName)).toEqual(['delegate', 'delegate', 'delegate']);
    expect(new Set(a.decisions.map((d) => d.promptId))).toEqual(new Set([r.promptId]));
    await a.shutdown();
  });

  // Issue #33 (1): LangGraph + OpenLLMetry marks `{name}.workflow` invoke_agent inside `invoke_agent
  // {name}`; ADK's SequentialAgent runs the worker's invoke_agent inside the orchestrator's; OpenAI
  // Agents under the contrib v2 instrumentation marks the SDK trace's root invoke_agent. None of these
  // is an agent invoked as a tool: the prompt's own tool calls must count.
  it.each([
    ['LangGraph + OpenLLMetry: {name}.workflow inside invoke_agent {name}', ['graph.workflow']],
    ['ADK SequentialAgent: worker inside orchestrator', ['invoke_agent worker']],
    ['two levels of orchestration', ['invoke_agent pipeline', 'invoke_agent worker']],
  ])('an invoke_agent inside the run but not inside a tool call is orchestration: %s', async (_label, wrappers) => {
    const a = agentSdk();
    const r = a.run('invoke_agent root');
    let ctx = r.ctx;
    const opened: Span[] = [];
    for (const name of wrappers) {
      const w = r.child(name, 'invoke_agent', ctx);
      opened.push(w);
      ctx = trace.setSpan(ctx, w);
    }
    for (let i = 0; i < 9; i++) r.round([{}], ctx);
    for (const w of opened.reverse()) w.end();
    r.end();
    expect(summary(a.decisions).slice(-2)).toEqual(['8:would_warn', '9:would_stop']);
    expect(new Set(a.decisions.map((d) => d.promptId))).toEqual(new Set([r.promptId]));
    await a.shutdown();
  });

  it('ADK catch-all TOOL_ERROR over two alternating exception types: two keys, never a warning (issue #33 item 3)', async () => {
    const a = agentSdk();
    const r = a.run();
    for (let i = 0; i < 10; i++) {
      r.child('chat model', 'chat', r.ctx).end();
      const t = r.tool({});
      t.setAttribute('error.type', 'TOOL_ERROR');
      t.recordException({ name: i % 2 === 0 ? 'FileNotFoundError' : 'PermissionError', message: 'x' });
      t.setStatus({ code: SpanStatusCode.ERROR, message: 'TOOL_ERROR' });
      t.end();
    }
    r.end();
    expect(summary(a.decisions)).toEqual(Array.from({ length: 10 }, (_, i) => `${i + 1}:tracked`));
    await a.shutdown();
  });

  it('without an agent span the root span is the run and gen_ai.conversation.id its session', async () => {
    const a = agentSdk();
    const r = a.run('handle_request', null);
    for (let i = 0; i < 9; i++) {
      r.child('chat model', 'chat', r.ctx, { 'gen_ai.conversation.id': 'conv-9' }).end();
      r.endTool(r.tool({}), {});
    }
    r.span.end();
    expect(summary(a.decisions).slice(-2)).toEqual(['8:would_warn', '9:would_stop']);
    expect(a.decisions.map((d) => [d.promptId === r.promptId, d.sessionId, d.route])).toEqual(Array.from({ length: 9 }, () => [true, 'conv-9', 'agent_run']));
    await a.shutdown();
  });

  it('emits neither raw error types, tool names nor error text', async () => {
    const a = agentSdk();
    const r = a.run();
    for (let i = 0; i < 9; i++) r.round([{ name: 'secret_tool', errorType: 'acme.internal.QuotaExceeded' }]);
    r.end();
    const logs = a.guardLogs.getFinishedLogRecords();
    expect(logs.length).toBeGreaterThan(0);
    const text = JSON.stringify(logs.map((l) => [l.attributes, l.body])) + JSON.stringify(await a.metricPoints());
    for (const secret of ['QuotaExceeded', 'acme', 'secret_tool', '/secret/path', 'genai_other_']) expect(text).not.toContain(secret);
    expect(logs.some((l) => l.attributes['execution_error_type'] === 'other')).toBe(true);
    expect(logs.every((l) => String(l.attributes['event.name']).startsWith('agent.') || l.attributes['event.name'] === 'loop_detected')).toBe(true);
    await a.shutdown();
  });
});

describe('genai profile: the control hook for a loop the user owns (enforce)', () => {
  it('remind after the 8th failure across 2 batches, stop on the next matching batch', async () => {
    const a = agentSdk({ mode: 'enforce' });
    const r = a.run();
    const actions: string[] = [];
    for (let i = 0; i < 9; i++) {
      r.round([{}]);
      const action = a.guard.control.afterToolBatch({ promptId: r.promptId, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true });
      actions.push(action.type === 'none' ? 'none' : `${action.type}:${action.text === REPEATED_TOOL_FAILURE_REMINDER || action.text === REPEATED_TOOL_FAILURE_STOP_TEXT}`);
      if (action.type === 'stop') break;
    }
    r.span.end();
    expect(actions).toEqual(['none', 'none', 'none', 'none', 'none', 'none', 'none', 'remind:true', 'stop:true']);
    expect(summary(a.decisions).slice(-2)).toEqual(['8:warned', '9:stopped']);
    await a.shutdown();
  });
});

describe('genai profile: the identical-call repetition breaker from gen_ai.tool.call.arguments', () => {
  it('a byte-identical call that succeeds every round: warn at 3, abort at 5; a new run resets the run of calls', async () => {
    const a = agentSdk();
    const reps: string[] = [];
    a.guard.addListener({ onRepetitionDecision: (r) => reps.push(`${r.route}:${r.outcome.decision}`) });
    const identical = (r: ReturnType<typeof a.run>, rounds: number): void => {
      for (let i = 0; i < rounds; i++) {
        r.child('chat model', 'chat', r.ctx).end();
        const s = r.tool({ name: 'list_dir' });
        s.setAttribute('gen_ai.tool.call.arguments', '{"path": "."}');
        r.endTool(s, { ok: true });
      }
      r.end();
    };
    identical(a.run('invoke_agent a', 'invoke_agent', { 'gen_ai.conversation.id': 'c' }), 5);
    identical(a.run('invoke_agent a', 'invoke_agent', { 'gen_ai.conversation.id': 'c' }), 2);
    expect(reps.filter((r) => r !== 'agent_run:none')).toEqual(['agent_run:would_warn', 'agent_run:would_abort']);
    // No failure-guard decision: every call succeeded.
    expect(a.decisions.every((d) => d.outcome.decision === 'none')).toBe(true);
    const emitted = JSON.stringify(a.guardLogs.getFinishedLogRecords().map((l) => l.attributes));
    expect(emitted).not.toContain('path');
    expect(emitted).not.toContain('list_dir');
    await a.shutdown();
  });
});

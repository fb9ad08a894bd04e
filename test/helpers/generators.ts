/**
 * fast-check generators, a real-SDK harness and small telemetry builders shared by the property
 * and serve tests.
 */
import fc from 'fast-check';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Span, Tracer } from '@opentelemetry/api';
import type { Logger } from './setup.js';
import type {
  BatchSettledEvent,
  ExecutionStatus,
  GuardMode,
  TerminalStatus,
  ToolCallObservation,
  ToolType,
} from '../../src/core/failure/types.js';

// ---------------------------------------------------------------------------------------------
// A real SDK with the guard registered (as test/helpers/setup.ts), exposing tracer and logger
// ---------------------------------------------------------------------------------------------

export { guardedSdk } from './setup.js';

// ---------------------------------------------------------------------------------------------
// Reducer inputs (R3)
// ---------------------------------------------------------------------------------------------

export const TERMINAL_VALUES: readonly (TerminalStatus | undefined)[] = ['success', 'error', 'cancelled', undefined];
export const EXECUTION_VALUES: readonly (ExecutionStatus | undefined)[] = ['not_started', 'success', 'error', 'cancelled', 'unknown', undefined];
export const ERROR_TYPES: readonly (string | undefined)[] = ['file_not_found', 'shell_execute_error', 'unknown', undefined, ''];
export const TOOL_NAMES: readonly (string | undefined)[] = ['read_file', 'run_shell_command', 'mcp__srv__query', '', undefined];
export const MODES: readonly GuardMode[] = ['off', 'shadow', 'warn', 'enforce'];

/** One observation over every terminal/execution status, error type and tool name. */
export function arbObservation(): fc.Arbitrary<ToolCallObservation> {
  return fc.record({
    callId: fc.string({ maxLength: 6 }),
    policyToolName: fc.constantFrom(...TOOL_NAMES),
    toolType: fc.constantFrom<ToolType | undefined>('native', 'mcp', undefined),
    terminalStatus: fc.constantFrom(...TERMINAL_VALUES),
    executionStatus: fc.constantFrom(...EXECUTION_VALUES),
    executionErrorType: fc.constantFrom(...ERROR_TYPES),
    providerDuplicate: fc.boolean(),
  });
}

/** An eligible failure, biased towards one key so streaks actually reach the threshold. */
export function arbEligibleFailure(): fc.Arbitrary<ToolCallObservation> {
  return fc.record({
    callId: fc.string({ maxLength: 6 }),
    policyToolName: fc.constantFrom('read_file', 'read_file', 'read_file', 'run_shell_command'),
    toolType: fc.constantFrom<ToolType | undefined>('native', 'mcp', undefined),
    terminalStatus: fc.constant<TerminalStatus>('error'),
    executionStatus: fc.constant<ExecutionStatus>('error'),
    executionErrorType: fc.constantFrom('file_not_found', 'file_not_found', 'file_not_found', 'shell_execute_error'),
    providerDuplicate: fc.constant(false),
  });
}

/** A success of a random tool. */
export function arbSuccess(): fc.Arbitrary<ToolCallObservation> {
  return fc.record({
    callId: fc.string({ maxLength: 6 }),
    policyToolName: fc.constantFrom('read_file', 'glob', 'run_shell_command'),
    toolType: fc.constantFrom<ToolType | undefined>('native', 'mcp'),
    terminalStatus: fc.constant<TerminalStatus>('success'),
    executionStatus: fc.constantFrom<ExecutionStatus>('success', 'not_started'),
    executionErrorType: fc.constant(undefined),
    providerDuplicate: fc.constant(false),
  });
}

/**
 * Mostly eligible failures of one key (so streaks reach warned and latched), some successes,
 * some failures of another key, and sometimes anything at all.
 */
export function arbBiasedObservation(): fc.Arbitrary<ToolCallObservation> {
  const sameKey = arbEligibleFailure().map((o) => ({ ...o, policyToolName: 'read_file', executionErrorType: 'file_not_found' }));
  return fc.oneof(
    { weight: 20, arbitrary: sameKey },
    { weight: 1, arbitrary: arbEligibleFailure() },
    { weight: 2, arbitrary: arbSuccess() },
    { weight: 1, arbitrary: arbObservation() },
  );
}

/** One settled-batch event; `mode` fixed or random per event. */
export function arbBatchEvent(mode?: GuardMode): fc.Arbitrary<BatchSettledEvent> {
  return fc.record({
    type: fc.constant<'batch_settled'>('batch_settled'),
    mode: mode === undefined ? fc.constantFrom(...MODES) : fc.constant(mode),
    hasExternalInput: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    hasQueuedPrompt: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    inputReliable: fc.oneof({ weight: 20, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    batch: fc.record({
      complete: fc.oneof({ weight: 10, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      observations: fc.oneof(
        { weight: 6, arbitrary: fc.array(arbBiasedObservation(), { minLength: 1, maxLength: 6 }) },
        { weight: 1, arbitrary: fc.array(arbObservation(), { minLength: 0, maxLength: 6 }) },
      ),
    }),
  });
}

// ---------------------------------------------------------------------------------------------
// Arbitrary telemetry streams (R1)
// ---------------------------------------------------------------------------------------------

export const QWEN_SPAN_NAMES = [
  'qwen-code.interaction',
  'qwen-code.llm_request',
  'qwen-code.tool',
  'qwen-code.tool.execution',
  'qwen-code.subagent',
] as const;

export const QWEN_EVENT_NAMES = ['qwen-code.tool_call', 'qwen-code.api_request', 'loop_detected', 'qwen-code.repeated_tool_failure_guard'] as const;

const ATTR_KEYS = [
  'qwen-code.prompt_id',
  'prompt_id',
  'qwen-code.message_type',
  'qwen-code.turn_status',
  'llm_request.context',
  'session.id',
  'tool.call_id',
  'call_id',
  'gen_ai.tool.name',
  'function_name',
  'execution_status',
  'error_type',
  'status',
  'tool_type',
  'response_id',
  'parent_call_id',
  'tool.parent_call_id',
  'loop_type',
  'event.name',
  'function_args',
  'error',
  'x.random',
] as const;

/** A small id pool so records actually join; plus malformed ones. */
const ID_POOL = ['p1', 'p2', 'p3', 'c1', 'c2', 'c3', '', ' ', '__proto__', 'constructor', '0'];
const VALUE_POOL = [
  'acp_prompt',
  'cron',
  'userQuery',
  'interaction',
  'subagent',
  'cancelled',
  'ok',
  'error',
  'success',
  'not_started',
  'unknown',
  'file_not_found',
  'Not A Classification!',
  'native',
  'mcp',
  'read_file',
  'turn_tool_call_cap',
  'repeated_tool_execution_failure',
  'qwen-code.tool_call',
  'qwen-code.api_request',
];

/** A value as an attribute may hold it (including types the SDK drops). */
export function arbAttrValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...ID_POOL) },
    { weight: 5, arbitrary: fc.constantFrom(...VALUE_POOL) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean()) },
    { weight: 1, arbitrary: fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.integer()), { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constantFrom(null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -0) },
    { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 }) },
    { weight: 1, arbitrary: fc.constant('x'.repeat(200_000)) },
  );
}

export function arbAttributes(): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .array(fc.tuple(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...ATTR_KEYS) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }), arbAttrValue()), {
      maxLength: 8,
    })
    .map((pairs) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of pairs) out[k] = v;
      return out;
    });
}

/**
 * One step of an arbitrary stream. A span is referred to by its label, or by a number (the n-th
 * started span, modulo the count).
 */
export type SpanRef = string | number;
export type StreamCommand =
  | { kind: 'start'; label?: string; name: string; attributes: Record<string, unknown>; parent: SpanRef | 'root' | 'invalid' | 'none' }
  | { kind: 'set'; span: SpanRef; attributes: Record<string, unknown> }
  | { kind: 'status'; span: SpanRef; message: string }
  | { kind: 'end'; span: SpanRef }
  | { kind: 'log'; eventName: string | undefined; attributes: Record<string, unknown>; body: unknown; span: SpanRef | 'none' }
  | { kind: 'hook'; promptId: unknown; hasExternalInput: unknown; hasQueuedPrompt: unknown; inputReliable: unknown; channelPrompt: unknown }
  | { kind: 'raw'; which: 'start' | 'end' | 'log'; name: string; attributes: Record<string, unknown>; badContext: boolean };

/** A random, mostly unstructured command (noise). */
export function arbStreamCommand(): fc.Arbitrary<StreamCommand> {
  const index = fc.nat({ max: 40 });
  const name = fc.oneof({ weight: 8, arbitrary: fc.constantFrom<string>(...QWEN_SPAN_NAMES) }, { weight: 1, arbitrary: fc.constantFrom('http.request', 'POST', '') });
  const boolish = fc.oneof({ weight: 8, arbitrary: fc.boolean() }, { weight: 1, arbitrary: arbAttrValue() });
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant<'start'>('start'),
        name,
        attributes: arbAttributes(),
        parent: fc.oneof(index, fc.constantFrom<'root' | 'invalid' | 'none'>('root', 'invalid', 'none')),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant<'set'>('set'), span: index, attributes: arbAttributes() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant<'status'>('status'), span: index, message: fc.string({ maxLength: 10 }) }) },
    { weight: 6, arbitrary: fc.record({ kind: fc.constant<'end'>('end'), span: index }) },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant<'log'>('log'),
        eventName: fc.option(fc.constantFrom<string>(...QWEN_EVENT_NAMES, 'other'), { nil: undefined }),
        attributes: arbAttributes(),
        body: arbAttrValue(),
        span: fc.oneof(index, fc.constant<'none'>('none')),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant<'hook'>('hook'),
        promptId: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...ID_POOL) }, { weight: 1, arbitrary: arbAttrValue() }),
        hasExternalInput: boolish,
        hasQueuedPrompt: boolish,
        inputReliable: boolish,
        channelPrompt: boolish,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant<'raw'>('raw'),
        which: fc.constantFrom<'start' | 'end' | 'log'>('start', 'end', 'log'),
        name,
        attributes: arbAttributes(),
        badContext: fc.boolean(),
      }),
    },
  );
}

/** How one generated call deviates from what qwen-code 0.24.4 writes. Mostly it does not. */
interface CallPlan {
  readonly callId: unknown;
  readonly tool: string;
  readonly status: unknown;
  readonly executionStatus: unknown;
  readonly errorType: unknown;
  readonly dropLog: boolean;
  readonly dropExec: boolean;
  readonly toolNeverEnds: boolean;
  readonly execEndsAfterTool: boolean;
  readonly logAfterToolEnd: boolean;
  readonly extra: Record<string, unknown>;
}

const rare = (p = 12) => fc.oneof({ weight: p, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });
const mostly = <T>(usual: fc.Arbitrary<T>, other: fc.Arbitrary<T>, p = 10) => fc.oneof({ weight: p, arbitrary: usual }, { weight: 1, arbitrary: other });

const CLEAN_CALL: Omit<CallPlan, 'logAfterToolEnd'> = {
  callId: 'auto',
  tool: 'read_file',
  status: 'error',
  executionStatus: 'error',
  errorType: 'file_not_found',
  dropLog: false,
  dropExec: false,
  toolNeverEnds: false,
  execEndsAfterTool: false,
  extra: {},
};

function arbCallPlan(clean: boolean): fc.Arbitrary<CallPlan> {
  if (clean) return fc.boolean().map((logAfterToolEnd) => ({ ...CLEAN_CALL, logAfterToolEnd }));
  return fc.record({
    // 'auto': a fresh id, as a provider gives; otherwise missing, empty, mistyped or duplicate ids
    callId: mostly<unknown>(fc.constant('auto'), fc.constantFrom<unknown>(undefined, '', 7, 'c1'), 25),
    tool: mostly(fc.constant('read_file'), fc.constantFrom('glob', 'run_shell_command', '')),
    status: mostly<unknown>(fc.constant('error'), fc.constantFrom<unknown>('success', 'cancelled', 'weird', undefined, 1), 25),
    executionStatus: mostly<unknown>(fc.constant('error'), fc.constantFrom<unknown>('success', 'not_started', 'cancelled', 'unknown', undefined, true), 25),
    errorType: mostly<unknown>(fc.constant('file_not_found'), fc.constantFrom<unknown>('unknown', undefined, 'Free Text: /etc/passwd', 'shell_execute_error'), 25),
    dropLog: rare(40),
    dropExec: rare(40),
    toolNeverEnds: rare(60),
    execEndsAfterTool: rare(30),
    logAfterToolEnd: fc.boolean(),
    extra: mostly(fc.constant({}), arbAttributes(), 25),
  });
}

interface PromptPlan {
  readonly promptId: string;
  readonly messageType: unknown;
  readonly batches: ReadonlyArray<{
    readonly context: unknown;
    readonly calls: readonly CallPlan[];
    readonly hook: boolean;
    readonly drain: readonly [boolean, boolean, boolean];
  }>;
  readonly end: 'ok' | 'cancelled' | 'never' | 'loop';
}

/** Half the prompts are exactly as qwen-code writes them (so streaks reach warned and latched). */
function arbPromptPlan(): fc.Arbitrary<PromptPlan> {
  return fc.boolean().chain((clean) => arbPromptPlanOf(clean));
}

function arbPromptPlanOf(clean: boolean): fc.Arbitrary<PromptPlan> {
  return fc.record({
    // 'auto': a prompt id of its own; otherwise one that another prompt of the stream may share
    promptId: mostly(fc.constant('auto'), fc.constantFrom('p1', 'p2'), 8),
    messageType: mostly<unknown>(fc.constant('acp_prompt'), fc.constantFrom<unknown>('cron', 'userQuery', undefined), 15),
    batches: fc.array(
      fc.record({
        context: mostly<unknown>(fc.constant('interaction'), fc.constantFrom<unknown>('subagent', 'standalone', undefined), 30),
        calls: fc.array(arbCallPlan(clean), { minLength: 1, maxLength: 5, size: 'max' }),
        hook: mostly(fc.constant(true), fc.constant(false), 30),
        drain: fc.tuple(rare(40), rare(40), mostly(fc.constant(true), fc.constant(false), 40)),
      }),
      { minLength: 1, maxLength: 8, size: 'max' },
    ),
    end: mostly(fc.constant<'ok'>('ok'), fc.constantFrom<'cancelled' | 'never' | 'loop'>('cancelled', 'never', 'loop'), 4),
  });
}

/** Compile prompt plans into commands shaped like qwen-code 0.24.4, with the plans' deviations. */
export function compilePrompts(plans: readonly PromptPlan[]): StreamCommand[] {
  const out: StreamCommand[] = [];
  plans.forEach((plan, pi) => {
    const root = `P${pi}`;
    const p = plan.promptId === 'auto' ? { ...plan, promptId: `prompt-${pi}` } : plan;
    out.push({ kind: 'start', label: root, name: 'qwen-code.interaction', parent: 'root', attributes: { 'qwen-code.prompt_id': p.promptId, 'qwen-code.message_type': p.messageType, 'session.id': 's' } });
    p.batches.forEach((b, bi) => {
      const llm = `${root}.b${bi}`;
      out.push({ kind: 'start', label: llm, name: 'qwen-code.llm_request', parent: root, attributes: { 'qwen-code.prompt_id': p.promptId, 'llm_request.context': b.context } });
      out.push({ kind: 'log', eventName: undefined, span: llm, body: undefined, attributes: { 'event.name': 'qwen-code.api_request', prompt_id: p.promptId } });
      out.push({ kind: 'end', span: llm });
      const deferred: StreamCommand[] = [];
      b.calls.forEach((c, ci) => {
        const tool = `${llm}.c${ci}`;
        const exec = `${tool}.x`;
        const callId = c.callId === 'auto' ? `${p.promptId}.${tool}` : c.callId;
        const ids = callId === undefined ? {} : { 'tool.call_id': callId, call_id: callId };
        out.push({ kind: 'start', label: tool, name: 'qwen-code.tool', parent: root, attributes: { ...ids, 'gen_ai.tool.name': c.tool } });
        if (!c.dropExec && c.executionStatus !== 'not_started') {
          out.push({ kind: 'start', label: exec, name: 'qwen-code.tool.execution', parent: tool, attributes: { ...ids, 'gen_ai.tool.name': c.tool } });
          out.push({ kind: 'set', span: exec, attributes: { execution_status: c.executionStatus, error_type: c.errorType, error: 'tool_error' } });
          const endExec: StreamCommand = { kind: 'end', span: exec };
          if (c.execEndsAfterTool) deferred.push(endExec);
          else out.push(endExec);
        }
        const log: StreamCommand = {
          kind: 'log',
          eventName: undefined,
          span: tool,
          body: 'Tool call.',
          attributes: {
            'event.name': 'qwen-code.tool_call',
            call_id: callId,
            function_name: c.tool,
            function_args: '{"file_path":"/x"}',
            status: c.status,
            execution_status: c.executionStatus,
            error_type: c.errorType,
            prompt_id: p.promptId,
            tool_type: 'native',
            ...c.extra,
          },
        };
        if (!c.dropLog && !c.logAfterToolEnd) out.push(log);
        if (!c.toolNeverEnds) out.push({ kind: 'end', span: tool });
        if (!c.dropLog && c.logAfterToolEnd) out.push(log);
      });
      out.push(...deferred);
      if (b.hook) {
        const [ext, queued, reliable] = b.drain;
        out.push({ kind: 'hook', promptId: p.promptId, hasExternalInput: ext, hasQueuedPrompt: queued, inputReliable: reliable, channelPrompt: false });
      }
    });
    if (p.end === 'loop') out.push({ kind: 'log', eventName: undefined, span: 'none', body: undefined, attributes: { 'event.name': 'loop_detected', loop_type: 'turn_tool_call_cap', prompt_id: p.promptId } });
    if (p.end !== 'never') {
      out.push({ kind: 'set', span: root, attributes: { 'qwen-code.turn_status': p.end === 'cancelled' ? 'cancelled' : 'ok' } });
      out.push({ kind: 'end', span: root });
    }
  });
  return out;
}

/**
 * qwen-code-shaped prompts (with rare deviations), the prompts' commands possibly interleaved,
 * plus random noise commands spliced in anywhere.
 */
export function arbQwenStream(): fc.Arbitrary<StreamCommand[]> {
  return fc
    .tuple(
      fc.array(arbPromptPlan(), { minLength: 1, maxLength: 3 }),
      fc.boolean(),
      fc.oneof(fc.constant([]), fc.array(fc.tuple(fc.nat(), arbStreamCommand()), { maxLength: 8 })),
      fc.array(fc.nat(), { maxLength: 200 }),
    )
    .map(([plans, interleave, noise, picks]) => {
      let commands: StreamCommand[];
      if (!interleave) commands = compilePrompts(plans);
      else {
        // merge the prompts' command lists, keeping each prompt's own order
        const lists = plans.map((p, i) => compilePrompts([p.promptId === 'auto' ? { ...p, promptId: `prompt-${i}` } : p]).map((c) => relabel(c, `I${i}`)));
        commands = [];
        let k = 0;
        while (lists.some((l) => l.length > 0)) {
          const live = lists.filter((l) => l.length > 0);
          const l = live[(picks[k++] ?? 0) % live.length] as StreamCommand[];
          commands.push(l.shift() as StreamCommand);
        }
      }
      for (const [at, c] of noise) commands.splice(at % (commands.length + 1), 0, c);
      return commands;
    });
}

function relabel(c: StreamCommand, prefix: string): StreamCommand {
  const r = (x: SpanRef): SpanRef => (typeof x === 'string' ? `${prefix}${x}` : x);
  switch (c.kind) {
    case 'start':
      return { ...c, label: c.label === undefined ? undefined : `${prefix}${c.label}`, parent: typeof c.parent === 'string' && !['root', 'invalid', 'none'].includes(c.parent) ? r(c.parent) : c.parent };
    case 'set':
    case 'status':
    case 'end':
      return { ...c, span: r(c.span) };
    case 'log':
      return { ...c, span: c.span === 'none' ? c.span : r(c.span) };
    case 'hook':
    case 'raw':
      return c;
    default: {
      const _exhaustive: never = c;
      return _exhaustive;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A light qwen-code driver: spans and logs shaped like qwen-code 0.24.4, holding no references.
// ---------------------------------------------------------------------------------------------

export interface LightCall {
  readonly callId: string;
  readonly name?: string;
  readonly status?: 'success' | 'error' | 'cancelled';
  readonly executionStatus?: 'not_started' | 'success' | 'error' | 'cancelled';
  readonly errorType?: string;
  /** Sensitive raw fields. */
  readonly args?: string;
  readonly result?: string;
  readonly errorText?: string;
  readonly statusMessage?: string;
  readonly path?: string;
}

/** Start an interaction span (returned, so the caller decides whether to keep or end it). */
export function startInteraction(tracer: Tracer, promptId: string, messageType = 'acp_prompt'): Span {
  return tracer.startSpan('qwen-code.interaction', {
    root: true,
    attributes: { 'qwen-code.prompt_id': promptId, 'qwen-code.message_type': messageType, 'session.id': 'sess-gen' },
  });
}

/** A model request of the prompt (a batch boundary) plus its api_request log. */
export function modelRequest(tracer: Tracer, logger: Logger, interaction: Span, promptId: string): void {
  const ctx = trace.setSpan(context.active(), interaction);
  const s = tracer.startSpan('qwen-code.llm_request', { attributes: { 'qwen-code.prompt_id': promptId, 'llm_request.context': 'interaction' } }, ctx);
  logger.emit({ attributes: { 'event.name': 'qwen-code.api_request', prompt_id: promptId }, context: trace.setSpan(context.active(), s) });
  s.end();
}

/** One settled tool call (tool span, execution child, tool_call log). */
export function toolCall(tracer: Tracer, logger: Logger, interaction: Span, promptId: string, c: LightCall): void {
  const name = c.name ?? 'read_file';
  const status = c.status ?? 'error';
  const executionStatus = c.executionStatus ?? (status === 'success' ? 'success' : 'error');
  const errorType = c.errorType ?? 'file_not_found';
  const errorText = c.errorText ?? 'File not found';
  const tool = tracer.startSpan(
    'qwen-code.tool',
    { attributes: { 'tool.call_id': c.callId, call_id: c.callId, 'gen_ai.tool.name': name, 'session.id': 'sess-gen' } },
    trace.setSpan(context.active(), interaction),
  );
  if (c.args !== undefined) tool.setAttribute('gen_ai.tool.call.arguments', c.args);
  const toolCtx = trace.setSpan(context.active(), tool);
  if (executionStatus !== 'not_started') {
    const exec = tracer.startSpan('qwen-code.tool.execution', { attributes: { 'gen_ai.tool.name': name, 'tool.call_id': c.callId } }, toolCtx);
    exec.setAttributes({ execution_status: executionStatus, success: executionStatus === 'success' });
    if (executionStatus === 'error') {
      exec.setAttributes({ error_type: errorType, 'error.type': errorType, error: errorText, 'error.message': errorText });
      exec.setStatus({ code: SpanStatusCode.ERROR, message: c.statusMessage ?? errorText });
    }
    if (c.path !== undefined) exec.setAttribute('file.path', c.path);
    exec.end();
  }
  const attributes: Record<string, string | number | boolean> = {
    'event.name': 'qwen-code.tool_call',
    'session.id': 'sess-gen',
    call_id: c.callId,
    function_name: name,
    function_args: c.args ?? '{}',
    status,
    execution_status: executionStatus,
    success: status === 'success',
    prompt_id: promptId,
    tool_type: 'native',
  };
  if (c.result !== undefined) attributes['gen_ai.tool.call.result'] = c.result;
  if (status === 'error') {
    attributes.error = errorText;
    attributes['error.message'] = errorText;
    attributes.error_type = errorType;
    attributes['error.type'] = errorType;
  }
  logger.emit({ body: `Tool call: ${name}. Success: ${status === 'success'}. ${c.result ?? ''}`, attributes, context: toolCtx });
  if (status === 'error') {
    tool.setAttributes({ error: errorText, 'error.type': 'tool_error' });
    tool.setStatus({ code: SpanStatusCode.ERROR, message: c.statusMessage ?? errorText });
  }
  tool.end();
}

// ---------------------------------------------------------------------------------------------
// OTLP/HTTP JSON requests (serve)
// ---------------------------------------------------------------------------------------------

type OtlpAny = { stringValue: string } | { boolValue: boolean } | { intValue: string };

function kv(attrs: Record<string, string | boolean | number>): Array<{ key: string; value: OtlpAny }> {
  return Object.entries(attrs).map(([key, v]) => ({
    key,
    value: typeof v === 'string' ? { stringValue: v } : typeof v === 'boolean' ? { boolValue: v } : { intValue: String(v) },
  }));
}

/**
 * An OTLP/HTTP JSON logs request carrying one complete logs-only batch of `calls` failing
 * `read_file` calls of `promptId`: an api_request, the tool_call logs, then the next api_request
 * (the boundary that closes the batch). Times in milliseconds since the epoch.
 */
export function otlpLogsBatchRequest(promptId: string, startMillis: number, calls = 2): Record<string, unknown> {
  const nanos = (ms: number) => `${BigInt(Math.round(ms * 1000)) * 1000n}`;
  const records: Array<Record<string, unknown>> = [];
  const log = (ms: number, attrs: Record<string, string | boolean | number>, body: string) =>
    records.push({ timeUnixNano: nanos(ms), observedTimeUnixNano: nanos(ms), severityNumber: 9, body: { stringValue: body }, attributes: kv(attrs) });
  log(startMillis, { 'event.name': 'qwen-code.api_request', prompt_id: promptId, 'session.id': 'sess-serve' }, 'API request.');
  for (let i = 0; i < calls; i++) {
    log(
      startMillis + 0.1 * (i + 1),
      {
        'event.name': 'qwen-code.tool_call',
        'session.id': 'sess-serve',
        call_id: `${promptId}-call-${i}`,
        function_name: 'read_file',
        function_args: '{"file_path":"/workspace/demo/missing.txt"}',
        status: 'error',
        execution_status: 'error',
        error_type: 'file_not_found',
        error: 'File not found: /workspace/demo/missing.txt',
        success: false,
        prompt_id: promptId,
        tool_type: 'native',
      },
      'Tool call: read_file. Success: false.',
    );
  }
  log(startMillis + 0.1 * (calls + 1), { 'event.name': 'qwen-code.api_request', prompt_id: promptId, 'session.id': 'sess-serve' }, 'API request.');
  return {
    resourceLogs: [
      {
        resource: { attributes: kv({ 'service.name': 'qwen-code', 'service.version': '0.24.4' }) },
        scopeLogs: [{ scope: { name: 'qwen-code' }, logRecords: records }],
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Larger captures from a real one (replay)
// ---------------------------------------------------------------------------------------------

/** The top-level objects of a pretty-printed SDK outfile, as text. */
export function outfileObjects(text: string): string[] {
  return text.split(/(?<=\n})\n/).filter((s) => s.trim() !== '');
}

/**
 * Copy `k` of a capture: every UUID (session and prompt ids) and trace id made unique to `k`, and
 * every `HrTime` moved by `shiftSeconds`. Object text stays byte-for-byte in the outfile format.
 */
export function recaptureObject(objectText: string, k: number, shiftSeconds: number): string {
  const hex12 = k.toString(16).padStart(12, '0');
  const hex8 = k.toString(16).padStart(8, '0');
  return objectText
    .replace(/\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{12}\b/g, `$1${hex12}`)
    .replace(/("traceId": ")([0-9a-f]{24})[0-9a-f]{8}"/g, `$1$2${hex8}"`)
    .replace(/\[(\s+)(1[0-9]{9}),/g, (_m, ws: string, sec: string) => `[${ws}${Number(sec) + shiftSeconds},`);
}

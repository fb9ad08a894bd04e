/**
 * The `genai` wire profile: any agent that follows the OpenTelemetry GenAI semantic conventions
 * (latest experimental or v1.36-and-earlier names), read from spans only.
 *
 * - Prompt: one agent run, the `invoke_agent` span (its id, `<traceId>:<spanId>`, is the prompt id;
 *   `gen_ai.conversation.id` is the session). Without an agent span, the trace's root span is the
 *   run. An `invoke_agent` span inside a tool call is an agent invoked as a tool (a subagent): its
 *   calls are out of scope. One inside the run but not inside a tool call is the same run's
 *   orchestration (LangGraph's `{name}.workflow`, ADK's `SequentialAgent` worker, OpenAI Agents'
 *   agent span under its trace's root): its calls are the run's own.
 * - Batch: the `execute_tool` spans that start after a model call span (`chat`, `generate_content`,
 *   `text_completion`) of the run and before the next one; parallel calls share a batch. Model
 *   calls and tools nested inside a tool call are not the run's own.
 * - Outcome of a call, at its span's end: an error (status `ERROR`, or an `error.type`) keyed by
 *   `(gen_ai.tool.name, error.type)`; without `error.type`, the type of the span's recorded
 *   `exception` event (the conventions set `error.type` to the exception type); without either,
 *   the error is unclassified (`unknown`: resets and disables enforcement for the prompt).
 *   Raw types become closed-vocabulary tokens ({@link errorTypeKey}); `_OTHER` is unclassified.
 *   Cancellations (a `CancelledError`/`AbortError` type, Strands' `strands.cancellation.type`) are
 *   `cancelled`; calls that never ran (pydantic-ai validation failures and deferrals) are
 *   `not_started`; anything else is a success.
 * - The identical tool-call repetition breaker gets each foreground call whose span carries
 *   `gen_ai.tool.call.arguments` (opt-in content of the latest generation), at the span's end; the
 *   session is `gen_ai.conversation.id` (else the run), and every run is a new user prompt.
 */
import type { FailureEngine } from '../../engine/failure-engine.js';
import type { RepetitionEngine } from '../../engine/repetition-engine.js';
import type { CallFacts } from '../../engine/call-facts.js';
import { BoundedMap } from '../../engine/bounded.js';
import { hrTimeToMillis, nonEmptyString } from '../wire-profile.js';
import type { LogRecordView, SpanView, WireProfile } from '../wire-profile.js';
import { errorTypeKey } from './error-types.js';
import {
  ADK_RESPONSE_SOURCE_ON_TOOL_ERROR,
  ATTR_ADK_RESPONSE_SOURCE,
  ATTR_ERROR_TYPE,
  ATTR_EXCEPTION_TYPE,
  ATTR_SERVICE_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_PYDANTIC_AI_TOOL_DEFERRAL_NAME,
  ATTR_PYDANTIC_AI_TOOL_FAILURE_STAGE,
  ATTR_STRANDS_CANCELLATION_TYPE,
  EVENT_EXCEPTION,
  GEN_AI_OPERATION_NAME_VALUE_AGENT_STEP,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_GENERATE_CONTENT,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_OPERATION_NAME_VALUE_TEXT_COMPLETION,
  LEGACY_SPAN_NAMES,
  OPERATION_SPAN_NAME,
  STATUS_CODE_ERROR,
} from './semconv.js';

/** Operations the profile acts on (`agent_step`: one step of a run, an explicit batch). */
export type GenAiOperation = 'invoke_agent' | 'agent_step' | 'model_call' | 'execute_tool';

const MODEL_CALL_OPERATIONS: ReadonlySet<string> = new Set([
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_GENERATE_CONTENT,
  GEN_AI_OPERATION_NAME_VALUE_TEXT_COMPLETION,
]);

/** Last segments of error and exception types that mean a cancellation, not a failure. */
const CANCELLATION_TYPES: ReadonlySet<string> = new Set(['CancelledError', 'AbortError', 'KeyboardInterrupt']);

/**
 * `error.type` values a framework writes for every failure of a kind of tool, whatever went wrong
 * (closed list, per framework and version): keying on them would merge different failures into one
 * streak (a false warning), so the recorded exception's type is the key instead, and without one
 * the failure has no type (`unknown` by the design).
 *
 * - Google ADK 2.13.0: `TOOL_ERROR` (its environment tools `read_file`, `write_file`, `edit_file`,
 *   `execute`, the skill and MongoDB toolsets, from `_detect_error_in_response` on an error-status
 *   result) and `MCP_TOOL_ERROR` (`McpTool`, on `isError`).
 *
 * @experimental Source: google-adk 2.13.0 `tools/environment/*`, `tools/skill_toolset.py`,
 *   `tools/mcp_tool/mcp_tool.py`, `telemetry/tracing.py` `trace_tool_call`.
 */
export const CATCH_ALL_ERROR_TYPES: ReadonlySet<string> = new Set(['TOOL_ERROR', 'MCP_TOOL_ERROR']);

/**
 * Tool names of `execute_tool` spans that are not a tool call (closed list, per framework):
 * Google ADK 2.13.0 writes one `execute_tool (merged)` span with `gen_ai.tool.name = (merged tools)`
 * after a batch of parallel calls, for its web UI; each call has its own span.
 *
 * @experimental Source: google-adk 2.13.0 `telemetry/tracing.py` `trace_merged_tool_calls`.
 */
export const NOT_A_CALL_TOOL_NAMES: ReadonlySet<string> = new Set(['(merged tools)']);

/** Open spans tracked at once; entries leave when their span ends. */
const MAX_OPEN_SPANS = 65_536;

/**
 * The operation a span stands for: `gen_ai.operation.name`, else the span name (`execute_tool x`,
 * pydantic-ai's legacy `running tool`, ...). `undefined` for any other span.
 */
export function genAiOperation(span: Pick<SpanView, 'name' | 'attributes'>): GenAiOperation | undefined {
  const op = nonEmptyString(span.attributes[ATTR_GEN_AI_OPERATION_NAME]) ?? LEGACY_SPAN_NAMES[span.name] ?? OPERATION_SPAN_NAME.exec(span.name)?.[1];
  if (op === undefined) return undefined;
  if (op === GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT) return 'invoke_agent';
  if (op === GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL) return 'execute_tool';
  if (MODEL_CALL_OPERATIONS.has(op)) return 'model_call';
  if (op === GEN_AI_OPERATION_NAME_VALUE_AGENT_STEP) return 'agent_step';
  return undefined;
}

/**
 * Where a dialect of the conventions puts what the profile reads. The GenAI conventions are
 * {@link GENAI_DIALECT}; a producer with its own names for the same tree (the Vercel AI SDK's
 * `ai.*` spans) is another dialect of the same profile, so the run, batch and call rules are one.
 */
export interface GenAiDialect {
  /** The operation a span stands for; `undefined` for any other span. */
  operation(span: Pick<SpanView, 'name' | 'attributes'>): GenAiOperation | undefined;
  /** Attribute key of the policy tool name on a tool-call span. */
  readonly toolName: string;
  /** Attribute key of the provider call id on a tool-call span. */
  readonly toolCallId: string;
  /** Attribute key of the call's arguments as JSON text (hashed by the breaker, never kept). */
  readonly toolArguments: string;
  /** Attribute key of the session (conversation) id, when the dialect has one. */
  readonly conversationId: string | undefined;
}

/** The OpenTelemetry GenAI conventions (latest experimental and v1.36-and-earlier names). */
export const GENAI_DIALECT: GenAiDialect = {
  operation: genAiOperation,
  toolName: ATTR_GEN_AI_TOOL_NAME,
  toolCallId: ATTR_GEN_AI_TOOL_CALL_ID,
  toolArguments: ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  conversationId: ATTR_GEN_AI_CONVERSATION_ID,
};

/**
 * The prompt id the `genai` profile gives an agent run: `<traceId>:<spanId>` of its `invoke_agent`
 * span (or, without one, of the trace's root span). A loop the user owns passes it to
 * `guard.control.afterToolBatch`.
 *
 * @param spanContext - the run span's context (`span.spanContext()`)
 * @returns the prompt id, e.g. `4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7`
 */
export function genAiPromptId(spanContext: { readonly traceId: string; readonly spanId: string }): string {
  return `${spanContext.traceId}:${spanContext.spanId}`;
}

/** What the profile remembers about an open span. */
interface SpanInfo {
  /** Prompt id of the run the span belongs to; `undefined` for spans outside any run we track. */
  readonly run: string | undefined;
  /** The run is a trace-root fallback (no `invoke_agent` span above it). */
  readonly fallback: boolean;
  /** The span is the run's own span: its end ends the prompt. */
  readonly runSpan: boolean;
  /** The span is a foreground `execute_tool` call of the run. */
  readonly call: string | undefined;
  /** The span is inside a tool call or a sub-agent: nothing under it is the run's own. */
  readonly nested: boolean;
  /** The span is one step of the run (`agent_step`): its tool calls are one explicit batch. */
  readonly step: boolean;
}

function lastSegment(t: string): string {
  return t.slice(Math.max(t.lastIndexOf('.'), t.lastIndexOf(':')) + 1);
}

/**
 * The raw error type of an ended tool span: `error.type`, else its last `exception` event's type.
 * A known catch-all `error.type` ({@link CATCH_ALL_ERROR_TYPES}) gives way to the recorded
 * exception's type; without one it is no type at all (an untyped failure).
 */
function rawErrorType(span: SpanView): string | undefined {
  const declared = nonEmptyString(span.attributes[ATTR_ERROR_TYPE]);
  if (declared !== undefined && !CATCH_ALL_ERROR_TYPES.has(declared.trim())) return declared;
  return exceptionType(span);
}

/** The type of the span's last `exception` event, if any. */
function exceptionType(span: SpanView): string | undefined {
  const events = span.events ?? [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.name !== EVENT_EXCEPTION || e.attributes === undefined) continue;
    const t = nonEmptyString(e.attributes[ATTR_EXCEPTION_TYPE]);
    if (t !== undefined) return t;
  }
  return undefined;
}

/**
 * The call facts of an ended `execute_tool` span (see the module comment for the rules).
 * Exported for the table-driven profile test.
 */
export function toolOutcome(span: SpanView, toolNameKey: string = ATTR_GEN_AI_TOOL_NAME): CallFacts {
  const a = span.attributes;
  const toolName = nonEmptyString(a[toolNameKey]);
  const raw = rawErrorType(span);
  if (nonEmptyString(a[ATTR_STRANDS_CANCELLATION_TYPE]) !== undefined || (raw !== undefined && CANCELLATION_TYPES.has(lastSegment(raw.trim())))) {
    return { toolName, terminalStatus: 'cancelled', spanExecutionStatus: 'cancelled' };
  }
  if (nonEmptyString(a[ATTR_PYDANTIC_AI_TOOL_FAILURE_STAGE]) === 'validation' || nonEmptyString(a[ATTR_PYDANTIC_AI_TOOL_DEFERRAL_NAME]) !== undefined) {
    return { toolName, terminalStatus: 'error', spanExecutionStatus: 'not_started' };
  }
  // ADK: the tool raised and an `on_tool_error_callback` (ReflectAndRetryToolPlugin) answered for it;
  // the span ends without error status or type (ADK_EXPERIMENTAL_TELEMETRY=true writes the source).
  const failed =
    span.status?.code === STATUS_CODE_ERROR ||
    nonEmptyString(a[ATTR_ERROR_TYPE]) !== undefined ||
    nonEmptyString(a[ATTR_ADK_RESPONSE_SOURCE]) === ADK_RESPONSE_SOURCE_ON_TOOL_ERROR;
  if (!failed) return { toolName, terminalStatus: 'success', spanExecutionStatus: 'success' };
  // A failure without a class (no type, `_OTHER`) ran and failed: execution `error` with no type,
  // which the design makes ineligible (`unknown`) unless the user opts into keying it by tool.
  const key = errorTypeKey(raw);
  return key === undefined
    ? { toolName, terminalStatus: 'error', spanExecutionStatus: 'error' }
    : { toolName, terminalStatus: 'error', spanExecutionStatus: 'error', spanErrorType: key };
}

/** The `genai` wire profile (see the module comment). */
export class GenAiProfile implements WireProfile {
  readonly name = 'genai';
  private readonly _engine: FailureEngine;
  private readonly _repetition: RepetitionEngine | undefined;
  private readonly _dialect: GenAiDialect;
  private readonly _spans = new BoundedMap<string, SpanInfo>(MAX_OPEN_SPANS);

  /**
   * @param engine - the failure guard's engine
   * @param repetition - the identical-call breaker, fed from `gen_ai.tool.call.arguments` when present
   * @param dialect - where the producer puts what the profile reads; default the GenAI conventions
   */
  constructor(engine: FailureEngine, repetition?: RepetitionEngine, dialect: GenAiDialect = GENAI_DIALECT) {
    this._engine = engine;
    this._repetition = repetition;
    this._dialect = dialect;
  }

  onSpanStart(span: SpanView): void {
    const d = this._dialect;
    const op = d.operation(span);
    const ctx = span.spanContext();
    const parentId = span.parentSpanContext?.spanId;
    const parent = parentId === undefined ? undefined : this._info(parentId);
    const promptId = genAiPromptId(ctx);
    // Under a tool call or a sub-agent nothing is the run's own.
    const inside = parent !== undefined && (parent.nested || parent.call !== undefined);
    let info: SpanInfo;
    if (op === 'invoke_agent' && !inside && (parent === undefined || parent.fallback)) {
      // A top-level agent run (possibly under a non-agent root span, which it then replaces).
      info = { run: promptId, fallback: false, runSpan: true, call: undefined, nested: false, step: false };
      this._engine.observePrompt(promptId, {
        foreground: true,
        route: 'agent_run',
        traceId: ctx.traceId,
        sessionId: d.conversationId === undefined ? undefined : nonEmptyString(span.attributes[d.conversationId]),
        serviceName: nonEmptyString(span.resource?.attributes[ATTR_SERVICE_NAME]),
      });
    } else if (parent === undefined) {
      // A root span (or one whose parent was never seen): the run when no agent span comes.
      info = { run: promptId, fallback: true, runSpan: true, call: undefined, nested: false, step: false };
    } else if (inside) {
      // Inside a tool call: a tool's own model calls and tools, or an agent invoked as a tool.
      info = { run: parent.run, fallback: parent.fallback, runSpan: false, call: undefined, nested: true, step: false };
    } else {
      // The run's own span; an `invoke_agent` here (not under a tool call) is the same run's
      // orchestration (a workflow wrapper, a sequential worker, a handoff's next agent): its model
      // calls and tools are the prompt's own.
      info = { run: parent.run, fallback: parent.fallback, runSpan: false, call: undefined, nested: false, step: op === 'agent_step' };
    }
    const run = info.run;
    if (run !== undefined && !info.nested && op !== undefined && op !== 'invoke_agent') {
      if (info.fallback) {
        // No agent span: the root span is the run; the session comes from the first record carrying one.
        const sessionId = d.conversationId === undefined ? undefined : nonEmptyString(span.attributes[d.conversationId]);
        this._engine.observePrompt(run, { sessionId, traceId: ctx.traceId, route: 'agent_run', serviceName: nonEmptyString(span.resource?.attributes[ATTR_SERVICE_NAME]) });
      }
      if (op === 'agent_step') {
        // A step span parents the step's model call and tool calls: the batch is explicit and
        // closes when the step ends, once every call in it has ended.
        this._engine.openBatch(run, hrTimeToMillis(span.startTime));
      } else if (op === 'model_call') {
        // Inside a step the step span is the boundary.
        if (parent?.step !== true) this._engine.boundary(run);
      } else if (!NOT_A_CALL_TOOL_NAMES.has(nonEmptyString(span.attributes[d.toolName]) ?? '')) {
        const callId = nonEmptyString(span.attributes[d.toolCallId]) ?? ctx.spanId;
        info = { ...info, call: callId };
        this._engine.updateCall({
          promptId: run,
          callId,
          opened: 'tool',
          facts: { toolName: nonEmptyString(span.attributes[d.toolName]) },
          timeMillis: hrTimeToMillis(span.startTime),
        });
      }
    }
    this._spans.set(ctx.spanId, info);
  }

  onSpanEnd(span: SpanView): void {
    const spanId = span.spanContext().spanId;
    const info = this._spans.get(spanId);
    if (info === undefined) return;
    this._spans.delete(spanId);
    if (info.run === undefined) return;
    const d = this._dialect;
    if (info.step) this._engine.closeBatch(info.run);
    if (info.call !== undefined) {
      const facts = toolOutcome(span, d.toolName);
      this._engine.updateCall({
        promptId: info.run,
        callId: info.call,
        closed: 'tool',
        settled: true,
        facts,
        timeMillis: hrTimeToMillis(span.endTime),
      });
      const args = span.attributes[d.toolArguments];
      if (this._repetition !== undefined && typeof args === 'string' && facts.toolName !== undefined) {
        // Hashed by the breaker and dropped at once; never stored or emitted.
        this._repetition.observeCall({
          sessionId: d.conversationId === undefined ? undefined : nonEmptyString(span.attributes[d.conversationId]),
          promptId: info.run,
          callId: info.call,
          toolName: facts.toolName,
          args,
          argsAreJsonText: true,
          toolType: undefined,
          userPrompt: true,
          route: 'agent_run',
        });
      }
    }
    if (info.runSpan) this._engine.endPrompt(info.run);
  }

  onLogRecord(_record: LogRecordView): void {
    // no-op: the GenAI conventions' tool calls are spans
  }

  /** The info of an open span; a hit is refreshed so that a long run's parents outlive its children. */
  private _info(spanId: string): SpanInfo | undefined {
    const info = this._spans.get(spanId);
    if (info !== undefined) this._spans.set(spanId, info);
    return info;
  }
}

/**
 * The `codex` wire profile: OpenAI Codex CLI 0.169.0 telemetry as it really arrives (`[otel]` in
 * `config.toml`: `exporter` for logs, `trace_exporter` for spans; docs/codex.md).
 *
 * Logs carry the decisions' inputs (scope `codex_otel.log_only`, `event.name` attribute,
 * `conversation.id` on every record, the turn's trace in the record's span context):
 * - `codex.user_prompt`: a new prompt (one Codex turn); it ends the conversation's previous one.
 *   The prompt id is the turn's trace id (every record of a turn carries it); without trace
 *   context, `<conversation.id>:<n>`;
 * - `codex.api_request`: one model request. Codex sends the next request only after every call of
 *   the previous response has settled, so each request closes the open batch: a batch is the calls
 *   of one model response;
 * - `codex.tool_decision` (`call_id`, `decision`): `denied` / `abort` → the call never ran
 *   (`error` / `not_started`, which resets); anything else admits it;
 * - `codex.sandbox_outcome` (`call_id`, `outcome`): `denied` / `timed_out` / `signal` → the
 *   sandbox refused or ended the command (`sandbox_*`; the call's `codex.tool_result` still says
 *   `success: "true"`). 0.169.0 emits it for only some denials: the others read as successes;
 * - `codex.tool_result` (`call_id`, `tool_name`, `tool_namespace`, `success`, `mcp_server`): the
 *   call settled. `success: "false"` with no structured class is an untyped failure (no type:
 *   ineligible). `arguments` and `output` are free text and never read.
 *
 * Spans add, when exported: `mcp.tools.call` (`tool.call_id`, `error.type`,
 * `codex.mcp.error.code`) types a failed MCP call (see {@link mcpFailureClass}); the end of
 * `session_task.turn` ends its prompt.
 *
 * Blind spot (0.169.0): a shell command that exits non-zero is `success: "true"` on
 * `codex.tool_result` (the exit code is only in the output text): it reads as a success.
 */
import { BoundedMap } from '../../engine/bounded.js';
import type { CallFacts, GuardRoute } from '../../engine/call-facts.js';
import type { FailureEngine } from '../../engine/failure-engine.js';
import { hrTimeToMillis, nonEmptyString } from '../wire-profile.js';
import type { LogRecordView, SpanView, WireProfile } from '../wire-profile.js';
import { codexPolicyToolName, mcpFailureClass, sandboxFailureClass } from './failure-class.js';
import type { CodexFailureClass } from './failure-class.js';

/** Prefix of Codex's instrumentation scopes (`codex_otel.log_only`, `codex_otel.trace_safe`). */
export const CODEX_SCOPE_PREFIX = 'codex_otel';
/**
 * Codex's Resource `service.name` values: its originator (`codex_exec` for `codex exec`, observed on
 * 0.169.0; `codex_cli_rs` for the interactive CLI, Codex's default originator in its source).
 */
export const CODEX_SERVICE_NAMES: readonly string[] = Object.freeze(['codex_exec', 'codex_cli_rs']);
/** Prefix of Codex's log event names. */
export const CODEX_EVENT_PREFIX = 'codex.';
/** Span of one MCP `tools/call` request. */
export const CODEX_SPAN_MCP_TOOLS_CALL = 'mcp.tools.call';
/** Span of one turn (`turn.id`). */
export const CODEX_SPAN_TURN = 'session_task.turn';
/** `originator` of `codex exec` (headless). */
export const CODEX_EXEC_ORIGINATOR = 'codex_exec';

const ATTR_EVENT_NAME = 'event.name';
const ATTR_CONVERSATION_ID = 'conversation.id';
const ATTR_ORIGINATOR = 'originator';
const ATTR_CALL_ID = 'call_id';
const ATTR_TOOL_NAME = 'tool_name';
const ATTR_TOOL_NAMESPACE = 'tool_namespace';
const ATTR_DECISION = 'decision';
const ATTR_OUTCOME = 'outcome';
const ATTR_SUCCESS = 'success';
const ATTR_MCP_SERVER = 'mcp_server';
const ATTR_SPAN_CALL_ID = 'tool.call_id';
const ATTR_ERROR_TYPE = 'error.type';
const ATTR_MCP_ERROR_CODE = 'codex.mcp.error.code';

const CONVERSATIONS_TRACKED = 16_384;
const TRACES_TRACKED = 65_536;
const INVALID_TRACE_ID = '00000000000000000000000000000000';

/**
 * The prompt id the profile gives the turn a `codex.user_prompt` record opens: the turn's trace id
 * (from the record's span context), or `undefined` for any other record or one without trace
 * context. The replay audit uses it to recognise the guard's `prompt_id` values as input ids.
 *
 * @param record - a log record
 */
export function codexPromptIdOf(record: LogRecordView): string | undefined {
  if (record.attributes[ATTR_EVENT_NAME] !== 'codex.user_prompt' || !record.instrumentationScope.name.startsWith(CODEX_SCOPE_PREFIX)) return undefined;
  return validTraceId(record.spanContext?.traceId);
}

interface ConversationState {
  readonly promptId: string;
  readonly route: GuardRoute;
  readonly prompts: number;
}

/** The Codex CLI 0.169.0 profile. */
export class CodexProfile implements WireProfile {
  readonly name = 'codex';
  private readonly _engine: FailureEngine;
  private readonly _conversations = new BoundedMap<string, ConversationState>(CONVERSATIONS_TRACKED);
  private readonly _traceToPrompt = new BoundedMap<string, string>(TRACES_TRACKED);

  /** @param engine - the failure guard's engine */
  constructor(engine: FailureEngine) {
    this._engine = engine;
  }

  onSpanStart(): void {
    // Everything a span adds is known at its end.
  }

  onSpanEnd(span: SpanView): void {
    if (span.name === CODEX_SPAN_TURN) {
      const promptId = this._traceToPrompt.get(span.spanContext().traceId);
      if (promptId !== undefined) this._engine.endPrompt(promptId);
      return;
    }
    if (span.name !== CODEX_SPAN_MCP_TOOLS_CALL) return;
    const attrs = span.attributes;
    const failureClass = mcpFailureClass(attrs[ATTR_ERROR_TYPE], attrs[ATTR_MCP_ERROR_CODE]);
    const callId = nonEmptyString(attrs[ATTR_SPAN_CALL_ID]);
    const conversationId = nonEmptyString(attrs[ATTR_CONVERSATION_ID]);
    if (failureClass === undefined || callId === undefined || conversationId === undefined) return;
    const conversation = this._conversations.get(conversationId);
    if (conversation === undefined) return;
    this._engine.updateCall({
      promptId: conversation.promptId,
      callId,
      facts: spanFacts(failureClass),
      timeMillis: hrTimeToMillis(span.endTime),
    });
  }

  onLogRecord(record: LogRecordView): void {
    if (!record.instrumentationScope.name.startsWith(CODEX_SCOPE_PREFIX)) return;
    const attrs = record.attributes;
    const name = nonEmptyString(attrs[ATTR_EVENT_NAME]);
    const conversationId = nonEmptyString(attrs[ATTR_CONVERSATION_ID]);
    if (name === undefined || conversationId === undefined) return;
    const timeMillis = hrTimeToMillis(record.hrTime);
    switch (name) {
      case 'codex.user_prompt': {
        const previous = this._conversations.get(conversationId);
        if (previous !== undefined) this._engine.endPrompt(previous.promptId);
        const n = (previous?.prompts ?? 0) + 1;
        const traceId = codexPromptIdOf(record);
        const promptId = traceId ?? `${conversationId}:${n}`;
        const route: GuardRoute = attrs[ATTR_ORIGINATOR] === CODEX_EXEC_ORIGINATOR ? 'headless' : 'acp_foreground';
        this._conversations.set(conversationId, { promptId, route, prompts: n });
        if (traceId !== undefined) this._traceToPrompt.set(traceId, promptId);
        this._engine.observePrompt(promptId, { sessionId: conversationId, foreground: true, route, traceId });
        return;
      }
      case 'codex.api_request': {
        const conversation = this._conversations.get(conversationId);
        if (conversation === undefined) return;
        this._engine.observePrompt(conversation.promptId, { sessionId: conversationId, foreground: true, route: conversation.route });
        this._engine.boundary(conversation.promptId);
        return;
      }
      case 'codex.tool_decision':
      case 'codex.sandbox_outcome':
      case 'codex.tool_result': {
        const conversation = this._conversations.get(conversationId);
        const callId = nonEmptyString(attrs[ATTR_CALL_ID]);
        if (conversation === undefined || callId === undefined) return;
        this._call(name, conversation.promptId, callId, attrs, timeMillis);
        return;
      }
      default:
        return;
    }
  }

  private _call(name: string, promptId: string, callId: string, attrs: LogRecordView['attributes'], timeMillis: number): void {
    const rawName = nonEmptyString(attrs[ATTR_TOOL_NAME]);
    const toolName = rawName === undefined ? undefined : codexPolicyToolName(rawName, nonEmptyString(attrs[ATTR_TOOL_NAMESPACE]));
    if (name === 'codex.tool_decision') {
      const decision = attrs[ATTR_DECISION];
      const rejected = decision === 'denied' || decision === 'abort';
      this._engine.updateCall({
        promptId,
        callId,
        opened: rejected ? undefined : 'tool',
        settled: rejected,
        facts: rejected ? facts(toolName, undefined, 'error', 'not_started', undefined) : facts(toolName, undefined, undefined, undefined, undefined),
        timeMillis,
      });
      return;
    }
    if (name === 'codex.sandbox_outcome') {
      const failureClass = sandboxFailureClass(attrs[ATTR_OUTCOME]);
      if (failureClass === undefined) return;
      this._engine.updateCall({ promptId, callId, facts: facts(toolName, undefined, 'error', 'error', failureClass), timeMillis });
      return;
    }
    const mcpServer = nonEmptyString(attrs[ATTR_MCP_SERVER]);
    const success = attrs[ATTR_SUCCESS] === 'true';
    this._engine.updateCall({
      promptId,
      callId,
      closed: 'tool',
      settled: true,
      // An untyped failure: `error` with no type (ineligible, as the design treats an unclassified error).
      facts: success ? facts(toolName, mcpServer, 'success', 'success', undefined) : facts(toolName, mcpServer, 'error', 'error', undefined),
      timeMillis,
    });
  }
}

function validTraceId(traceId: string | undefined): string | undefined {
  return traceId === undefined || traceId === '' || traceId === INVALID_TRACE_ID ? undefined : traceId;
}

function facts(
  toolName: string | undefined,
  mcpServer: string | undefined,
  terminalStatus: string | undefined,
  executionStatus: string | undefined,
  errorType: CodexFailureClass | undefined,
): CallFacts {
  return {
    toolName: undefined,
    lookupName: toolName,
    toolType: toolName === undefined ? undefined : mcpServer !== undefined || toolName.startsWith('mcp__') ? 'mcp' : 'native',
    terminalStatus,
    spanExecutionStatus: undefined,
    spanErrorType: undefined,
    logExecutionStatus: executionStatus,
    logErrorType: errorType,
    providerDuplicate: undefined,
  };
}

function spanFacts(failureClass: CodexFailureClass): CallFacts {
  return {
    terminalStatus: 'error',
    spanExecutionStatus: 'error',
    spanErrorType: failureClass,
  };
}

/**
 * The `claude-code` wire profile: Claude Code 2.1.328 telemetry as it really arrives
 * (`CLAUDE_CODE_ENABLE_TELEMETRY=1`; spans only with `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`).
 *
 * Logs alone suffice (scope `com.anthropic.claude_code.events`, `event.name` attribute):
 * - `user_prompt` (`prompt.id`, `session.id`): a new prompt; it ends the session's previous prompt;
 * - `api_request` (`prompt.id`, `request_id`, `query_source`): one model response (route `headless`
 *   for `sdk`, i.e. `claude -p`, else `acp_foreground`, the interactive foreground). A foreground
 *   response (`query_source` `sdk` or `repl_main_thread…`, the CLI's own "main" rule) is a batch
 *   boundary; a subagent's (`agent:…`, `hook_agent`) or an auxiliary query's is not, and its calls are
 *   out of scope (design non-goals: subagent-internal loops);
 * - `tool_decision` (`request_id`, `tool_use_id`, `tool_name`, `decision`): the call was admitted
 *   (`accept`: running) or rejected before it ran (`reject`: a permission or PreToolUse-hook
 *   denial: `error` / `not_started`, which resets; the turn goes on, so the batch is judged);
 * - `tool_result` (`request_id`, `tool_use_id`, `tool_name`, `success` `"true"`/`"false"`,
 *   `error_type`): the call settled. The error type is mapped onto the closed
 *   {@link ClaudeCodeFailureClass} vocabulary; raw values never reach the engine.
 *
 * A batch is the calls of one foreground `request_id` (every call of a parallel batch carries the
 * same one). Calls whose `api_request` has not been seen yet are held (bounded) until it arrives,
 * since tools start while the response still streams. Spans, when present, add: the
 * `claude_code.llm_request` span start classifies its `request_id` early (`llm_request.context`
 * `interaction` = foreground, anything else = out of scope), and the end of the root
 * `claude_code.interaction` span ends the prompt (spans reach their prompt through their trace,
 * learnt from log records' span context). Calls rejected by input validation and unknown tools
 * leave no record at all in 2.1.328: they are invisible to this profile.
 */
import { BoundedMap } from '../../engine/bounded.js';
import type { CallFacts, GuardRoute } from '../../engine/call-facts.js';
import type { FailureEngine } from '../../engine/failure-engine.js';
import { hrTimeToMillis, nonEmptyString } from '../wire-profile.js';
import type { LogRecordView, SpanView, WireProfile } from '../wire-profile.js';
import { failureClassOfErrorType } from './failure-class.js';

/** Log scope of Claude Code events. */
export const CLAUDE_CODE_EVENTS_SCOPE = 'com.anthropic.claude_code.events';
/** Span scope of Claude Code traces (beta). */
export const CLAUDE_CODE_TRACING_SCOPE = 'com.anthropic.claude_code.tracing';
/** Prefix every Claude Code instrumentation scope shares (auto-detection in `replay`). */
export const CLAUDE_CODE_SCOPE_PREFIX = 'com.anthropic.claude_code';
/** `service.name` of Claude Code's resource. */
export const CLAUDE_CODE_SERVICE_NAME = 'claude-code';

/** Root span per user prompt (own trace). */
export const CLAUDE_CODE_SPAN_INTERACTION = 'claude_code.interaction';
/** Span per model request; `request_id`, `llm_request.context`. */
export const CLAUDE_CODE_SPAN_LLM_REQUEST = 'claude_code.llm_request';

const ATTR_EVENT_NAME = 'event.name';
const ATTR_PROMPT_ID = 'prompt.id';
const ATTR_SESSION_ID = 'session.id';
const ATTR_REQUEST_ID = 'request_id';
const ATTR_QUERY_SOURCE = 'query_source';
const ATTR_TOOL_USE_ID = 'tool_use_id';
const ATTR_TOOL_NAME = 'tool_name';
const ATTR_DECISION = 'decision';
const ATTR_SUCCESS = 'success';
const ATTR_ERROR_TYPE = 'error_type';
const ATTR_LLM_REQUEST_CONTEXT = 'llm_request.context';

const TRACKED = 65_536;
const SESSIONS_TRACKED = 16_384;
/** Calls held while their response's `api_request` is unknown, across all requests. */
const MAX_HELD_CALLS = 4_096;
const INVALID_TRACE_ID = '00000000000000000000000000000000';

/** Claude Code's own "main thread" rule for a `query_source`. */
export function isForegroundQuerySource(querySource: string | undefined): boolean {
  return querySource === 'sdk' || (querySource !== undefined && querySource.startsWith('repl_main_thread'));
}

type Scope = 'foreground' | 'out_of_scope';

interface HeldCall {
  readonly promptId: string;
  readonly sessionId: string | undefined;
  readonly requestId: string;
  readonly callId: string;
  readonly kind: 'decision' | 'result';
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly timeMillis: number;
}

/** The Claude Code 2.1.328 profile. */
export class ClaudeCodeProfile implements WireProfile {
  readonly name = 'claude-code';
  private readonly _engine: FailureEngine;
  /** `request_id` → foreground or not. */
  private readonly _requests = new BoundedMap<string, Scope>(TRACKED);
  /** Session → its current prompt (a new `user_prompt` ends the previous one). */
  private readonly _sessionPrompt = new BoundedMap<string, string>(SESSIONS_TRACKED);
  private readonly _traceToPrompt = new BoundedMap<string, string>(TRACKED);
  private _held: HeldCall[] = [];

  /** @param engine - the failure guard's engine */
  constructor(engine: FailureEngine) {
    this._engine = engine;
  }

  onSpanStart(span: SpanView): void {
    if (span.name !== CLAUDE_CODE_SPAN_LLM_REQUEST) return;
    const requestId = nonEmptyString(span.attributes[ATTR_REQUEST_ID]);
    if (requestId === undefined) return;
    const context = nonEmptyString(span.attributes[ATTR_LLM_REQUEST_CONTEXT]);
    if (context !== undefined) this._classify(requestId, context === 'interaction' ? 'foreground' : 'out_of_scope', undefined);
  }

  onSpanEnd(span: SpanView): void {
    if (span.name === CLAUDE_CODE_SPAN_LLM_REQUEST) {
      // The request_id is set when the response headers arrive, so it may only be on the ended span.
      this.onSpanStart(span);
      return;
    }
    if (span.name !== CLAUDE_CODE_SPAN_INTERACTION || span.parentSpanContext !== undefined) return;
    const traceId = span.spanContext().traceId;
    const promptId = this._traceToPrompt.get(traceId);
    if (promptId !== undefined) this._endPrompt(promptId);
  }

  onLogRecord(record: LogRecordView): void {
    if (record.instrumentationScope.name !== CLAUDE_CODE_EVENTS_SCOPE) return;
    const attrs = record.attributes;
    const name = nonEmptyString(attrs[ATTR_EVENT_NAME]);
    const promptId = nonEmptyString(attrs[ATTR_PROMPT_ID]);
    if (name === undefined || promptId === undefined) return;
    const sessionId = nonEmptyString(attrs[ATTR_SESSION_ID]);
    const traceId = record.spanContext?.traceId;
    switch (name) {
      case 'user_prompt':
        this._userPrompt(promptId, sessionId);
        this._remember(traceId, promptId);
        return;
      case 'api_request': {
        const requestId = nonEmptyString(attrs[ATTR_REQUEST_ID]);
        if (requestId === undefined) return;
        const querySource = nonEmptyString(attrs[ATTR_QUERY_SOURCE]);
        const foreground = isForegroundQuerySource(querySource);
        this._remember(traceId, promptId);
        this._classify(requestId, foreground ? 'foreground' : 'out_of_scope', {
          promptId,
          sessionId,
          route: querySource === 'sdk' ? 'headless' : 'acp_foreground',
        });
        return;
      }
      case 'tool_decision':
      case 'tool_result': {
        const requestId = nonEmptyString(attrs[ATTR_REQUEST_ID]);
        const callId = nonEmptyString(attrs[ATTR_TOOL_USE_ID]);
        if (requestId === undefined || callId === undefined) return;
        this._remember(traceId, promptId);
        const call: HeldCall = {
          promptId,
          sessionId,
          requestId,
          callId,
          kind: name === 'tool_result' ? 'result' : 'decision',
          attrs,
          timeMillis: hrTimeToMillis(record.hrTime),
        };
        const scope = this._requests.get(requestId);
        if (scope === 'foreground') this._call(call);
        else if (scope === undefined) this._hold(call);
        return;
      }
      default:
        return;
    }
  }

  private _userPrompt(promptId: string, sessionId: string | undefined): void {
    if (sessionId !== undefined) {
      const previous = this._sessionPrompt.get(sessionId);
      if (previous !== undefined && previous !== promptId) this._endPrompt(previous);
      this._sessionPrompt.set(sessionId, promptId);
    }
    this._engine.observePrompt(promptId, { sessionId, foreground: true });
  }

  /**
   * A request's scope became known. A foreground `api_request` also closes the prompt's open batch
   * (the previous response's calls have all settled before the next request is sent), then
   * releases the calls held for it.
   */
  private _classify(
    requestId: string,
    scope: Scope,
    fromLog: { promptId: string; sessionId: string | undefined; route: GuardRoute } | undefined,
  ): void {
    const known = this._requests.get(requestId);
    if (known === undefined) this._requests.set(requestId, scope);
    if (fromLog !== undefined && scope === 'foreground') {
      this._engine.observePrompt(fromLog.promptId, { sessionId: fromLog.sessionId, foreground: true, route: fromLog.route });
      this._engine.boundary(fromLog.promptId);
    }
    if (known !== undefined || this._held.length === 0) return;
    const mine = this._held.filter((c) => c.requestId === requestId);
    if (mine.length === 0) return;
    this._held = this._held.filter((c) => c.requestId !== requestId);
    if (scope === 'foreground') for (const c of mine) this._call(c);
  }

  private _hold(call: HeldCall): void {
    if (this._held.length >= MAX_HELD_CALLS) this._held.shift();
    this._held.push(call);
  }

  private _call(c: HeldCall): void {
    this._engine.observePrompt(c.promptId, { sessionId: c.sessionId });
    const toolName = nonEmptyString(c.attrs[ATTR_TOOL_NAME]);
    if (c.kind === 'decision') {
      const rejected = c.attrs[ATTR_DECISION] === 'reject';
      this._engine.updateCall({
        promptId: c.promptId,
        callId: c.callId,
        opened: rejected ? undefined : 'tool',
        settled: rejected,
        responseId: c.requestId,
        facts: rejected
          ? facts(toolName, 'error', 'not_started', undefined)
          : facts(toolName, undefined, undefined, undefined),
        timeMillis: c.timeMillis,
      });
      return;
    }
    let f: CallFacts;
    if (c.attrs[ATTR_SUCCESS] === 'true') f = facts(toolName, 'success', 'success', undefined);
    else {
      const failure = failureClassOfErrorType(c.attrs[ATTR_ERROR_TYPE]);
      f =
        failure.kind === 'failure'
          ? facts(toolName, 'error', 'error', failure.failureClass)
          : failure.kind === 'cancelled'
            ? facts(toolName, 'cancelled', 'cancelled', undefined)
            : facts(toolName, 'error', 'unknown', undefined);
    }
    this._engine.updateCall({
      promptId: c.promptId,
      callId: c.callId,
      closed: 'tool',
      settled: true,
      responseId: c.requestId,
      facts: f,
      timeMillis: c.timeMillis,
    });
  }

  private _endPrompt(promptId: string): void {
    // Calls still held for this prompt never had a response: they cannot be placed in a batch.
    if (this._held.length > 0) this._held = this._held.filter((c) => c.promptId !== promptId);
    this._engine.endPrompt(promptId);
  }

  private _remember(traceId: string | undefined, promptId: string): void {
    if (traceId === undefined || traceId === '' || traceId === INVALID_TRACE_ID) return;
    if (this._traceToPrompt.get(traceId) !== promptId) this._traceToPrompt.set(traceId, promptId);
  }
}

function facts(
  toolName: string | undefined,
  terminalStatus: string | undefined,
  executionStatus: string | undefined,
  errorType: string | undefined,
): CallFacts {
  return {
    toolName: undefined,
    lookupName: toolName,
    toolType: toolName?.startsWith('mcp__') === true ? 'mcp' : toolName === undefined ? undefined : 'native',
    terminalStatus,
    spanExecutionStatus: undefined,
    spanErrorType: undefined,
    logExecutionStatus: executionStatus,
    logErrorType: errorType,
    providerDuplicate: undefined,
  };
}

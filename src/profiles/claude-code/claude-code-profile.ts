/**
 * The `claude-code` wire profile: Claude Code 2.1.328 telemetry as it really arrives
 * (`CLAUDE_CODE_ENABLE_TELEMETRY=1`; spans only with `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`).
 *
 * Logs alone suffice (scope `com.anthropic.claude_code.events`, `event.name` attribute):
 * - `user_prompt` (`prompt.id`, `session.id`): a new prompt, and its start record (what
 *   `serve --new-prompts-only` admits a prompt on); it ends the session's previous prompt;
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
 * same one). A response's batch opens once, at its `api_request` or at its first call, whichever
 * comes first: tools start while the response still streams, so with a slow stream the log arrives
 * after the first calls (and, with spans, the `llm_request` span has already made the request
 * known); a second opening would split one response into two batches. Calls whose `api_request` is
 * unknown are held (bounded) until it arrives. Spans, when present, add: the
 * `claude_code.llm_request` span classifies its `request_id` early (`llm_request.context`
 * `interaction` = foreground, anything else = out of scope) and gives its `stop_reason`; the
 * `claude_code.tool` span gives an MCP call's server-qualified name (`mcp__<server>__<tool>`; the
 * logs say `mcp_tool` unless `OTEL_LOG_TOOL_DETAILS=1`, whose `tool_parameters` name server and
 * tool); a `claude_code.tool.execution` span that failed without `error.type` marks an interrupted
 * call (2.1.328 sets `error.type=tool_error` on every failure but an interrupt); the end of the root
 * `claude_code.interaction` span ends the prompt (spans reach their prompt through their trace,
 * learnt from log records' span context), after a short grace: 2.1.328 under load ends that span
 * before it logs the prompt's last records (the blocking `PostToolBatch` `hook_execution_complete`,
 * the final batch's calls; 22 ms after the span's end in a conformance run), so the prompt still
 * takes records for {@link CLAUDE_CODE_PROMPT_END_GRACE_MILLIS} of event time after its span's end.
 * It ends at the first record (of any prompt) stamped after the grace, at its session's next
 * `user_prompt`, at the second {@link ClaudeCodeProfile.sweep} after the span's end (when nothing
 * more arrives), or when the guard finishes every prompt (end of a replay, flush, shutdown).
 *
 * What the telemetry does not show, and what the profile does about it:
 * - calls rejected before they run (input validation, unknown tools, Edit/Write preconditions such
 *   as "File has not been read yet", path-rule denials) leave no record. A foreground response that
 *   asked for calls (`stop_reason` `tool_use`; without spans: another foreground request of the
 *   prompt followed it) and left no call record is an incomplete batch (design: reset). A response
 *   with some recorded calls is judged on those; its unrecorded ones stay invisible;
 * - an interrupted call is logged as a failure (`ShellError`). When the prompt ends with no model
 *   request after its latest batch (the turn was cut: an interrupt, a turn cap), that batch is not
 *   judged (`turn_cancelled`), unless a `PostToolBatch` hook blocked after it (the turn was stopped
 *   by a hook that had the settled batch);
 * - an MCP call without a qualified name (logs only, no details) has an unresolved identity: it is
 *   ineligible (design), never keyed on `mcp_tool`.
 *
 * `request_id` and `tool_use_id` are the model provider's ids: unique from Anthropic's API, but a
 * provider that numbers them per session (the conformance fake provider: `req_p1r1`,
 * `toolu_p1r1_0`) repeats them across sessions. Every span and event carries `session.id`, so both
 * are held per session: sessions sharing one pipeline never share a response or a call.
 */
import { BoundedMap, BoundedSet } from '../../engine/bounded.js';
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
/** Span per tool call; `tool_use_id`, `tool_name` (an MCP tool's registered, server-qualified name). */
export const CLAUDE_CODE_SPAN_TOOL = 'claude_code.tool';
/** Child of the tool span around the execution; `success`, `error.type` (absent on an interrupt). */
export const CLAUDE_CODE_SPAN_TOOL_EXECUTION = 'claude_code.tool.execution';

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
const ATTR_STOP_REASON = 'stop_reason';
const ATTR_TOOL_SOURCE = 'tool_source';
const ATTR_TOOL_PARAMETERS = 'tool_parameters';
const ATTR_ERROR_DOT_TYPE = 'error.type';
const ATTR_HOOK_EVENT = 'hook_event';
const ATTR_NUM_BLOCKING = 'num_blocking';
/** The name 2.1.328's logs give every MCP call unless `OTEL_LOG_TOOL_DETAILS=1`. */
const MCP_TOOL_PLACEHOLDER = 'mcp_tool';
const MCP_PREFIX = 'mcp__';
/** Longest `tool_parameters` value parsed for an MCP call's names (it holds two short names). */
const MAX_TOOL_PARAMETERS_CHARS = 4096;

const TRACKED = 65_536;
const SESSIONS_TRACKED = 16_384;
/** Calls held while their response's `api_request` is unknown, across all requests. */
const MAX_HELD_CALLS = 4_096;
const INVALID_TRACE_ID = '00000000000000000000000000000000';

/**
 * How long, in milliseconds of event time, a prompt still takes records after its root
 * `claude_code.interaction` span ended. Claude Code 2.1.328 under load ends the span before it logs
 * the prompt's last records (22 ms before, in a conformance run on a loaded machine); the span's end
 * then waits this long (see {@link ClaudeCodeProfile}).
 */
export const CLAUDE_CODE_PROMPT_END_GRACE_MILLIS = 1_000;
/** Prompts whose end waits for its grace at once; beyond it, the oldest ends at once. */
const MAX_ENDING_PROMPTS = 4_096;

/** Claude Code's own "main thread" rule for a `query_source`. */
export function isForegroundQuerySource(querySource: string | undefined): boolean {
  return querySource === 'sdk' || (querySource !== undefined && querySource.startsWith('repl_main_thread'));
}

type Scope = 'foreground' | 'out_of_scope';

/** A prompt's latest foreground model response. */
interface LatestResponse {
  /** Its session-scoped `request_id`. */
  readonly requestKey: string;
  /** Some call of the response left a record (`tool_decision` or `tool_result`). */
  recorded: boolean;
}

/** What spans told about one call. */
interface SpanCallFacts {
  qualifiedName?: string;
  interrupted?: boolean;
}

/** Where a call was placed: its prompt and response. */
interface Placed {
  readonly promptId: string;
  readonly requestId: string;
  readonly callId: string;
}

/** A prompt whose interaction span ended, waiting for its grace. */
interface EndingPrompt {
  /** Event time (ms since the epoch) after which the prompt ends. */
  readonly endsAfterMillis: number;
  /** A sweep has seen it waiting: the next sweep ends it. */
  swept: boolean;
}

interface HeldCall {
  readonly promptId: string;
  readonly sessionId: string | undefined;
  readonly requestId: string;
  /** {@link sessionScoped} `requestId`. */
  readonly requestKey: string;
  readonly callId: string;
  readonly kind: 'decision' | 'result';
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly timeMillis: number;
}

/** The Claude Code 2.1.328 profile. */
export class ClaudeCodeProfile implements WireProfile {
  readonly name = 'claude-code';
  private readonly _engine: FailureEngine;
  /** Session-scoped `request_id` (as every `request_id` and `tool_use_id` key below) → foreground or not. */
  private readonly _requests = new BoundedMap<string, Scope>(TRACKED);
  /** Session → its current prompt (a new `user_prompt` ends the previous one). */
  private readonly _sessionPrompt = new BoundedMap<string, string>(SESSIONS_TRACKED);
  private readonly _traceToPrompt = new BoundedMap<string, string>(TRACKED);
  private _held: HeldCall[] = [];
  /** Foreground `request_id`s whose batch has opened (it opens once, see the file comment). */
  private readonly _opened = new BoundedSet<string>(TRACKED);
  /** Prompt → its latest foreground response. */
  private readonly _latest = new BoundedMap<string, LatestResponse>(SESSIONS_TRACKED);
  /** `request_id` → the `stop_reason` of its `llm_request` span. */
  private readonly _stopReasons = new BoundedMap<string, string>(TRACKED);
  /** `tool_use_id` → what its spans said, until (and after) its log is placed. */
  private readonly _spanFacts = new BoundedMap<string, SpanCallFacts>(TRACKED);
  /** `tool_use_id` → where its logs were placed, for span facts that arrive after them. */
  private readonly _placed = new BoundedMap<string, Placed>(TRACKED);
  /** Prompt → its end, waiting for the grace after its interaction span ended (in span-end order). */
  private readonly _ending = new Map<string, EndingPrompt>();

  /** @param engine - the failure guard's engine */
  constructor(engine: FailureEngine) {
    this._engine = engine;
  }

  onSpanStart(span: SpanView): void {
    if (this._ending.size > 0) this._endDue(hrTimeToMillis(span.startTime));
    this._spanStart(span);
  }

  private _spanStart(span: SpanView): void {
    if (span.name === CLAUDE_CODE_SPAN_TOOL) {
      this._toolSpan(span);
      return;
    }
    if (span.name !== CLAUDE_CODE_SPAN_LLM_REQUEST) return;
    const requestId = nonEmptyString(span.attributes[ATTR_REQUEST_ID]);
    if (requestId === undefined) return;
    const requestKey = sessionScoped(span.attributes, requestId);
    const stopReason = nonEmptyString(span.attributes[ATTR_STOP_REASON]);
    if (stopReason !== undefined) this._stopReasons.set(requestKey, stopReason);
    const context = nonEmptyString(span.attributes[ATTR_LLM_REQUEST_CONTEXT]);
    if (context !== undefined) this._classify(requestKey, context === 'interaction' ? 'foreground' : 'out_of_scope', undefined);
  }

  onSpanEnd(span: SpanView): void {
    const endMillis = hrTimeToMillis(span.endTime);
    if (this._ending.size > 0) this._endDue(endMillis);
    if (span.name === CLAUDE_CODE_SPAN_LLM_REQUEST || span.name === CLAUDE_CODE_SPAN_TOOL) {
      // Attributes set when the response headers arrive (request_id) or the stream ends
      // (stop_reason) may only be on the ended span.
      this._spanStart(span);
      return;
    }
    if (span.name === CLAUDE_CODE_SPAN_TOOL_EXECUTION) {
      const callId = nonEmptyString(span.attributes[ATTR_TOOL_USE_ID]);
      // 2.1.328 marks every failure `error.type=tool_error`, except an interrupted (or
      // backgrounded) call's.
      if (callId !== undefined && span.attributes[ATTR_SUCCESS] === false && span.attributes[ATTR_ERROR_DOT_TYPE] === undefined) {
        this._spanFact(sessionScoped(span.attributes, callId), { interrupted: true }, endMillis);
      }
      return;
    }
    if (span.name !== CLAUDE_CODE_SPAN_INTERACTION || span.parentSpanContext !== undefined) return;
    const traceId = span.spanContext().traceId;
    const promptId = this._traceToPrompt.get(traceId);
    if (promptId !== undefined && !this._ending.has(promptId)) this._endAfterGrace(promptId, endMillis);
  }

  onLogRecord(record: LogRecordView): void {
    if (record.instrumentationScope.name !== CLAUDE_CODE_EVENTS_SCOPE) return;
    if (this._ending.size > 0) this._endDue(hrTimeToMillis(record.hrTime));
    const attrs = record.attributes;
    const name = nonEmptyString(attrs[ATTR_EVENT_NAME]);
    const promptId = nonEmptyString(attrs[ATTR_PROMPT_ID]);
    if (name === undefined || promptId === undefined) return;
    const sessionId = nonEmptyString(attrs[ATTR_SESSION_ID]);
    const traceId = record.spanContext?.traceId;
    switch (name) {
      case 'user_prompt':
        this._userPrompt(promptId, sessionId);
        // The prompt's start record: `serve --new-prompts-only` admits the prompt on it.
        this._engine.startPrompt(promptId, hrTimeToMillis(record.hrTime));
        this._remember(traceId, promptId);
        return;
      case 'api_request': {
        const requestId = nonEmptyString(attrs[ATTR_REQUEST_ID]);
        if (requestId === undefined) return;
        const querySource = nonEmptyString(attrs[ATTR_QUERY_SOURCE]);
        const foreground = isForegroundQuerySource(querySource);
        this._remember(traceId, promptId);
        this._classify(sessionScoped(attrs, requestId), foreground ? 'foreground' : 'out_of_scope', {
          promptId,
          sessionId,
          route: querySource === 'sdk' ? 'headless' : 'acp_foreground',
          timeMillis: hrTimeToMillis(record.hrTime),
        });
        return;
      }
      case 'hook_execution_complete': {
        // A PostToolBatch hook blocked: it had the settled batch and ended the turn (the guard's
        // own stop, or another hook's); the batch is judged as the hooks judged it.
        const blocking = Number(attrs[ATTR_NUM_BLOCKING]);
        if (attrs[ATTR_HOOK_EVENT] === 'PostToolBatch' && blocking > 0) this._engine.observePrompt(promptId, { batchAwaitingRequest: false });
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
          requestKey: sessionScoped(attrs, requestId),
          callId,
          kind: name === 'tool_result' ? 'result' : 'decision',
          attrs,
          timeMillis: hrTimeToMillis(record.hrTime),
        };
        const scope = this._requests.get(call.requestKey);
        if (scope === 'foreground') this._call(call);
        else if (scope === undefined) this._hold(call);
        return;
      }
      default:
        return;
    }
  }

  /**
   * Ends the prompts whose interaction span ended and that nothing ended since, once they have
   * waited through one whole sweep interval: for a producer that sends nothing after a prompt's end
   * (the guard calls it every `sweepIntervalMillis`).
   */
  sweep(): void {
    for (const [promptId, ending] of this._ending) {
      if (ending.swept) this._endPrompt(promptId);
      else ending.swept = true;
    }
  }

  /** The prompt's interaction span ended at `endMillis`: it ends once the grace has passed. */
  private _endAfterGrace(promptId: string, endMillis: number): void {
    if (this._ending.size >= MAX_ENDING_PROMPTS) {
      const oldest = this._ending.keys().next().value as string;
      this._endPrompt(oldest);
    }
    this._ending.set(promptId, { endsAfterMillis: endMillis + CLAUDE_CODE_PROMPT_END_GRACE_MILLIS, swept: false });
  }

  /** A record stamped `timeMillis` arrived: end the prompts whose grace it is past. */
  private _endDue(timeMillis: number): void {
    // Entries wait in the order their spans ended (each the same grace after its end): the first one
    // not yet due ends the scan. A Map may lose entries while it is iterated, so no copy per record.
    for (const [promptId, ending] of this._ending) {
      if (timeMillis <= ending.endsAfterMillis) break;
      this._endPrompt(promptId);
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
   * A request's scope became known. A foreground `api_request` also opens the response's batch
   * (closing the prompt's previous one: its calls have all settled before the next request is
   * sent), then releases the calls held for it.
   */
  private _classify(
    requestKey: string,
    scope: Scope,
    fromLog: { promptId: string; sessionId: string | undefined; route: GuardRoute; timeMillis: number } | undefined,
  ): void {
    const known = this._requests.get(requestKey);
    if (known === undefined) this._requests.set(requestKey, scope);
    if (fromLog !== undefined && scope === 'foreground') {
      this._engine.observePrompt(fromLog.promptId, { sessionId: fromLog.sessionId, foreground: true, route: fromLog.route });
      this._openResponse(fromLog.promptId, requestKey, fromLog.timeMillis);
    }
    if (known !== undefined || this._held.length === 0) return;
    const mine = this._held.filter((c) => c.requestKey === requestKey);
    if (mine.length === 0) return;
    this._held = this._held.filter((c) => c.requestKey !== requestKey);
    if (scope === 'foreground') for (const c of mine) this._call(c);
  }

  /**
   * Open the batch of a foreground response, once. Before it, the prompt's previous response is
   * judged incomplete when it asked for calls and none left a record: its `stop_reason` was
   * `tool_use` or, without its span, this request followed it (the CLI asks the model again only
   * after tool calls, or after a cut-off or a Stop hook's block: those reset too, which never
   * causes a stop).
   */
  private _openResponse(promptId: string, requestKey: string, timeMillis: number): void {
    if (this._opened.has(requestKey)) return;
    this._opened.add(requestKey);
    const previous = this._latest.get(promptId);
    if (previous !== undefined && !previous.recorded && (this._stopReasons.get(previous.requestKey) ?? 'tool_use') === 'tool_use') {
      this._engine.unrecordedBatch(promptId, timeMillis);
    }
    this._latest.set(promptId, { requestKey, recorded: false });
    this._engine.observePrompt(promptId, { batchAwaitingRequest: false });
    this._engine.boundary(promptId);
  }

  /** A `claude_code.tool` span: an MCP call's server-qualified name. */
  private _toolSpan(span: SpanView): void {
    const name = nonEmptyString(span.attributes[ATTR_TOOL_NAME]);
    const callId = nonEmptyString(span.attributes[ATTR_TOOL_USE_ID]);
    if (name === undefined || callId === undefined || !name.startsWith(MCP_PREFIX)) return;
    const callKey = sessionScoped(span.attributes, callId);
    const known = this._spanFacts.get(callKey);
    if (known?.qualifiedName !== undefined) return;
    this._spanFact(callKey, { qualifiedName: name }, hrTimeToMillis(span.startTime));
  }

  /** Keep what a span said about a call (by its session-scoped `tool_use_id`); a call already placed gets it at once. */
  private _spanFact(callKey: string, fact: SpanCallFacts, timeMillis: number): void {
    const known = this._spanFacts.get(callKey);
    if (known === undefined) this._spanFacts.set(callKey, { ...fact });
    else Object.assign(known, fact);
    const placed = this._placed.get(callKey);
    if (placed === undefined) return;
    this._engine.updateCall({
      promptId: placed.promptId,
      callId: placed.callId,
      responseId: placed.requestId,
      facts: fact.interrupted === true ? cancelledFacts() : { lookupName: fact.qualifiedName },
      timeMillis,
    });
  }

  private _hold(call: HeldCall): void {
    if (this._held.length >= MAX_HELD_CALLS) this._held.shift();
    this._held.push(call);
  }

  private _call(c: HeldCall): void {
    this._engine.observePrompt(c.promptId, { sessionId: c.sessionId });
    this._openResponse(c.promptId, c.requestKey, c.timeMillis);
    const latest = this._latest.get(c.promptId);
    if (latest !== undefined && latest.requestKey === c.requestKey && !latest.recorded) {
      latest.recorded = true;
      this._engine.observePrompt(c.promptId, { batchAwaitingRequest: true });
    }
    const callKey = sessionScoped(c.attrs, c.callId);
    if (this._placed.get(callKey) === undefined) this._placed.set(callKey, { promptId: c.promptId, requestId: c.requestId, callId: c.callId });
    const spanFacts = this._spanFacts.get(callKey);
    const toolName = toolIdentity(c.attrs, spanFacts);
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
    if (spanFacts?.interrupted === true) f = { ...facts(toolName, 'cancelled', 'cancelled', undefined), ...cancelledFacts() };
    else if (c.attrs[ATTR_SUCCESS] === 'true') f = facts(toolName, 'success', 'success', undefined);
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
    this._ending.delete(promptId);
    // Calls still held for this prompt never had a response: they cannot be placed in a batch.
    if (this._held.length > 0) this._held = this._held.filter((c) => c.promptId !== promptId);
    this._latest.delete(promptId);
    this._engine.endPrompt(promptId);
  }

  private _remember(traceId: string | undefined, promptId: string): void {
    if (traceId === undefined || traceId === '' || traceId === INVALID_TRACE_ID) return;
    if (this._traceToPrompt.get(traceId) !== promptId) this._traceToPrompt.set(traceId, promptId);
  }
}

/**
 * A provider id (`request_id`, `tool_use_id`) as the profile keys it: within the record's
 * `session.id` (the bare id when the record has none). Held in memory only, never emitted.
 */
function sessionScoped(attrs: Readonly<Record<string, unknown>>, id: string): string {
  const session = nonEmptyString(attrs[ATTR_SESSION_ID]);
  return session === undefined ? id : `${session}\u0000${id}`;
}

/**
 * The call's policy tool name: the log's `tool_name`, except for an MCP call, whose log name is
 * `mcp_tool`: then the `claude_code.tool` span's server-qualified name, else `mcp__<server>__<tool>`
 * from the `tool_parameters` of `OTEL_LOG_TOOL_DETAILS=1` (only those two names are read), else
 * `undefined` (unresolved: the design makes the call ineligible).
 */
function toolIdentity(attrs: Readonly<Record<string, unknown>>, spanFacts: SpanCallFacts | undefined): { name: string | undefined; mcp: boolean } {
  const logged = nonEmptyString(attrs[ATTR_TOOL_NAME]);
  const mcp = logged === MCP_TOOL_PLACEHOLDER || attrs[ATTR_TOOL_SOURCE] === 'mcp' || logged?.startsWith(MCP_PREFIX) === true;
  if (!mcp) return { name: logged, mcp };
  if (logged !== undefined && logged.startsWith(MCP_PREFIX)) return { name: logged, mcp };
  return { name: spanFacts?.qualifiedName ?? detailedMcpName(attrs[ATTR_TOOL_PARAMETERS]), mcp };
}

/** `mcp__<server>__<tool>` from a `tool_parameters` JSON value, or `undefined`. Nothing else of it is kept. */
function detailedMcpName(parameters: unknown): string | undefined {
  if (typeof parameters !== 'string' || parameters.length > MAX_TOOL_PARAMETERS_CHARS) return undefined;
  try {
    const p = JSON.parse(parameters) as { mcp_server_name?: unknown; mcp_tool_name?: unknown } | null;
    const server = nonEmptyString(p?.mcp_server_name);
    const tool = nonEmptyString(p?.mcp_tool_name);
    return server === undefined || tool === undefined ? undefined : `${MCP_PREFIX}${server}__${tool}`;
  } catch {
    return undefined;
  }
}

/** The facts of an interrupted call (the execution span's status is preferred over the log's). */
function cancelledFacts(): CallFacts {
  return { terminalStatus: 'cancelled', spanExecutionStatus: 'cancelled' };
}

function facts(
  tool: { name: string | undefined; mcp: boolean },
  terminalStatus: string | undefined,
  executionStatus: string | undefined,
  errorType: string | undefined,
): CallFacts {
  return {
    toolName: undefined,
    lookupName: tool.name,
    toolType: tool.mcp ? 'mcp' : tool.name === undefined ? undefined : 'native',
    terminalStatus,
    spanExecutionStatus: undefined,
    spanErrorType: undefined,
    logExecutionStatus: executionStatus,
    logErrorType: errorType,
    providerDuplicate: undefined,
  };
}

/**
 * The `qwen-code` wire profile: qwen-code 0.24.4 as it really emits (wire reference §1, §2, §8).
 *
 * Per call: the `qwen-code.tool` span, its `qwen-code.tool.execution` child (frozen execution
 * status and error type; absent when execution never started) and the `qwen-code.tool_call` log
 * (terminal status, prompt id, tool type), joined by call id. Prompts are known from
 * `qwen-code.prompt_id` / `prompt_id`; spans without a prompt id reach their prompt through their
 * trace (the interaction span is a root span). A batch is the calls between two interaction
 * `qwen-code.llm_request` spans of one prompt (or, with logs only, two `qwen-code.api_request`
 * logs, or a change of the headless `response_id`), closed when the next one starts or the
 * interaction span ends. Calls under a `qwen-code.subagent` span and code-mode nested calls are out
 * of scope (design non-goals) and ignored.
 */
import type { FailureEngine } from '../../engine/failure-engine.js';
import type { PromptRef } from '../../engine/failure-types.js';
import { isSessionKeyOf, sessionKeyOf } from './prompt-id.js';
import type { RepetitionEngine, SessionRef } from '../../engine/repetition-engine.js';
import type { GuardRoute } from '../../engine/call-facts.js';
import type { CallFacts } from '../../engine/call-facts.js';
import {
  ATTR_CALL_ID,
  ATTR_ERROR_TYPE,
  ATTR_EVENT_NAME,
  ATTR_EXECUTION_STATUS,
  ATTR_FUNCTION_ARGS,
  ATTR_FUNCTION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_LLM_REQUEST_CONTEXT,
  ATTR_PARENT_CALL_ID,
  ATTR_PROMPT_ID,
  ATTR_QWEN_MESSAGE_TYPE,
  ATTR_QWEN_PROMPT_ID,
  ATTR_QWEN_TURN_STATUS,
  ATTR_RESPONSE_ID,
  ATTR_SESSION_ID,
  ATTR_STATUS,
  ATTR_TOOL_CALL_ID,
  ATTR_TOOL_TYPE,
  EVENT_API_REQUEST,
  EVENT_USER_PROMPT,
  EVENT_LOOP_DETECTED,
  EVENT_TOOL_CALL,
  SPAN_INTERACTION,
  SPAN_LLM_REQUEST,
  SPAN_SUBAGENT,
  SPAN_TOOL,
  SPAN_TOOL_EXECUTION,
  ATTR_LOOP_TYPE,
  LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE,
} from './semconv.js';
import type { ToolType } from '../../core/failure/types.js';
import { BoundedMap, BoundedSet } from '../../engine/bounded.js';
import { hrTimeToMillis, nonEmptyString } from '../wire-profile.js';
import type { LogRecordView, SpanView, WireProfile } from '../wire-profile.js';

const TRACKED = 65_536;
const SESSIONS_TRACKED = 16_384;
const INVALID_TRACE_ID = '00000000000000000000000000000000';

/** Whether a record's trace id can key the trace index (absent, empty and all-zero ids cannot). */
function isIndexedTraceId(traceId: string | undefined): traceId is string {
  return traceId !== undefined && traceId !== '' && traceId !== INVALID_TRACE_ID;
}

/** The route of a qwen-code message type: `userQuery` is a headless `-p` prompt (wire reference §1.1). */
function routeOf(messageType: string): GuardRoute {
  return messageType === 'userQuery' ? 'headless' : 'acp_foreground';
}

/**
 * With logs only, whether a prompt id can be a foreground prompt. qwen-code 0.24.4 writes
 * `<session>########<turn>` for ACP and headless prompts (wire reference §1.1) and
 * `<session>#<agent>-<callId>#<k>` for subagent model requests (observed); an id with single `#`
 * separators is a subagent's or a side query's. Ids without `#` (another agent's format) are kept.
 */
function isForegroundPromptId(promptId: string): boolean {
  if (!promptId.includes('#')) return true;
  // ends with `########` and one or more digits (the regex /########\d+$/, without a regex a record)
  let i = promptId.length - 1;
  while (i >= 0 && promptId.charCodeAt(i) >= 0x30 && promptId.charCodeAt(i) <= 0x39) i--;
  if (i === promptId.length - 1 || i < 7) return false;
  for (let k = i - 7; k <= i; k++) if (promptId.charCodeAt(k) !== 0x23) return false;
  return true;
}

/**
 * What the profile knows of one trace, reached by one hash-table probe per batch: the prompt, and
 * references to the engines' state of that prompt and its session (hints that spare their own
 * probes, whose memory is cold when many prompts are open; see `FailureEngine.resumePrompt`).
 */
interface TraceRecord {
  readonly promptId: string;
  /**
   * The trace's interaction span, when known: a copy of the trace's entry in the interaction index.
   * The copy answers first; the index answers when the record has none (a new record, or one
   * forgotten and made again). A record can outlive the index's entry (a record made anew when the
   * trace's prompt changes is the youngest entry): then the trace still knows its interaction span,
   * and a tool span under another span stays out of scope (`test/qwen-code-trace-memory.test.ts`).
   */
  interactionSpanId: string | undefined;
  prompt: PromptRef | undefined;
  session: SessionRef | undefined;
  /**
   * The span-session set's generation when this trace's prompt last added its session key
   * (`-1`: never): while the generation is unchanged, the key is still in the set's young
   * generation and need not be added (probed) again.
   */
  spanSessionGeneration: number;
  /**
   * The session key ({@link sessionKeyOf}) of this trace's prompt for the `session.id` value in
   * {@link TraceRecord.keySessionId} (`undefined` in both: not computed yet). A key depends only on
   * that value and the prompt id, and a record's prompt id never changes: a model request or an
   * `api_request` log of the trace with the same value reuses it instead of deriving it again.
   */
  sessionKey: string | undefined;
  keySessionId: string | undefined;
}

function toolType(v: unknown): ToolType | undefined {
  return v === 'native' || v === 'mcp' ? v : undefined;
}

/** The qwen-code 0.24.4 profile. */
export class QwenCodeProfile implements WireProfile {
  readonly name = 'qwen-code';
  private readonly _engine: FailureEngine;
  private readonly _repetition: RepetitionEngine | undefined;
  private readonly _traceToPrompt = new BoundedMap<string, TraceRecord>(TRACKED);
  /**
   * Trace → span id of its interaction span: foreground tool spans are its direct children. Kept
   * apart from the trace records (which copy it): traces known only from their logs, however many,
   * never push an interaction span out.
   */
  private readonly _traceInteraction = new BoundedMap<string, string>(TRACKED);
  /** Sessions whose interaction llm_request spans are seen: their api_request logs are not boundaries. */
  private readonly _spanSessions = new BoundedSet<string>(SESSIONS_TRACKED);
  /** Whether any out-of-scope (subagent-internal or nested) span was seen: the sets are empty until then. */
  private _anyOutOfScope = false;
  private readonly _outOfScopeSpans = new BoundedSet<string>(TRACKED);
  private readonly _outOfScopeCalls = new BoundedSet<string>(TRACKED);

  /**
   * @param engine - the failure guard's engine
   * @param repetition - the identical-call breaker, fed from `function_args` / `gen_ai.tool.call.arguments`
   */
  constructor(engine: FailureEngine, repetition?: RepetitionEngine) {
    this._engine = engine;
    this._repetition = repetition;
    // The trace index forgets a prompt with the engine.
    engine.addListener({
      onPromptForgotten: (promptId, traceId) => {
        if (traceId !== undefined && this._traceToPrompt.get(traceId)?.promptId === promptId) {
          this._traceToPrompt.delete(traceId);
          this._traceInteraction.delete(traceId);
        }
      },
    });
  }

  onSpanStart(span: SpanView): void {
    switch (span.name) {
      case SPAN_INTERACTION:
      case SPAN_LLM_REQUEST:
        this._promptSpan(span, true);
        return;
      case SPAN_SUBAGENT:
        this._anyOutOfScope = true;
        this._outOfScopeSpans.add(span.spanContext().spanId);
        return;
      case SPAN_TOOL:
      case SPAN_TOOL_EXECUTION:
        this._callSpan(span, 'opened', hrTimeToMillis(span.startTime));
        return;
      default:
        return;
    }
  }

  onSpanEnd(span: SpanView): void {
    switch (span.name) {
      case SPAN_INTERACTION: {
        const promptId = this._promptSpan(span, false);
        if (promptId !== undefined) {
          const cancelled = span.attributes[ATTR_QWEN_TURN_STATUS] === 'cancelled';
          this._engine.endPrompt(promptId, cancelled);
        }
        return;
      }
      case SPAN_TOOL:
      case SPAN_TOOL_EXECUTION:
        this._callSpan(span, 'closed', hrTimeToMillis(span.endTime));
        return;
      default:
        return;
    }
  }

  onLogRecord(record: LogRecordView): void {
    const attrs = record.attributes;
    const name = nonEmptyString(attrs[ATTR_EVENT_NAME]) ?? record.eventName;
    if (name === EVENT_TOOL_CALL) this._toolCallLog(record);
    else if (name === EVENT_LOOP_DETECTED) {
      const promptId = nonEmptyString(attrs[ATTR_PROMPT_ID]);
      const loopType = nonEmptyString(attrs[ATTR_LOOP_TYPE]);
      if (promptId !== undefined && loopType !== undefined && loopType !== LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE) {
        this._engine.turnStopped(promptId);
      }
    } else if (name === EVENT_USER_PROMPT) {
      // The prompt's start: what an engine that requires prompt starts admits a prompt on.
      const promptId = nonEmptyString(attrs[ATTR_PROMPT_ID]);
      if (promptId !== undefined && isForegroundPromptId(promptId)) this._engine.startPrompt(promptId, hrTimeToMillis(record.hrTime));
    } else if (name === EVENT_API_REQUEST) {
      // Logs-only input: a model request is a boundary. Once a session's llm_request spans are seen,
      // they alone are (api_request logs of its subagents and side queries would split batches).
      const promptId = nonEmptyString(attrs[ATTR_PROMPT_ID]);
      if (promptId === undefined || !isForegroundPromptId(promptId)) return;
      const sessionId = nonEmptyString(attrs[ATTR_SESSION_ID]);
      const key = this._traceSessionKey(this._traceRecordOf(record.spanContext?.traceId, promptId), sessionId, promptId);
      // A key the prompt's note holds was added to the set by one of its own llm_request spans.
      if (key === this._engine.profileNote(promptId) || this._spanSessions.has(key)) return;
      this._remember(record.spanContext?.traceId, promptId);
      this._engine.observePrompt(promptId, { sessionId, foreground: true });
      this._engine.boundary(promptId);
    }
  }

  /**
   * Interaction or llm_request span: learn the prompt and its trace; the start of an interaction
   * model request is a batch boundary. Subagent and standalone requests (side queries) are not.
   */
  private _promptSpan(span: SpanView, starting: boolean): string | undefined {
    const attrs = span.attributes;
    const promptId = nonEmptyString(attrs[ATTR_QWEN_PROMPT_ID]);
    if (promptId === undefined) return undefined;
    const isInteraction = span.name === SPAN_INTERACTION;
    const context = nonEmptyString(attrs[ATTR_LLM_REQUEST_CONTEXT]);
    if (!isInteraction && context !== undefined && context !== 'interaction') return undefined;
    const traceId = span.spanContext().traceId;
    const record = this._remember(traceId, promptId);
    if (!starting) return promptId;
    // The interaction span is the interaction itself, or an interaction model request's parent.
    const interactionSpanId = isInteraction ? span.spanContext().spanId : span.parentSpanContext?.spanId;
    if (interactionSpanId !== undefined && (isInteraction || this._interactionOf(traceId, record) === undefined)) {
      this._traceInteraction.set(traceId, interactionSpanId);
      if (record !== undefined) record.interactionSpanId = interactionSpanId;
    }
    const sessionId = nonEmptyString(attrs[ATTR_SESSION_ID]);
    if (isInteraction) {
      const messageType = nonEmptyString(attrs[ATTR_QWEN_MESSAGE_TYPE]);
      const route = messageType === undefined ? undefined : routeOf(messageType);
      this._engine.observePrompt(promptId, { sessionId, messageType, route, foreground: true, traceId });
      return promptId;
    }
    const key = this._traceSessionKey(record, sessionId, promptId);
    const noted = key === this._engine.profileNote(promptId);
    // The session is a span session from now on, and stays remembered while its prompts keep making
    // requests. A key this trace's prompt added in the set's current generation is still in its
    // young generation: not probed again on every batch (its memory is cold when many prompts are open).
    const generation = this._spanSessions.generation;
    if (!noted || record === undefined || record.spanSessionGeneration !== generation) {
      this._spanSessions.add(key);
      if (record !== undefined) record.spanSessionGeneration = generation;
    }
    this._engine.observePrompt(promptId, noted ? { sessionId, traceId } : { sessionId, traceId, note: key });
    this._engine.boundary(promptId);
    return promptId;
  }

  private _callSpan(span: SpanView, edge: 'opened' | 'closed', timeMillis: number): void {
    const attrs = span.attributes;
    const callId = nonEmptyString(attrs[ATTR_TOOL_CALL_ID]) ?? nonEmptyString(attrs[ATTR_CALL_ID]);
    if (callId === undefined) return;
    const ctx = span.spanContext();
    const isTool = span.name === SPAN_TOOL;
    const parentId = span.parentSpanContext?.spanId;
    const record = this._traceToPrompt.get(ctx.traceId);
    if (
      (isTool && (attrs[ATTR_PARENT_CALL_ID] !== undefined || attrs['tool.parent_call_id'] !== undefined)) ||
      // A foreground call's tool span is a direct child of the interaction span; a tool span under
      // anything else (a subagent span, another tool) is out of scope, even if that parent is unseen.
      (isTool && parentId !== undefined && this._isNotInteractionChild(ctx.traceId, parentId, record)) ||
      (this._anyOutOfScope &&
        (this._outOfScopeCalls.has(`${ctx.traceId}/${callId}`) ||
          (parentId !== undefined && this._outOfScopeSpans.has(parentId))))
    ) {
      this._anyOutOfScope = true;
      this._outOfScopeSpans.add(ctx.spanId);
      this._outOfScopeCalls.add(`${ctx.traceId}/${callId}`);
      return;
    }
    if (record === undefined) return;
    const promptId = record.promptId;
    this._resume(record, promptId);
    const closedExecution = !isTool && edge === 'closed';
    const kind = isTool ? 'tool' : 'execution';
    const facts: CallFacts = {
      toolName: nonEmptyString(attrs[ATTR_GEN_AI_TOOL_NAME]),
      lookupName: undefined,
      toolType: undefined,
      terminalStatus: undefined,
      spanExecutionStatus: closedExecution ? nonEmptyString(attrs[ATTR_EXECUTION_STATUS]) : undefined,
      spanErrorType: closedExecution ? nonEmptyString(attrs[ATTR_ERROR_TYPE]) : undefined,
      logExecutionStatus: undefined,
      logErrorType: undefined,
      providerDuplicate: undefined,
    };
    this._engine.updateCall({
      promptId,
      callId,
      opened: edge === 'opened' ? kind : undefined,
      closed: edge === 'closed' ? kind : undefined,
      settled: false,
      responseId: undefined,
      facts,
      timeMillis,
    });
    if (isTool && edge === 'closed') {
      const args = attrs[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS];
      if (typeof args === 'string' && facts.toolName !== undefined) {
        this._observeRepetition(promptId, callId, facts.toolName, args, undefined, nonEmptyString(attrs[ATTR_SESSION_ID]), record);
      }
    }
  }

  /** Hand one call's arguments to the repetition breaker, which hashes them and drops them. */
  private _observeRepetition(
    promptId: string,
    callId: string,
    toolName: string,
    args: string,
    toolType: ToolType | undefined,
    sessionId: string | undefined,
    record: TraceRecord | undefined,
  ): void {
    const repetition = this._repetition;
    if (repetition === undefined) return;
    const messageType = this._engine.messageTypeOf(promptId);
    if (this._engine.isForcedOff(promptId, messageType)) return;
    const route: GuardRoute = messageType === undefined ? 'acp_foreground' : routeOf(messageType);
    const sessionKey = sessionKeyOf(sessionId, promptId);
    if (record?.session !== undefined && !repetition.resumeSession(record.session)) record.session = undefined;
    repetition.observeCall({
      sessionId: sessionKey,
      promptId,
      callId,
      toolName,
      args,
      argsAreJsonText: true,
      toolType,
      userPrompt: messageType === undefined || messageType === 'acp_prompt' || messageType === 'userQuery',
      route,
    });
    // The session just looked up (no probe): the trace's next batch resumes it.
    if (record !== undefined && repetition.active) record.session = repetition.sessionRef(sessionKey, promptId);
  }

  private _toolCallLog(record: LogRecordView): void {
    const attrs = record.attributes;
    const promptId = nonEmptyString(attrs[ATTR_PROMPT_ID]);
    const callId = nonEmptyString(attrs[ATTR_CALL_ID]);
    if (promptId === undefined || callId === undefined) return;
    if (attrs[ATTR_PARENT_CALL_ID] !== undefined) return;
    if (this._anyOutOfScope && record.spanContext !== undefined) {
      const ctx = record.spanContext;
      if (this._outOfScopeSpans.has(ctx.spanId) || this._outOfScopeCalls.has(`${ctx.traceId}/${callId}`)) return;
    }
    const trace = this._remember(record.spanContext?.traceId, promptId);
    const sessionId = nonEmptyString(attrs[ATTR_SESSION_ID]);
    const responseId = nonEmptyString(attrs[ATTR_RESPONSE_ID]);
    // Only headless qwen-code writes response_id on tool_call logs (wire reference §2.1).
    this._engine.observePrompt(promptId, { sessionId, inferredRoute: responseId === undefined ? undefined : 'headless' });
    const name = nonEmptyString(attrs[ATTR_FUNCTION_NAME]);
    const type = toolType(attrs[ATTR_TOOL_TYPE]);
    this._engine.updateCall({
      promptId,
      callId,
      opened: undefined,
      closed: undefined,
      settled: true,
      responseId,
      facts: {
        toolName: undefined,
        lookupName: name,
        toolType: type,
        terminalStatus: nonEmptyString(attrs[ATTR_STATUS]),
        spanExecutionStatus: undefined,
        spanErrorType: undefined,
        logExecutionStatus: nonEmptyString(attrs[ATTR_EXECUTION_STATUS]),
        logErrorType: nonEmptyString(attrs[ATTR_ERROR_TYPE]),
        providerDuplicate: undefined,
      },
      timeMillis: hrTimeToMillis(record.hrTime),
    });
    // After the failure guard has the call: nothing the breaker does can hide it from that guard.
    const args = attrs[ATTR_FUNCTION_ARGS];
    if (typeof args === 'string' && name !== undefined) {
      this._observeRepetition(promptId, callId, name, args, type, sessionId, trace);
    }
  }

  /**
   * The session key of a record ({@link sessionKeyOf}). The prompt's note holds the key of its
   * interaction requests: when this record's pair gives the same key, that string is used (its hash
   * is cached), so a model request and its `api_request` log need no key built and hashed.
   */
  private _sessionKey(sessionId: string | undefined, promptId: string): string {
    const noted = this._engine.profileNote(promptId);
    return typeof noted === 'string' && isSessionKeyOf(noted, sessionId, promptId) ? noted : sessionKeyOf(sessionId, promptId);
  }

  /**
   * The session key of a record of `trace` ({@link QwenCodeProfile._sessionKey}), kept in the trace's
   * record (see {@link TraceRecord.sessionKey}). `trace` must be a record whose prompt is `promptId`,
   * or `undefined` (then nothing is kept).
   */
  private _traceSessionKey(trace: TraceRecord | undefined, sessionId: string | undefined, promptId: string): string {
    if (trace === undefined) return this._sessionKey(sessionId, promptId);
    const kept = trace.sessionKey;
    if (kept !== undefined && trace.keySessionId === sessionId) return kept;
    const key = this._sessionKey(sessionId, promptId);
    trace.sessionKey = key;
    trace.keySessionId = sessionId;
    return key;
  }

  /** The record of a valid trace id, when it is a record of `promptId` (no record is made). */
  private _traceRecordOf(traceId: string | undefined, promptId: string): TraceRecord | undefined {
    if (!isIndexedTraceId(traceId)) return undefined;
    const record = this._traceToPrompt.get(traceId);
    return record !== undefined && record.promptId === promptId ? record : undefined;
  }

  /** The trace's interaction span id: from its record when that has it, else from the interaction index. */
  private _interactionOf(traceId: string, record: TraceRecord | undefined): string | undefined {
    return record?.interactionSpanId ?? this._traceInteraction.get(traceId);
  }

  private _isNotInteractionChild(traceId: string, parentId: string, record: TraceRecord | undefined): boolean {
    const interaction = this._interactionOf(traceId, record);
    return interaction !== undefined && interaction !== parentId;
  }

  /**
   * Record that the trace belongs to the prompt, and make the prompt the engine's next lookup
   * ({@link QwenCodeProfile._resume}). Returns the trace's record (`undefined` for no valid trace id).
   */
  private _remember(traceId: string | undefined, promptId: string): TraceRecord | undefined {
    if (!isIndexedTraceId(traceId)) return undefined;
    let record = this._traceToPrompt.get(traceId);
    if (record === undefined || record.promptId !== promptId) {
      // The interaction span belongs to the trace, whichever prompt it is now linked to.
      record = {
        promptId,
        interactionSpanId: record?.interactionSpanId,
        prompt: undefined,
        session: undefined,
        spanSessionGeneration: -1,
        sessionKey: undefined,
        keySessionId: undefined,
      };
      this._traceToPrompt.set(traceId, record);
    }
    this._resume(record, promptId);
    return record;
  }

  /**
   * Make the record's prompt the engine's last looked-up prompt, so the batch's engine calls probe
   * no hash table; learn the reference when the record has none or its prompt was forgotten. A hint
   * only: the engine answers the same without it.
   */
  private _resume(record: TraceRecord, promptId: string): void {
    if (record.prompt !== undefined && this._engine.resumePrompt(record.prompt)) return;
    record.prompt = this._engine.promptRef(promptId);
  }
}

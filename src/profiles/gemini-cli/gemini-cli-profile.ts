/**
 * The `gemini-cli` wire profile: gemini-cli 0.61.0 telemetry as it really arrives
 * (`GEMINI_TELEMETRY_ENABLED=true` with an OTLP endpoint or `GEMINI_TELEMETRY_OUTFILE`;
 * docs/gemini-cli.md).
 *
 * Logs alone suffice (scope and `service.name` `gemini-cli`, `event.name` attribute):
 * - `gemini_cli.user_prompt` (`prompt_id`, `session.id`, `interactive`): a new prompt; it ends the
 *   session's previous prompt. Route `headless` for `gemini -p` (`interactive: false`), else
 *   `acp_foreground` (the interactive foreground). A headless run writes the session id as its
 *   prompt id, so `gemini -p … --resume` gives a second prompt the same id: a `user_prompt` for an
 *   id already seen starts the prompt `<id>/<k>` (k = 2, 3, …), which the hook command numbers the
 *   same way;
 * - `gemini_cli.api_request` with `role: "main"`: one foreground model request, a batch boundary.
 *   `role: "subagent"` marks a subagent's prompt id: its calls are out of scope (design
 *   non-goals); utility roles (router, loop detector…) are side requests and ignored;
 * - `gemini_cli.tool_call` (`function_name`, `success`, `decision`, `tool_type`, `error_type`): one
 *   settled call. gemini-cli writes no call id; the record itself is the call's only terminal
 *   record, so each gets a profile-local id. Its span context is the `schedule_tool_calls` span
 *   around the batch, so every call of one model response shares it: the batch key, exact even
 *   when calls of one response run in sequential groups. Without a span context, batches fall back
 *   to the `api_request` boundaries;
 * - `loop_detected` with `count` 2 (gemini-cli's own loop detection ending the turn): the prompt's
 *   final batch is not reduced, as for qwen-code's other protections (only the first guard that
 *   stops a turn records it). 0.61.0 writes `prompt_id` empty there, so the session's current
 *   prompt is the one stopped. `count` 1 only nudges the model and the turn goes on.
 *
 * Outcomes (see {@link geminiCliOutcome}): `success: true` is a success; a failure of a closed
 * `ToolErrorType` is eligible unless it never ran (`invalid_tool_params`, `tool_not_registered`,
 * `policy_violation`, `stop_execution`: `not_started`) or is unclassified (`unknown`,
 * `unhandled_exception`); a user rejection (`decision: "reject"`) is `cancelled`. A shell command
 * that exits non-zero is a **success** in gemini-cli (its exit status is only in the `metadata`
 * attribute, written only with prompt logging on): the profile follows the producer's status.
 */
import { BoundedMap, BoundedSet } from '../../engine/bounded.js';
import type { GuardRoute } from '../../engine/call-facts.js';
import type { FailureEngine } from '../../engine/failure-engine.js';
import type { RepetitionEngine } from '../../engine/repetition-engine.js';
import type { ToolType } from '../../core/failure/types.js';
import { hrTimeToMillis, nonEmptyString } from '../wire-profile.js';
import type { LogRecordView, SpanView, WireProfile } from '../wire-profile.js';
import {
  ATTR_DECISION,
  ATTR_ERROR_TYPE,
  ATTR_EVENT_NAME,
  ATTR_FUNCTION_ARGS,
  ATTR_FUNCTION_NAME,
  ATTR_INTERACTIVE,
  ATTR_LOOP_COUNT,
  ATTR_PROMPT_ID,
  ATTR_ROLE,
  ATTR_SESSION_ID,
  ATTR_SUCCESS,
  ATTR_TOOL_TYPE,
  EVENT_API_REQUEST,
  EVENT_LOOP_DETECTED,
  EVENT_TOOL_CALL,
  EVENT_USER_PROMPT,
  LOOP_COUNT_TERMINATES,
  ROLE_MAIN,
  ROLE_SUBAGENT,
} from './semconv.js';
import { geminiCliOutcome } from './tool-error-types.js';

const SESSIONS_TRACKED = 16_384;
const PROMPTS_TRACKED = 65_536;
const INVALID_SPAN_ID = '0000000000000000';

function toolType(v: unknown): ToolType | undefined {
  return v === 'native' || v === 'mcp' ? v : undefined;
}

function routeOf(interactive: unknown): GuardRoute | undefined {
  return interactive === false ? 'headless' : interactive === true ? 'acp_foreground' : undefined;
}

/**
 * The guard's prompt id for the `generation`-th prompt gemini-cli wrote under the id `raw`: `raw`
 * for the first, `raw/<generation>` after (shared with the `gemini-cli-hook` command).
 */
export function promptKeyOf(raw: string, generation: number): string {
  return generation <= 1 ? raw : `${raw}/${generation}`;
}

/** The gemini-cli 0.61.0 profile. */
export class GeminiCliProfile implements WireProfile {
  readonly name = 'gemini-cli';
  private readonly _engine: FailureEngine;
  private readonly _repetition: RepetitionEngine | undefined;
  /** Session → its current foreground prompt. */
  private readonly _sessionPrompt = new BoundedMap<string, string>(SESSIONS_TRACKED);
  /** Prompt ids of subagents (`api_request` role `subagent`): their calls are out of scope. */
  private readonly _subagentPrompts = new BoundedSet<string>(PROMPTS_TRACKED);
  /** Raw prompt id → how many `user_prompt` records (at least 1 once any record was seen) it had. */
  private readonly _generation = new BoundedMap<string, number>(PROMPTS_TRACKED);
  /** Profile-local call ids (gemini-cli writes none). */
  private _calls = 0;

  /**
   * @param engine - the failure guard's engine
   * @param repetition - the identical-call breaker, fed from `function_args` when gemini-cli writes
   *   them (prompt logging on); hashed in memory only
   */
  constructor(engine: FailureEngine, repetition?: RepetitionEngine) {
    this._engine = engine;
    this._repetition = repetition;
  }

  onSpanStart(_span: SpanView): void {
    // no-op: the batch span's id reaches the profile on every tool_call log's span context.
  }

  onSpanEnd(_span: SpanView): void {
    // no-op (see onSpanStart).
  }

  onLogRecord(record: LogRecordView): void {
    const attrs = record.attributes;
    const name = nonEmptyString(attrs[ATTR_EVENT_NAME]) ?? record.eventName;
    switch (name) {
      case EVENT_TOOL_CALL:
        this._toolCall(record);
        return;
      case EVENT_API_REQUEST:
        this._apiRequest(record);
        return;
      case EVENT_USER_PROMPT:
        this._userPrompt(record);
        return;
      case EVENT_LOOP_DETECTED:
        this._loopDetected(record);
        return;
      case undefined:
      default:
        return;
    }
  }

  /**
   * The prompt a record of `raw` belongs to: `raw`, or `raw/<k>` from its k-th `user_prompt` on
   * (see the file comment). `starting`: the record is a `user_prompt`.
   */
  private _prompt(raw: string, starting: boolean): string {
    const seen = this._generation.get(raw);
    const generation = seen === undefined ? 1 : starting ? seen + 1 : seen;
    if (generation !== seen) this._generation.set(raw, generation);
    return promptKeyOf(raw, generation);
  }

  private _userPrompt(record: LogRecordView): void {
    const attrs = record.attributes;
    const raw = nonEmptyString(attrs[ATTR_PROMPT_ID]);
    if (raw === undefined) return;
    const promptId = this._prompt(raw, true);
    const sessionId = nonEmptyString(attrs[ATTR_SESSION_ID]);
    if (sessionId !== undefined) {
      const previous = this._sessionPrompt.get(sessionId);
      if (previous !== undefined && previous !== promptId) this._engine.endPrompt(previous);
      this._sessionPrompt.set(sessionId, promptId);
    }
    this._engine.observePrompt(promptId, { sessionId, foreground: true, route: routeOf(attrs[ATTR_INTERACTIVE]) });
    this._engine.startPrompt(promptId, hrTimeToMillis(record.hrTime));
  }

  private _apiRequest(record: LogRecordView): void {
    const attrs = record.attributes;
    const raw = nonEmptyString(attrs[ATTR_PROMPT_ID]);
    if (raw === undefined) return;
    const role = nonEmptyString(attrs[ATTR_ROLE]);
    if (role === ROLE_SUBAGENT) {
      this._subagentPrompts.add(raw);
      return;
    }
    // Releases before `role` existed wrote none: their requests were the foreground loop's.
    if (role !== undefined && role !== ROLE_MAIN) return;
    const promptId = this._prompt(raw, false);
    const sessionId = nonEmptyString(attrs[ATTR_SESSION_ID]);
    if (sessionId !== undefined && this._sessionPrompt.get(sessionId) !== promptId) this._sessionPrompt.set(sessionId, promptId);
    this._engine.observePrompt(promptId, { sessionId, foreground: true, route: routeOf(attrs[ATTR_INTERACTIVE]) });
    this._engine.boundary(promptId);
  }

  private _loopDetected(record: LogRecordView): void {
    const attrs = record.attributes;
    if (attrs[ATTR_LOOP_COUNT] !== LOOP_COUNT_TERMINATES) return;
    const sessionId = nonEmptyString(attrs[ATTR_SESSION_ID]);
    const raw = nonEmptyString(attrs[ATTR_PROMPT_ID]);
    const promptId = raw !== undefined ? this._prompt(raw, false) : sessionId === undefined ? undefined : this._sessionPrompt.get(sessionId);
    if (promptId !== undefined) this._engine.turnStopped(promptId);
  }

  private _toolCall(record: LogRecordView): void {
    const attrs = record.attributes;
    const raw = nonEmptyString(attrs[ATTR_PROMPT_ID]);
    if (raw === undefined || this._subagentPrompts.has(raw)) return;
    const promptId = this._prompt(raw, false);
    const sessionId = nonEmptyString(attrs[ATTR_SESSION_ID]);
    const functionName = nonEmptyString(attrs[ATTR_FUNCTION_NAME]);
    const type = toolType(attrs[ATTR_TOOL_TYPE]);
    const outcome = geminiCliOutcome(attrs[ATTR_SUCCESS] === true, attrs[ATTR_ERROR_TYPE], attrs[ATTR_DECISION] === 'reject');
    const spanId = record.spanContext?.spanId;
    const callId = `gemini-cli-call-${++this._calls}`;
    this._engine.observePrompt(promptId, { sessionId, route: routeOf(attrs[ATTR_INTERACTIVE]) });
    this._engine.updateCall({
      promptId,
      callId,
      settled: true,
      responseId: spanId === undefined || spanId === '' || spanId === INVALID_SPAN_ID ? undefined : spanId,
      facts: {
        toolName: undefined,
        lookupName: functionName,
        toolType: type,
        terminalStatus: outcome.terminalStatus,
        spanExecutionStatus: undefined,
        spanErrorType: undefined,
        logExecutionStatus: outcome.executionStatus,
        logErrorType: outcome.errorType,
        providerDuplicate: undefined,
      },
      timeMillis: hrTimeToMillis(record.hrTime),
    });
    // After the failure guard has the call: nothing the breaker does can hide it from that guard.
    const args = attrs[ATTR_FUNCTION_ARGS];
    if (this._repetition !== undefined && typeof args === 'string' && functionName !== undefined) {
      this._repetition.observeCall({
        sessionId,
        promptId,
        callId,
        toolName: functionName,
        args,
        argsAreJsonText: true,
        toolType: type,
        userPrompt: true,
        route: routeOf(attrs[ATTR_INTERACTIVE]) ?? 'headless',
      });
    }
  }
}

/**
 * Parsing Codex 0.169.0 command-hook inputs, with the session transcript's structured facts, into
 * the runtime's {@link HookEvent}s. Pure: no I/O, never throws.
 *
 * Observed inputs (real CLI, conformance captures in `fixtures/codex-0.169.0/`):
 * - every event: `session_id` (the thread, = `conversation.id`), `turn_id` (the turn: the guard's
 *   prompt), `transcript_path`, `cwd`, `hook_event_name`, `model`, `permission_mode`; inside a
 *   subagent also `agent_id` (such inputs are ignored: subagent loops are out of scope);
 * - `PreToolUse`: `tool_name` (`Bash` for `exec_command`, `mcp__<server>__<tool>` for MCP tools),
 *   `tool_input`, `tool_use_id` (the model's call id);
 * - `PostToolUse`: those plus `tool_response` (the output text for `Bash`: no exit status), never
 *   read. It fires only when the tool returned output: every shell command whatever its exit
 *   status, MCP calls and built-ins that succeeded; not for an MCP failure, a failing built-in, a
 *   call whose arguments do not parse or an unknown tool.
 *
 * So a call's outcome comes from the transcript ({@link turnResponses}): a completed item's
 * structured fields (`exit_<n>`, `mcp_tool_error`, `mcp_request_error`, declined → `not_started`);
 * for a tool without items, the `PostToolUse` that fired (a success); a call with only an output
 * is an untyped failure. The events, host event last:
 * - `UserPromptSubmit` → `prompt_started`;
 * - `PreToolUse` → every judgeable batch of the turn (`batch_settled` with its ordinal; the model
 *   answered every earlier response, so a call of one with no outcome in the transcript is
 *   `unknown`), then `call_started` (the breaker; `denyAfterStop`);
 * - `PostToolUse` → for a tool without items, `call_settled` (a success), then every judgeable batch;
 * - `Stop` → every batch of the turn.
 * A batch is judgeable once its response ended (`token_usage_record`) and each call has an
 * outcome, or a recorded one (the runtime defers the batch otherwise).
 */
import type { ToolType } from '../../core/failure/types.js';
import type { HookBatchCall, HookCallOutcome, HookEvent } from '../hook-event.js';
import { hasCompletionItem, turnResponses } from './transcript.js';
import type { CodexTranscriptCall, CodexTranscriptResponse } from './transcript.js';

/** The hook events the adapter reads; the settings must register all of them (`--print-settings`). */
export const CODEX_HOOK_EVENTS = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'] as const;

/** What {@link loadCodexHookInput} hands the parser: the stdin JSON value and the transcript text it names. */
export interface CodexLoadedInput {
  readonly input: unknown;
  /** The transcript's text (or its tail holding the turn); `undefined` when none could be read. */
  readonly transcript: string | undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const SUCCESS: HookCallOutcome = Object.freeze({ kind: 'success' });
const NOT_STARTED: HookCallOutcome = Object.freeze({ kind: 'not_started' });
const UNTYPED: HookCallOutcome = Object.freeze({ kind: 'untyped_failure' });
const UNKNOWN: HookCallOutcome = Object.freeze({ kind: 'unknown' });

function toolTypeOf(toolName: string): ToolType {
  return toolName.startsWith('mcp__') ? 'mcp' : 'native';
}

/**
 * A call's outcome as far as the transcript and this hook show it; `undefined`: none yet.
 *
 * @param c - the call
 * @param postCallId - the call of this `PostToolUse`, if it is one
 * @param over - the model already answered the call's response: it settled, however the transcript shows it
 */
function outcomeOf(c: CodexTranscriptCall, postCallId: string | undefined, over: boolean): HookCallOutcome | undefined {
  const item = c.item;
  if (item !== undefined) {
    switch (item.kind) {
      case 'success':
        return SUCCESS;
      case 'not_started':
        return NOT_STARTED;
      case 'failure':
        return { kind: 'failure', errorType: item.failureClass };
      case 'untyped':
        return UNTYPED;
    }
  }
  // PostToolUse fires only for a call that returned output: for a tool without items, a success;
  // for the shell or MCP without an item (a sandbox refusal Codex wrote no item for), untyped.
  if (c.callId === postCallId) return hasCompletionItem(c.toolName) ? UNTYPED : SUCCESS;
  // Only an output, no PostToolUse recorded (a recorded success wins): untyped.
  if (c.output) return UNTYPED;
  return over ? UNKNOWN : undefined;
}

function batchEvents(
  responses: readonly CodexTranscriptResponse[],
  common: { sessionId: string; promptId: string; hookEventName: string },
  postCallId: string | undefined,
  allOver: boolean,
): HookEvent[] {
  const events: HookEvent[] = [];
  for (const [i, r] of responses.entries()) {
    const over = allOver || i < responses.length - 1;
    if (!r.ended && !over) break;
    const calls: HookBatchCall[] = r.calls.map((c) => ({ callId: c.callId, toolName: c.toolName, toolType: toolTypeOf(c.toolName), outcome: outcomeOf(c, postCallId, over) }));
    events.push({ type: 'batch_settled', ...common, calls, complete: !r.overflow, ordinal: i + 1 });
  }
  return events;
}

/**
 * Parses one hook input with the transcript it names.
 *
 * @param loaded - the stdin JSON value and the transcript text ({@link CodexLoadedInput}), or the
 *   bare stdin value (then no transcript)
 * @returns the events (host event last), or `undefined` for an event the guard ignores, a
 *   subagent's input, or an input missing a field it needs (`session_id`, `turn_id`, and on tool
 *   events `tool_name`, `tool_use_id`)
 */
export function parseCodexHookInput(loaded: unknown): readonly HookEvent[] | undefined {
  const wrapped = isObject(loaded) && 'input' in loaded && 'transcript' in loaded;
  const value = wrapped ? loaded.input : loaded;
  const text = wrapped && typeof loaded.transcript === 'string' ? loaded.transcript : undefined;
  if (!isObject(value)) return undefined;
  const sessionId = str(value.session_id);
  const promptId = str(value.turn_id);
  if (sessionId === undefined || promptId === undefined) return undefined;
  if (value.agent_id !== undefined && value.agent_id !== null) return undefined;
  const event = value.hook_event_name;
  if (typeof event !== 'string') return undefined;
  const common = { sessionId, promptId, hookEventName: event };
  if (event === 'UserPromptSubmit') return [{ type: 'prompt_started', ...common }];
  const responses = text === undefined ? [] : (turnResponses(text, promptId) ?? []);
  if (event === 'Stop') return batchEvents(responses, common, undefined, true);
  if (event !== 'PreToolUse' && event !== 'PostToolUse') return undefined;
  const hookToolName = str(value.tool_name);
  const callId = str(value.tool_use_id);
  if (hookToolName === undefined || callId === undefined) return undefined;
  // The transcript's name is the policy name (`exec_command` where the hook says `Bash`).
  const toolName = responses.flatMap((r) => r.calls).find((c) => c.callId === callId)?.toolName ?? hookToolName;
  if (event === 'PreToolUse') {
    // The model sent this call: it answered every response before the one holding it.
    const current = responses.findIndex((r) => r.calls.some((c) => c.callId === callId));
    const earlier = current < 0 ? responses : responses.slice(0, current);
    return [...batchEvents(earlier, common, undefined, true), { type: 'call_started', ...common, callId, toolName, toolInput: value.tool_input }];
  }
  const settled: HookEvent[] = hasCompletionItem(toolName) ? [] : [{ type: 'call_settled', ...common, callId, toolName, toolType: toolTypeOf(toolName), outcome: SUCCESS }];
  const batches = batchEvents(responses, common, callId, false);
  return [...settled, ...batches];
}

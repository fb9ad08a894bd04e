/**
 * Parsing gemini-cli 0.61.0 command-hook inputs (the JSON object on the hook's stdin) into the
 * runtime's {@link HookEvent}s. Pure: no I/O, never throws.
 *
 * Observed inputs (real CLI, `conformance/gemini-cli/`, docs/gemini-cli.md):
 * - every event: `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`; **no
 *   prompt id and no call id** on any event;
 * - `BeforeAgent`: `prompt` (the user's text; never read);
 * - `BeforeTool`: `tool_name`, `tool_input`, `mcp_context` for MCP tools (`mcp_<server>_<tool>`);
 *   it fires for every call that passed validation, before any call of its group runs and before
 *   the policy check; not for a call with invalid arguments or an unknown tool;
 * - `AfterTool`: those plus `tool_response: { llmContent, returnDisplay, error?: { message, type } }`;
 *   `error.type` is a closed `ToolErrorType`; a shell command that exits non-zero has no `error`;
 * - `AfterTool` fires only for a call that ran: not for one denied by the policy or by a
 *   `BeforeTool` hook, nor for one the user rejected;
 * - `BeforeModel`: `llm_request` (never read; its messages hold text only, no calls or results):
 *   the turn's next model request, so every call of the previous batch settled (its calls are read
 *   from the transcript, `transcript.ts`);
 * - `AfterModel` (not registered): its `llm_response` holds the response's text only, never its
 *   function calls;
 * - `AfterAgent`: `prompt`, `prompt_response` (never read): the turn ended.
 *
 * What is kept: the session id, the tool name and the error type. The tool input is passed on only
 * as an opaque value for the identical-call breaker to hash; responses and error texts are never
 * read. A call is named by a digest of its whole hook input (the input is hashed in memory, never
 * kept): gemini-cli gives calls no id on hooks.
 */
import { createHash } from 'node:crypto';
import type { HookCallOutcome, HookEvent } from '../hook-event.js';
import { geminiCliOutcome } from '../../profiles/gemini-cli/tool-error-types.js';

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The hook events the adapter reads; the settings must register all of them (`--print-settings`). */
export const GEMINI_CLI_HOOK_EVENTS = ['BeforeAgent', 'BeforeTool', 'AfterTool', 'BeforeModel', 'AfterAgent'] as const;

const SUCCESS: HookCallOutcome = Object.freeze({ kind: 'success' });
const NOT_STARTED: HookCallOutcome = Object.freeze({ kind: 'not_started' });
const CANCELLED: HookCallOutcome = Object.freeze({ kind: 'cancelled' });
const UNKNOWN: HookCallOutcome = Object.freeze({ kind: 'unknown' });

/** The runtime's outcome of an `AfterTool` `tool_response` (the telemetry profile's reading). */
export function geminiCliHookOutcome(toolResponse: unknown): HookCallOutcome {
  const error = isObject(toolResponse) ? toolResponse.error : undefined;
  if (error === undefined || error === null) return SUCCESS;
  const o = geminiCliOutcome(false, isObject(error) ? error.type : undefined, false);
  switch (o.executionStatus) {
    case 'error':
      return { kind: 'failure', errorType: o.errorType };
    case 'not_started':
      return NOT_STARTED;
    case 'cancelled':
      return CANCELLED;
    case 'unknown':
    case 'success':
      return UNKNOWN;
  }
}

/** A call's name on the hook path: a digest of its whole hook input (event, time, tool, input, response). */
function callIdOf(value: Record<string, unknown>): string {
  return `gemini-hook-${createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 24)}`;
}

/**
 * Parses one hook input.
 *
 * @param value - the parsed stdin JSON
 * @returns the event, or `undefined` for an event the guard ignores or an input missing a field it
 *   needs (`session_id`, `tool_name`)
 */
export function parseGeminiCliHookInput(value: unknown): HookEvent | undefined {
  if (!isObject(value)) return undefined;
  const sessionId = str(value.session_id);
  if (sessionId === undefined) return undefined;
  switch (value.hook_event_name) {
    case 'BeforeAgent':
      return { type: 'prompt_started', sessionId, promptId: undefined };
    case 'BeforeTool': {
      const toolName = str(value.tool_name);
      if (toolName === undefined) return undefined;
      return { type: 'call_started', sessionId, promptId: undefined, callId: callIdOf(value), toolName, toolInput: value.tool_input };
    }
    case 'AfterTool': {
      const toolName = str(value.tool_name);
      if (toolName === undefined) return undefined;
      const toolType = isObject(value.mcp_context) ? 'mcp' : 'native';
      return { type: 'call_settled', sessionId, promptId: undefined, callId: callIdOf(value), toolName, toolType, outcome: geminiCliHookOutcome(value.tool_response) };
    }
    case 'BeforeModel':
    case 'AfterAgent':
      return { type: 'batch_settled', sessionId, promptId: undefined, calls: [], complete: true };
    default:
      return undefined;
  }
}

/**
 * Parsing Claude Code 2.1.328 command-hook inputs (the JSON object on the hook's stdin) into the
 * narrow facts the guard needs. Pure: no I/O, never throws.
 *
 * Observed inputs (real CLI, conformance captures in `fixtures/claude-code-2.1.328/`):
 * - every event: `session_id`, `transcript_path`, `cwd`, `hook_event_name`; tool events and
 *   PostToolBatch also `prompt_id` (the OTel `prompt.id`) and `permission_mode`;
 * - `PreToolUse`: `tool_name`, `tool_input`, `tool_use_id`;
 * - `PostToolUseFailure`: those plus `error` (text), `is_interrupt`, `duration_ms`; it fires only
 *   for calls that ran and failed (not for input-validation errors or unknown tools);
 * - `PostToolBatch`: `tool_calls: [{ tool_name, tool_input, tool_use_id, tool_response }]`, once
 *   per model batch, after every call of the batch settled; no success flag, no batch id;
 * - inside a subagent (the `Agent` tool) every tool event adds `agent_id` and `agent_type`.
 *
 * What is kept: ids, the tool name, the failure class, and whether a batch entry never started.
 * The tool input is returned only as an opaque value for the identical-call breaker to hash; the
 * error text and tool responses are never returned (a response is only tested for the fixed
 * `<tool_use_error>` prefix Claude Code gives calls rejected before execution).
 */
import { failureClassOfHookFailure } from './failure-class.js';
import type { ClaudeCodeFailure } from './failure-class.js';

/** Fields every parsed hook input has. */
export interface ClaudeCodeHookCommon {
  /** `session_id`. */
  readonly sessionId: string;
  /** `prompt_id`; `undefined` on events that have none (SessionStart). */
  readonly promptId: string | undefined;
  /** True when the input carries `agent_id`: the call runs inside a subagent (out of scope). */
  readonly subagent: boolean;
}

/** `PreToolUse`: a call is about to run. */
export interface ClaudeCodePreToolUse extends ClaudeCodeHookCommon {
  readonly event: 'PreToolUse';
  readonly toolName: string;
  readonly toolUseId: string;
  /** The call's input, for hashing only; never store or emit it. */
  readonly toolInput: unknown;
}

/** `PostToolUseFailure`: a call ran and failed. */
export interface ClaudeCodePostToolUseFailure extends ClaudeCodeHookCommon {
  readonly event: 'PostToolUseFailure';
  readonly toolName: string;
  readonly toolUseId: string;
  readonly failure: ClaudeCodeFailure;
}

/** One call of a `PostToolBatch`. */
export interface ClaudeCodeBatchCall {
  readonly toolName: string;
  readonly toolUseId: string;
  /** The call was rejected before execution (input validation, unknown tool): `not_started`. */
  readonly notStarted: boolean;
}

/** `PostToolBatch`: every call of one model batch has settled. */
export interface ClaudeCodePostToolBatch extends ClaudeCodeHookCommon {
  readonly event: 'PostToolBatch';
  readonly calls: readonly ClaudeCodeBatchCall[];
  /** False when an entry was malformed or the batch had more than {@link MAX_BATCH_CALLS} calls: the receipt is `incomplete`. */
  readonly complete: boolean;
}

/** `UserPromptSubmit`: a new user prompt (a fresh guard). */
export interface ClaudeCodeUserPromptSubmit extends ClaudeCodeHookCommon {
  readonly event: 'UserPromptSubmit';
}

/** A parsed hook input the guard acts on. */
export type ClaudeCodeHookInput =
  | ClaudeCodePreToolUse
  | ClaudeCodePostToolUseFailure
  | ClaudeCodePostToolBatch
  | ClaudeCodeUserPromptSubmit;

/** The prefix Claude Code puts on the result of a call rejected before execution. */
export const TOOL_USE_ERROR_PREFIX = '<tool_use_error>';

/** Upper bound on the calls read from one PostToolBatch input. */
export const MAX_BATCH_CALLS = 1024;

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses one hook input.
 *
 * @param value - the parsed stdin JSON
 * @returns the facts, or `undefined` for an event the guard ignores or an input missing a
 *   required field (`session_id`, `prompt_id` on tool events, `tool_name`, `tool_use_id`,
 *   `tool_calls`); a PostToolBatch with a malformed entry is returned with `complete: false`
 */
export function parseClaudeCodeHookInput(value: unknown): ClaudeCodeHookInput | undefined {
  if (!isObject(value)) return undefined;
  const sessionId = str(value.session_id);
  if (sessionId === undefined) return undefined;
  const promptId = str(value.prompt_id);
  const subagent = value.agent_id !== undefined && value.agent_id !== null;
  const common = { sessionId, promptId, subagent };
  switch (value.hook_event_name) {
    case 'UserPromptSubmit':
      return { event: 'UserPromptSubmit', ...common };
    case 'PreToolUse': {
      const toolName = str(value.tool_name);
      const toolUseId = str(value.tool_use_id);
      if (toolName === undefined || toolUseId === undefined || promptId === undefined) return undefined;
      return { event: 'PreToolUse', ...common, toolName, toolUseId, toolInput: value.tool_input };
    }
    case 'PostToolUseFailure': {
      const toolName = str(value.tool_name);
      const toolUseId = str(value.tool_use_id);
      if (toolName === undefined || toolUseId === undefined || promptId === undefined) return undefined;
      const failure = failureClassOfHookFailure(toolName, value.is_interrupt === true);
      return { event: 'PostToolUseFailure', ...common, toolName, toolUseId, failure };
    }
    case 'PostToolBatch': {
      if (promptId === undefined || !Array.isArray(value.tool_calls)) return undefined;
      const calls: ClaudeCodeBatchCall[] = [];
      let complete = value.tool_calls.length <= MAX_BATCH_CALLS;
      for (const c of value.tool_calls.slice(0, MAX_BATCH_CALLS)) {
        const toolName = isObject(c) ? str(c.tool_name) : undefined;
        const toolUseId = isObject(c) ? str(c.tool_use_id) : undefined;
        if (!isObject(c) || toolName === undefined || toolUseId === undefined) {
          complete = false;
          continue;
        }
        const response = c.tool_response;
        const notStarted = typeof response === 'string' && response.startsWith(TOOL_USE_ERROR_PREFIX);
        calls.push({ toolName, toolUseId, notStarted });
      }
      return { event: 'PostToolBatch', ...common, calls, complete };
    }
    default:
      return undefined;
  }
}

/**
 * Parsing Claude Code 2.1.328 command-hook inputs (the JSON object on the hook's stdin) into the
 * runtime's {@link HookEvent}s. Pure: no I/O, never throws.
 *
 * Observed inputs (real CLI, conformance captures in `fixtures/claude-code-2.1.328/`):
 * - every event: `session_id`, `transcript_path`, `cwd`, `hook_event_name`; tool events and
 *   PostToolBatch also `prompt_id` (the OTel `prompt.id`) and `permission_mode`;
 * - `PreToolUse`: `tool_name`, `tool_input`, `tool_use_id`;
 * - `PostToolUse`: those plus `tool_response`, `duration_ms`; it fires only for calls that ran and
 *   succeeded;
 * - `PostToolUseFailure`: those plus `error` (text), `is_interrupt`, `duration_ms`; it fires only
 *   for calls that ran and failed (not for input-validation errors or unknown tools);
 * - `PostToolBatch`: `tool_calls: [{ tool_name, tool_input, tool_use_id, tool_response }]`, once
 *   per model batch, after every call of the batch settled; no success flag, no batch id;
 * - a call refused before it ran fires neither PostToolUse nor PostToolUseFailure, whatever refused
 *   it. Observed forms (2.1.328, in default, dontAsk and bypassPermissions modes): a Bash deny rule
 *   ("Permission to use Bash with command … has been denied."), a WebFetch domain rule ("WebFetch
 *   denied access to domain:…"), a Read/Edit/Write path rule ("<tool_use_error>File is in a
 *   directory that is denied by your permission settings."), a call needing approval in `-p`
 *   ("… needs approval …", "Claude requested permissions to …, but you haven't granted it yet."),
 *   another hook's PreToolUse deny ("PreToolUse:Bash hook error: …"), input validation errors and
 *   unknown tools ("<tool_use_error>…"). Their texts differ and more exist in the CLI, so a batch
 *   entry is read by what did *not* fire: with neither a success nor a failure record it never ran
 *   (`not_started`, a reset), never a success;
 * - inside a subagent (the `Agent` tool) every tool event adds `agent_id` and `agent_type`: such
 *   inputs are ignored (subagent-internal loops are out of scope, as in the telemetry profile).
 *
 * What is kept: ids, the tool name and the failure class. The tool input is passed on only as an
 * opaque value for the identical-call breaker to hash; error texts and tool responses are never
 * read.
 */
import type { ToolType } from '../../core/failure/types.js';
import { failureClassOfHookFailure } from '../../profiles/claude-code/failure-class.js';
import type { HookBatchCall, HookCallOutcome, HookEvent } from '../hook-event.js';
import { MAX_BATCH_CALLS } from '../hook-session.js';

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `mcp` for an MCP tool (`mcp__<server>__<tool>`), else `native`. */
export function claudeCodeToolType(toolName: string): ToolType {
  return toolName.startsWith('mcp__') ? 'mcp' : 'native';
}

const SUCCESS: HookCallOutcome = Object.freeze({ kind: 'success' });
const NOT_STARTED: HookCallOutcome = Object.freeze({ kind: 'not_started' });
const CANCELLED: HookCallOutcome = Object.freeze({ kind: 'cancelled' });
const UNKNOWN: HookCallOutcome = Object.freeze({ kind: 'unknown' });

/** The hook events the adapter reads; the settings must register all of them (`--print-settings`). */
export const CLAUDE_CODE_HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch'] as const;

/**
 * Parses one hook input.
 *
 * @param value - the parsed stdin JSON
 * @returns the event, or `undefined` for an event the guard ignores, a subagent's input, or an
 *   input missing a required field (`session_id`, `prompt_id` on tool events, `tool_name`,
 *   `tool_use_id`, `tool_calls`); a PostToolBatch with a malformed entry or more than
 *   {@link MAX_BATCH_CALLS} entries is returned with `complete: false`
 */
export function parseClaudeCodeHookInput(value: unknown): HookEvent | undefined {
  if (!isObject(value)) return undefined;
  const sessionId = str(value.session_id);
  if (sessionId === undefined) return undefined;
  if (value.agent_id !== undefined && value.agent_id !== null) return undefined;
  const promptId = str(value.prompt_id);
  switch (value.hook_event_name) {
    case 'UserPromptSubmit':
      return { type: 'prompt_started', sessionId, promptId };
    case 'PreToolUse': {
      const toolName = str(value.tool_name);
      const callId = str(value.tool_use_id);
      if (toolName === undefined || callId === undefined || promptId === undefined) return undefined;
      return { type: 'call_started', sessionId, promptId, callId, toolName, toolInput: value.tool_input };
    }
    case 'PostToolUse': {
      const toolName = str(value.tool_name);
      const callId = str(value.tool_use_id);
      if (toolName === undefined || callId === undefined || promptId === undefined) return undefined;
      return { type: 'call_settled', sessionId, promptId, callId, toolName, toolType: claudeCodeToolType(toolName), outcome: SUCCESS };
    }
    case 'PostToolUseFailure': {
      const toolName = str(value.tool_name);
      const callId = str(value.tool_use_id);
      if (toolName === undefined || callId === undefined || promptId === undefined) return undefined;
      const failure = failureClassOfHookFailure(toolName, value.is_interrupt === true);
      const outcome: HookCallOutcome = failure.kind === 'failure' ? { kind: 'failure', errorType: failure.failureClass } : failure.kind === 'cancelled' ? CANCELLED : UNKNOWN;
      return { type: 'call_settled', sessionId, promptId, callId, toolName, toolType: claudeCodeToolType(toolName), outcome };
    }
    case 'PostToolBatch': {
      if (promptId === undefined || !Array.isArray(value.tool_calls)) return undefined;
      const calls: HookBatchCall[] = [];
      let complete = value.tool_calls.length <= MAX_BATCH_CALLS;
      for (const c of value.tool_calls.slice(0, MAX_BATCH_CALLS)) {
        const toolName = isObject(c) ? str(c.tool_name) : undefined;
        const callId = isObject(c) ? str(c.tool_use_id) : undefined;
        if (!isObject(c) || toolName === undefined || callId === undefined) {
          complete = false;
          continue;
        }
        // Unrecorded (no PostToolUse, no PostToolUseFailure): refused before it ran.
        calls.push({ callId, toolName, toolType: claudeCodeToolType(toolName), outcome: NOT_STARTED });
      }
      return { type: 'batch_settled', sessionId, promptId, calls, complete };
    }
    default:
      return undefined;
  }
}

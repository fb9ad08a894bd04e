/**
 * What the `codex-hook` adapter reads from a Codex 0.169.0 session transcript (the rollout JSONL
 * file every hook input names as `transcript_path`): the model responses of one turn, their calls,
 * and each call's structured outcome. Pure: no I/O, never throws.
 *
 * Codex's hook inputs carry no failure signal (docs/codex.md): `PostToolUse` fires only when a tool
 * returned output, with the output text alone as `tool_response`, and never for an MCP error or a
 * rejected call. The transcript holds what the hooks lack, as structured fields (verified on the
 * real CLI, `fixtures/codex-0.169.0/*.transcript.jsonl`):
 * - `event_msg` `task_started` (`turn_id`): a turn begins;
 * - `response_item` `function_call` / `custom_tool_call` (`call_id`, `name`, `namespace`): a call
 *   of the model response being read;
 * - `token_usage_record`: that response completed (its calls are all listed);
 * - `event_msg` `item_completed` with `item` `CommandExecution` (`id` = call id, `exit_code`,
 *   `status`) or `McpToolCall` (`status`, `result.isError`, `error`): the call's outcome, written
 *   before its `PostToolUse`;
 * - `response_item` `function_call_output` / `custom_tool_call_output` (`call_id`): the call's
 *   output went into the conversation.
 * Only those fields are read. Each line is parsed in memory and dropped; arguments, outputs,
 * messages and every other text are never kept or emitted. Lines that cannot hold one of these
 * facts are skipped before parsing.
 */
import { codexPolicyToolName } from '../../profiles/codex/failure-class.js';
import type { CodexFailureClass } from '../../profiles/codex/failure-class.js';

/** A call's outcome from its completed item. */
export type CodexItemOutcome =
  | { readonly kind: 'success' }
  | { readonly kind: 'failure'; readonly failureClass: CodexFailureClass }
  /** Declined before it ran (an approval refused). */
  | { readonly kind: 'not_started' }
  /** An item with neither a known status nor an exit status (e.g. a command still running when Codex yielded). */
  | { readonly kind: 'untyped' };

/** One call of a model response, as the transcript shows it so far. */
export interface CodexTranscriptCall {
  readonly callId: string;
  /** The policy tool name: `exec_command`, `mcp__<server>__<tool>`, … */
  readonly toolName: string;
  /** From its completed item; `undefined` when no item was written. */
  readonly item: CodexItemOutcome | undefined;
  /** Its output is in the conversation. */
  readonly output: boolean;
}

/** One model response of the turn. */
export interface CodexTranscriptResponse {
  readonly calls: readonly CodexTranscriptCall[];
  /** Its `token_usage_record` is in: every call of the response is listed. */
  readonly ended: boolean;
  /** More calls than {@link MAX_RESPONSE_CALLS}: the list is cut. */
  readonly overflow: boolean;
}

/** Calls kept per response; more make the response's batch incomplete. */
export const MAX_RESPONSE_CALLS = 1024;

/**
 * Tools whose every completion Codex 0.169.0 records as a transcript item (`CommandExecution` for
 * the shell, `McpToolCall` for MCP tools): for them a `PostToolUse` proves nothing by itself
 * (0.169.0 fires it for a sandbox-refused command whose item it never writes).
 *
 * @param toolName - the policy tool name
 */
export function hasCompletionItem(toolName: string): boolean {
  return toolName === 'exec_command' || toolName.startsWith('mcp__');
}

/**
 * The class of a shell command's exit status: `exit_<n>` for 1…255, else `undefined`.
 *
 * @param exitCode - `CommandExecution.exit_code` as the transcript holds it
 */
export function exitClass(exitCode: unknown): CodexFailureClass | undefined {
  return typeof exitCode === 'number' && Number.isInteger(exitCode) && exitCode >= 1 && exitCode <= 255 ? (`exit_${exitCode}` as CodexFailureClass) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The outcome of a completed item, or `undefined` for an item of another kind. */
function itemOutcome(item: Record<string, unknown>): CodexItemOutcome | undefined {
  const status = item.status;
  if (item.type === 'CommandExecution') {
    if (status === 'declined') return { kind: 'not_started' };
    if (item.exit_code === 0) return { kind: 'success' };
    const c = exitClass(item.exit_code);
    return c === undefined ? { kind: 'untyped' } : { kind: 'failure', failureClass: c };
  }
  if (item.type === 'McpToolCall') {
    if (status === 'completed') return { kind: 'success' };
    if (status === 'declined') return { kind: 'not_started' };
    if (status === 'failed') {
      if (isObject(item.result) && item.result.isError === true) return { kind: 'failure', failureClass: 'mcp_tool_error' };
      if (item.error !== undefined && item.error !== null) return { kind: 'failure', failureClass: 'mcp_request_error' };
    }
    return { kind: 'untyped' };
  }
  return undefined;
}

/** Fact kinds a line may hold; a line containing none of these strings is not parsed. */
const MARKERS = ['"task_started"', '"function_call', '"custom_tool_call', '"token_usage_record"', '"item_completed"'];

type Fact =
  | { readonly type: 'turn'; readonly turnId: string }
  | { readonly type: 'call'; readonly callId: string; readonly toolName: string }
  | { readonly type: 'end' }
  | { readonly type: 'item'; readonly callId: string; readonly outcome: CodexItemOutcome }
  | { readonly type: 'output'; readonly callId: string };

function factOf(line: string): Fact | undefined {
  if (!MARKERS.some((m) => line.includes(m))) return undefined;
  let d: unknown;
  try {
    d = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(d)) return undefined;
  if (d.type === 'token_usage_record') return { type: 'end' };
  const p = d.payload;
  if (!isObject(p)) return undefined;
  if (d.type === 'response_item') {
    const callId = str(p.call_id);
    if (callId === undefined) return undefined;
    if (p.type === 'function_call' || p.type === 'custom_tool_call') {
      const name = str(p.name);
      return name === undefined ? undefined : { type: 'call', callId, toolName: codexPolicyToolName(name, str(p.namespace)) };
    }
    if (p.type === 'function_call_output' || p.type === 'custom_tool_call_output') return { type: 'output', callId };
    return undefined;
  }
  if (d.type !== 'event_msg') return undefined;
  if (p.type === 'task_started') {
    const turnId = str(p.turn_id);
    return turnId === undefined ? undefined : { type: 'turn', turnId };
  }
  if (p.type !== 'item_completed' || !isObject(p.item)) return undefined;
  const callId = str(p.item.id);
  const outcome = itemOutcome(p.item);
  return callId === undefined || outcome === undefined ? undefined : { type: 'item', callId, outcome };
}

interface MutableCall {
  callId: string;
  toolName: string;
  item: CodexItemOutcome | undefined;
  output: boolean;
}

/**
 * The model responses of turn `turnId` that carry calls, in order, from transcript text (whole
 * lines; a cut first line is skipped), or `undefined` when the text does not hold the turn's start.
 *
 * @param text - the transcript, or its tail
 * @param turnId - the hook input's `turn_id`
 */
export function turnResponses(text: string, turnId: string): CodexTranscriptResponse[] | undefined {
  let inTurn = false;
  let seen = false;
  const responses: { calls: MutableCall[]; ended: boolean; overflow: boolean }[] = [];
  const byId = new Map<string, MutableCall>();
  for (const line of text.split('\n')) {
    const f = factOf(line);
    if (f === undefined) continue;
    if (f.type === 'turn') {
      inTurn = f.turnId === turnId;
      if (inTurn) {
        // The turn's start (again, if the transcript repeats it): read from here.
        seen = true;
        responses.length = 0;
        byId.clear();
      }
      continue;
    }
    if (!inTurn) continue;
    const last = responses.at(-1);
    switch (f.type) {
      case 'call': {
        if (byId.has(f.callId)) break;
        const call: MutableCall = { callId: f.callId, toolName: f.toolName, item: undefined, output: false };
        if (last === undefined || last.ended) responses.push({ calls: [call], ended: false, overflow: false });
        else if (last.calls.length >= MAX_RESPONSE_CALLS) last.overflow = true;
        else last.calls.push(call);
        byId.set(f.callId, call);
        break;
      }
      case 'end':
        if (last !== undefined) last.ended = true;
        break;
      case 'item': {
        const c = byId.get(f.callId);
        if (c !== undefined) c.item = f.outcome;
        break;
      }
      case 'output': {
        const c = byId.get(f.callId);
        if (c !== undefined) c.output = true;
        break;
      }
    }
  }
  return seen ? responses : undefined;
}

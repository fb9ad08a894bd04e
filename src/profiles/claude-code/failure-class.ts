/**
 * The closed vocabulary of Claude Code failure classes: the `executionErrorType` half of the
 * `claude-code` failure key `(tool name, failure class)`.
 *
 * Claude Code 2.1.328 reports a failed call's error as `error_type` on the
 * `claude_code.tool_result` log and as `error_class` on the `claude_code.tool.execution` span. The
 * value is the thrown error's class name (`ShellError`, `TelemetrySafeError`, `AbortError`, …), an
 * `Error:<code>` form for errors with a system code, a lower-case class a tool chose, `Error` or
 * `UnknownError`. Those strings are open-ended; the guard maps them onto this fixed set so that
 * nothing but these literals can ever reach its key, state or telemetry. Hook inputs carry no
 * error class at all, so the hook path derives the class from the tool (see
 * {@link failureClassOfHookFailure}).
 */

/** The failure classes. Anything not recognised is `other`, never the raw string. */
export const CLAUDE_CODE_FAILURE_CLASSES = [
  'shell_error',
  'tool_error',
  'mcp_error',
  'system_error',
  'timeout',
  'other',
] as const;

/**
 * One failure class:
 * - `shell_error`: a shell command ended non-zero, timed out or was killed (`ShellError`);
 * - `tool_error`: a built-in tool refused or failed with its own telemetry-safe message
 *   (`TelemetrySafeError`, e.g. Read of a missing file);
 * - `mcp_error`: an MCP server or protocol failure (`Mcp…Error`, `ProtocolError`);
 * - `system_error`: an error carrying a system code (`Error:ENOENT`, …);
 * - `timeout`: `TimeoutError`;
 * - `other`: any other class.
 */
export type ClaudeCodeFailureClass = (typeof CLAUDE_CODE_FAILURE_CLASSES)[number];

/** How a failed call counts: an eligible execution failure of a class, a cancellation, or unclassified. */
export type ClaudeCodeFailure =
  | { readonly kind: 'failure'; readonly failureClass: ClaudeCodeFailureClass }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'unknown' };

/** Tools that run a shell command (their failures are `shell_error` on the hook path). */
export const CLAUDE_CODE_SHELL_TOOLS: ReadonlySet<string> = new Set(['Bash', 'PowerShell']);

const CANCELLED: ClaudeCodeFailure = Object.freeze({ kind: 'cancelled' });
const UNKNOWN: ClaudeCodeFailure = Object.freeze({ kind: 'unknown' });
const BY_CLASS = new Map<ClaudeCodeFailureClass, ClaudeCodeFailure>(
  CLAUDE_CODE_FAILURE_CLASSES.map((c) => [c, Object.freeze({ kind: 'failure', failureClass: c })]),
);

function failure(c: ClaudeCodeFailureClass): ClaudeCodeFailure {
  return BY_CLASS.get(c) as ClaudeCodeFailure;
}

/**
 * Classifies a telemetry `error_type` / `error_class` value of a failed call.
 *
 * - missing, empty, `UnknownError` → `unknown` (ineligible: resets and disables enforcement, as
 *   the design treats an unclassified execution error);
 * - `AbortError` and any `…AbortError` (user interrupt, cancelled turn) → `cancelled`;
 * - otherwise one of {@link CLAUDE_CODE_FAILURE_CLASSES}.
 *
 * @param errorType - the attribute value as sent; never stored
 */
export function failureClassOfErrorType(errorType: unknown): ClaudeCodeFailure {
  if (typeof errorType !== 'string' || errorType === '' || errorType === 'UnknownError') return UNKNOWN;
  if (errorType.endsWith('AbortError')) return CANCELLED;
  if (errorType === 'ShellError') return failure('shell_error');
  if (errorType.startsWith('TelemetrySafeError')) return failure('tool_error');
  if (errorType.startsWith('Mcp') || errorType === 'ProtocolError') return failure('mcp_error');
  if (errorType === 'TimeoutError') return failure('timeout');
  if (errorType.startsWith('Error:')) return failure('system_error');
  return failure('other');
}

/**
 * Classifies a `PostToolUseFailure` hook input. The input has the error *text* but no class; the
 * text is never read. An interrupt (`is_interrupt: true`) is `cancelled`; a shell tool's failure is
 * `shell_error`, an MCP tool's (`mcp__…`) `mcp_error`, any other tool's `tool_error` — the classes
 * the telemetry gives these tools' failures in 2.1.328 (`ShellError`, `Mcp…Error`,
 * `TelemetrySafeError`).
 *
 * @param toolName - the hook input's `tool_name`
 * @param isInterrupt - the hook input's `is_interrupt`
 */
export function failureClassOfHookFailure(toolName: string, isInterrupt: boolean): ClaudeCodeFailure {
  if (isInterrupt) return CANCELLED;
  if (CLAUDE_CODE_SHELL_TOOLS.has(toolName)) return failure('shell_error');
  if (toolName.startsWith('mcp__')) return failure('mcp_error');
  return failure('tool_error');
}

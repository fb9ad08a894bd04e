/**
 * The closed vocabulary of Codex CLI failure classes: the `executionErrorType` half of the `codex`
 * failure key `(tool name, failure class)`.
 *
 * Codex 0.169.0 writes no error type on `codex.tool_result`: only `success` (`"true"`/`"false"`)
 * and free text (`output`), which the guard never reads. The classes below come only from
 * structured signals the real CLI emits (verified on 0.169.0, see `docs/codex.md`):
 * - `sandbox_denied`, `sandbox_timeout`, `sandbox_signal`: a `codex.sandbox_outcome` log for the
 *   call with `outcome` `denied`, `timed_out` or `signal` (the call's own `codex.tool_result` still
 *   says `success: "true"`). Codex 0.169.0 emits it for only some denials (its own check races the
 *   command's output): an unreported denial reads as a success;
 * - `exit_<n>` (1…255): a shell command's exit status, read by `codex-hook` from the transcript's
 *   `CommandExecution.exit_code` (the telemetry has no exit status);
 * - `mcp_tool_error`: the `mcp.tools.call` span's `error.type` is `tool_result` (the MCP server
 *   answered `isError: true`);
 * - `mcp_timeout`: that span's `codex.mcp.error.code` is `request_timeout` (the MCP server's
 *   `tool_timeout_sec` passed);
 * - `mcp_protocol_error`: `codex.mcp.error.code` `protocol_error` (a JSON-RPC error answer);
 * - `mcp_request_error`: any other `error.type` `mcp_request` code.
 *
 * A failed call with none of these (`success: "false"` alone: an unknown tool, arguments that do
 * not parse, a missing image, an MCP failure whose span was not exported) is **untyped**: it
 * carries no class, so by the design it is ineligible (`unknown`): it resets the candidate and
 * the prompt cannot be enforced. Untyped failures are counted and shown, never keyed on text.
 */

/** `exit_1` … `exit_255`: a shell command's exit status (the hook path reads it from the transcript). */
const EXIT_CLASSES = Array.from({ length: 255 }, (_, i) => `exit_${i + 1}` as const);

/** The failure classes. */
export const CODEX_FAILURE_CLASSES = [
  'sandbox_denied',
  'sandbox_timeout',
  'sandbox_signal',
  'mcp_tool_error',
  'mcp_timeout',
  'mcp_protocol_error',
  'mcp_request_error',
  ...EXIT_CLASSES,
] as const;

/** One failure class (see {@link CODEX_FAILURE_CLASSES}). */
export type CodexFailureClass = (typeof CODEX_FAILURE_CLASSES)[number];

/**
 * The class of a `codex.sandbox_outcome` log's `outcome` (`denied`, `timed_out`, `signal` in
 * 0.169.0), or `undefined` for any other value.
 *
 * @param outcome - the attribute value
 */
export function sandboxFailureClass(outcome: unknown): CodexFailureClass | undefined {
  if (outcome === 'denied') return 'sandbox_denied';
  if (outcome === 'timed_out') return 'sandbox_timeout';
  if (outcome === 'signal') return 'sandbox_signal';
  return undefined;
}

/**
 * The class of a failed MCP call from its `mcp.tools.call` span, or `undefined` when the span
 * records no failure.
 *
 * @param errorType - the span's `error.type` (`tool_result` or `mcp_request` in 0.169.0)
 * @param errorCode - the span's `codex.mcp.error.code` (`request_timeout`, `protocol_error`, …)
 */
export function mcpFailureClass(errorType: unknown, errorCode: unknown): CodexFailureClass | undefined {
  if (errorType === 'tool_result') return 'mcp_tool_error';
  if (errorType !== 'mcp_request') return undefined;
  if (errorCode === 'request_timeout') return 'mcp_timeout';
  if (errorCode === 'protocol_error') return 'mcp_protocol_error';
  return 'mcp_request_error';
}

/**
 * The policy tool name of a Codex call: the plain name for built-in tools (namespace `functions`
 * or none), `<namespace>__<name>` for namespaced tools (MCP tools: `mcp__<server>__<tool>`, the
 * name Codex's hooks carry as `tool_name`).
 *
 * @param name - `tool_name` as Codex wrote it
 * @param namespace - `tool_namespace`, when present
 */
export function codexPolicyToolName(name: string, namespace: string | undefined): string {
  return namespace === undefined || namespace === '' || namespace === 'functions' ? name : `${namespace}__${name}`;
}

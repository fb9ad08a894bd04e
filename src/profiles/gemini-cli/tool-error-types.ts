/**
 * gemini-cli's closed vocabulary of execution error types: every `ToolErrorType` string value of
 * gemini-cli 0.61.0 (`packages/core/src/tools/tool-error.ts`, read from the published bundle), and
 * how the `gemini-cli` profile and the `gemini-cli-hook` command count each one. Any other value is
 * emitted as `other`.
 */

/** Every `ToolErrorType` value of gemini-cli 0.61.0 (38 values, lower case, as written on the wire). */
export const GEMINI_CLI_TOOL_ERROR_TYPES: readonly string[] = Object.freeze([
  // general
  'invalid_tool_params',
  'unknown',
  'unhandled_exception',
  'tool_not_registered',
  'execution_failed',
  'policy_violation',
  'stop_execution',
  'sandbox_expansion_required',
  // file system
  'file_not_found',
  'file_write_failure',
  'read_content_failure',
  'attempt_to_create_existing_file',
  'file_too_large',
  'permission_denied',
  'no_space_left',
  'target_is_directory',
  'path_not_in_workspace',
  'search_path_not_found',
  'search_path_not_a_directory',
  // edit
  'edit_preparation_failure',
  'edit_no_occurrence_found',
  'edit_expected_occurrence_mismatch',
  'edit_no_change',
  'edit_no_change_llm_judgement',
  // tools
  'glob_execution_error',
  'grep_execution_error',
  'ls_execution_error',
  'path_is_not_a_directory',
  'mcp_tool_error',
  'mcp_resource_not_found',
  'memory_tool_execution_error',
  'read_many_files_search_error',
  'shell_execute_error',
  'discovered_tool_execution_error',
  // web
  'web_fetch_no_url_in_prompt',
  'web_fetch_fallback_failed',
  'web_fetch_processing_error',
  'web_search_failed',
]);

/**
 * Error types gemini-cli 0.61.0 writes for a call that never ran (its scheduler sets them before
 * execution): arguments that failed validation (`invalid_tool_params`, also a `BeforeTool` hook's
 * rejected rewrite), an unknown tool (`tool_not_registered`), a policy or `BeforeTool` hook denial
 * (`policy_violation`), a `BeforeTool` hook's `continue: false` (`stop_execution`). The design
 * counts them as `not_started`: a reset, never an eligible failure.
 */
export const GEMINI_CLI_NOT_STARTED_ERROR_TYPES: ReadonlySet<string> = new Set([
  'invalid_tool_params',
  'tool_not_registered',
  'policy_violation',
  'stop_execution',
]);

/**
 * Error types that say nothing trusted about the execution: `unknown` (the design: ineligible) and
 * `unhandled_exception` (thrown before or during execution; the wire cannot tell which).
 */
export const GEMINI_CLI_UNCLASSIFIED_ERROR_TYPES: ReadonlySet<string> = new Set(['unknown', 'unhandled_exception']);

/** How one settled gemini-cli call counts, in the design's two-axis terms. */
export type GeminiCliOutcome =
  | { readonly terminalStatus: 'success'; readonly executionStatus: 'success'; readonly errorType: undefined }
  | { readonly terminalStatus: 'error'; readonly executionStatus: 'error'; readonly errorType: string }
  | { readonly terminalStatus: 'error'; readonly executionStatus: 'not_started' | 'unknown'; readonly errorType: undefined }
  | { readonly terminalStatus: 'cancelled'; readonly executionStatus: 'cancelled'; readonly errorType: undefined };

const SUCCESS: GeminiCliOutcome = Object.freeze({ terminalStatus: 'success', executionStatus: 'success', errorType: undefined });
const NOT_STARTED: GeminiCliOutcome = Object.freeze({ terminalStatus: 'error', executionStatus: 'not_started', errorType: undefined });
const UNKNOWN: GeminiCliOutcome = Object.freeze({ terminalStatus: 'error', executionStatus: 'unknown', errorType: undefined });
const CANCELLED: GeminiCliOutcome = Object.freeze({ terminalStatus: 'cancelled', executionStatus: 'cancelled', errorType: undefined });
const KNOWN = new Set(GEMINI_CLI_TOOL_ERROR_TYPES);

/**
 * The outcome of a call from what gemini-cli wrote about it.
 *
 * @param success - `success` of the `gemini_cli.tool_call` log (`true` only for status `success`);
 *   for a hook, whether `tool_response.error` is absent
 * @param errorType - `error_type` of the log / `tool_response.error.type` of the hook input
 * @param rejected - the user rejected the call (`decision: "reject"`): gemini-cli ends it `cancelled`
 * @returns a failure of a closed type, a success, `not_started`, `cancelled`, or `unknown` (a value
 *   outside the 0.61 vocabulary, or none on a failed call)
 */
export function geminiCliOutcome(success: boolean, errorType: unknown, rejected: boolean): GeminiCliOutcome {
  if (success) return SUCCESS;
  if (rejected) return CANCELLED;
  if (typeof errorType !== 'string' || !KNOWN.has(errorType)) return UNKNOWN;
  if (GEMINI_CLI_NOT_STARTED_ERROR_TYPES.has(errorType)) return NOT_STARTED;
  if (GEMINI_CLI_UNCLASSIFIED_ERROR_TYPES.has(errorType)) return UNKNOWN;
  return { terminalStatus: 'error', executionStatus: 'error', errorType };
}

/**
 * qwen-code's closed vocabulary of execution error types: every ToolErrorType string value (wire
 * reference §3, `packages/core/src/tools/tool-error.ts` at 0.24.4, plus the two values of older
 * releases). Any other value is emitted as `other`.
 */
export const QWEN_CODE_TOOL_ERROR_TYPES: readonly string[] = Object.freeze([
  // general
  'invalid_tool_params',
  'unknown',
  'unhandled_exception',
  'tool_not_registered',
  'execution_failed',
  'execution_timeout',
  'execution_denied',
  // LSP
  'lsp_diagnostics_unavailable',
  'lsp_diagnostics_pending',
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
  'edit_requires_prior_read',
  'file_changed_since_read',
  'prior_read_verification_failed',
  'target_not_regular_file',
  // notebook
  'notebook_edit_failure',
  'notebook_invalid_json',
  'notebook_cell_not_found',
  // tools
  'glob_execution_error',
  'grep_execution_error',
  'ls_execution_error',
  'path_is_not_a_directory',
  'mcp_tool_error',
  'memory_tool_execution_error',
  'shell_execute_error',
  'discovered_tool_execution_error',
  // web
  'web_fetch_no_url_in_prompt',
  'web_fetch_fallback_failed',
  'web_fetch_processing_error',
  'web_search_rate_limited',
  'web_search_backend_failed',
  'web_search_no_results',
  'web_search_no_search_performed',
  // misc
  'output_truncated',
  'task_stop_not_found',
  'task_stop_not_running',
  'task_stop_not_cancellable',
  'task_stop_internal_error',
  'send_message_not_found',
  'send_message_not_running',
  // older releases
  'web_search_failed',
  'write_content_loss_warning',
]);

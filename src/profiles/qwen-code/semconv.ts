/**
 * Names qwen-code 0.24.4 writes on the wire, read by the `qwen-code` profile. Source: the wire
 * reference (`shared/reference/qwen-code-0.24.4-wire.md`, section numbers below).
 */

// ---- qwen-code spans (wire reference §1) ----

/** Span per prompt; start attribute `qwen-code.prompt_id`. §1.1 */
export const SPAN_INTERACTION = 'qwen-code.interaction';
/** Span per model call; start attribute `qwen-code.prompt_id`; a new one starts the next batch. §1.4 */
export const SPAN_LLM_REQUEST = 'qwen-code.llm_request';
/** Span per tool call. §1.2 */
export const SPAN_TOOL = 'qwen-code.tool';
/** Child of {@link SPAN_TOOL}, only when `execute()` was entered; frozen execution outcome. §1.3 */
export const SPAN_TOOL_EXECUTION = 'qwen-code.tool.execution';
/** Subagent span; tool calls under it are subagent-internal and out of scope (design non-goals). */
export const SPAN_SUBAGENT = 'qwen-code.subagent';

// ---- qwen-code attributes ----

/** Prompt id on interaction and llm_request spans. §1.1, §1.4 */
export const ATTR_QWEN_PROMPT_ID = 'qwen-code.prompt_id';
/** `acp_prompt` | `cron` | `userQuery`. §1.1 */
export const ATTR_QWEN_MESSAGE_TYPE = 'qwen-code.message_type';
/** `ok` | `cancelled` | `error` on the interaction span's end. §1.1 */
export const ATTR_QWEN_TURN_STATUS = 'qwen-code.turn_status';
/** `interaction` | `subagent` | `standalone`. §1.4 */
export const ATTR_LLM_REQUEST_CONTEXT = 'llm_request.context';
/** Session id on spans and most logs. */
export const ATTR_SESSION_ID = 'session.id';
/** Call id on tool and execution spans. §1.2, §1.3 */
export const ATTR_TOOL_CALL_ID = 'tool.call_id';
/** Legacy call id alias on tool spans; call id on `tool_call` logs. §1.2, §2.1 */
export const ATTR_CALL_ID = 'call_id';
/** Canonical (policy) tool name on tool and execution spans. §1.2 */
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** `tool.failure_kind` on tool spans. §1 */
export const ATTR_TOOL_FAILURE_KIND = 'tool.failure_kind';
/** Execution status on execution spans and `tool_call` logs. §1.3, §2.1 */
export const ATTR_EXECUTION_STATUS = 'execution_status';
/** ToolErrorType on execution spans and `tool_call` logs. §1.3, §2.1 */
export const ATTR_ERROR_TYPE = 'error_type';
/** Terminal status on `tool_call` logs. §2.1 */
export const ATTR_STATUS = 'status';
/** `native` | `mcp`. §2.1 */
export const ATTR_TOOL_TYPE = 'tool_type';
/** Prompt id on logs. §2.1 */
export const ATTR_PROMPT_ID = 'prompt_id';
/** Model response id on headless `tool_call` logs: a batch key. §2.1 */
export const ATTR_RESPONSE_ID = 'response_id';
/** Lookup name on `tool_call` logs. §2.1 */
export const ATTR_FUNCTION_NAME = 'function_name';
/** Present on code-mode nested calls only. §2.1 */
export const ATTR_PARENT_CALL_ID = 'parent_call_id';
/** Log event name attribute. §2 */
export const ATTR_EVENT_NAME = 'event.name';
/** Log event timestamp attribute (ISO 8601). §2.1 */
export const ATTR_EVENT_TIMESTAMP = 'event.timestamp';

// ---- qwen-code log events ----

/** One per settled tool call. §2.1 */
export const EVENT_TOOL_CALL = 'qwen-code.tool_call';
/** One per model request; a logs-only batch boundary. §8 */
export const EVENT_API_REQUEST = 'qwen-code.api_request';
/** The prompt's start, with its `prompt_id`; what `serve --new-prompts-only` admits a prompt on. §2.3 */
export const EVENT_USER_PROMPT = 'qwen-code.user_prompt';
/** Loop event; its name is un-prefixed on the wire. §2.3 */
export const EVENT_LOOP_DETECTED = 'loop_detected';

/** Tool arguments on `tool_call` logs (JSON text). Read and hashed in memory only. §2.1 */
export const ATTR_FUNCTION_ARGS = 'function_args';
/** Tool arguments on tool spans when the host records sensitive span attributes. §1.2 */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
/** Loop type attribute on qwen-code's own `loop_detected` events. §2.3 */
export const ATTR_LOOP_TYPE = 'loop_type';
/** Loop type of the in-tree guard's stop. §4 */
export const LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE = 'repeated_tool_execution_failure';

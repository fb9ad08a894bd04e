/**
 * Names this package reads from qwen-code 0.24.4 telemetry and names it writes.
 *
 * Every value is copied from the wire reference (`qwen-code-0.24.4-wire.md`) or the design; the
 * section is given on each constant. Names the guard writes are built from a namespace whose
 * default, {@link DEFAULT_NAMESPACE}, is `qwen-code`, so the guard's output uses the in-tree names.
 */

/** Default namespace of emitted names. Source: wire reference §2.2. */
export const DEFAULT_NAMESPACE = 'qwen-code';

/** Instrumentation scope of everything the guard emits; the log processor ignores this scope. */
export const INSTRUMENTATION_SCOPE_NAME = 'repeated-tool-failure-guard';

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
/** Loop event; its name is un-prefixed on the wire. §2.3 */
export const EVENT_LOOP_DETECTED = 'loop_detected';

// ---- emitted by the guard (in-tree names, wire reference §2.2, §2.3, §2.4) ----

/** Event name suffix of the guard diagnostic log: `<ns>.repeated_tool_failure_guard`. */
export const GUARD_EVENT_SUFFIX = 'repeated_tool_failure_guard';
/** Metric name suffix of the guard counter: `<ns>.repeated_tool_failure_guard.count`. */
export const GUARD_METRIC_SUFFIX = 'repeated_tool_failure_guard.count';
/** Metric name suffix of the eviction counter: `<ns>.repeated_tool_failure_guard.evicted_prompts`. */
export const GUARD_EVICTION_METRIC_SUFFIX = 'repeated_tool_failure_guard.evicted_prompts';
/** Event name suffix of the repetition breaker's diagnostic log: `<ns>.tool_call_repetition_guard`. */
export const REPETITION_EVENT_SUFFIX = 'tool_call_repetition_guard';
/** Metric name suffix of the repetition breaker's counter: `<ns>.tool_call_repetition_guard.count`. */
export const REPETITION_METRIC_SUFFIX = 'tool_call_repetition_guard.count';
/** Loop type of the repetition breaker's abort (in-tree LoopType). §4 */
export const LOOP_TYPE_CONSECUTIVE_IDENTICAL_TOOL_CALLS = 'consecutive_identical_tool_calls';
/** Run-length bucket label of the repetition breaker (`0|1-2|3-4|5-7|8+`). */
export const ATTR_RUN_LENGTH_BUCKET = 'run_length_bucket';
/** Tool arguments on `tool_call` logs (JSON text). Read and hashed in memory only. §2.1 */
export const ATTR_FUNCTION_ARGS = 'function_args';
/** Tool arguments on tool spans when the host records sensitive span attributes. §1.2 */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
/** Loop type of the guard's stop. §4 */
export const LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE = 'repeated_tool_execution_failure';
/**
 * Marker attribute suffix on the guard's loop event (`<ns>.rum.exclude = true`): the design keeps
 * the stop's loop event out of QwenLogger/RUM; a collector filters on it.
 */
export const RUM_EXCLUDE_SUFFIX = 'rum.exclude';

/** Guard log / metric attribute keys. §2.2. `route`: `acp_foreground` (or `headless`). */
export const ATTR_ROUTE = 'route';
/** `shadow | warn | enforce`. §2.2 */
export const ATTR_MODE = 'mode';
/** Phase before the transition: `idle | tracking | warned | latched`. §2.2 */
export const ATTR_PHASE_BEFORE = 'phase_before';
/** Phase after the transition. §2.2 */
export const ATTR_PHASE_AFTER = 'phase_after';
/** `reset | tracked | would_warn | warned | would_stop | stopped` (repetition breaker: `would_abort | aborted` too). §2.2 */
export const ATTR_DECISION = 'decision';
/** `0 | 1-2 | 3-4 | 5-7 | 8+`. §2.2 */
export const ATTR_FAILURE_COUNT_BUCKET = 'failure_count_bucket';
/** `0 | 1 | 2 | 3+`. §2.2 */
export const ATTR_BATCH_COUNT_BUCKET = 'batch_count_bucket';
/** Prompt-local candidate ordinal; diagnostic log only, never a metric label. §2.2 */
export const ATTR_CANDIDATE_ORDINAL = 'candidate_ordinal';
/** On resets only. §2.2 */
export const ATTR_RESET_REASON = 'reset_reason';
/** `error` on non-reset decisions. §2.2 */
export const ATTR_TERMINAL_STATUS = 'terminal_status';
/** The frozen ToolErrorType; diagnostic log only, never a metric label. §2.2 */
export const ATTR_EXECUTION_ERROR_TYPE = 'execution_error_type';
/** Loop type on `loop_detected`. §2.3 */
export const ATTR_LOOP_TYPE = 'loop_type';

/**
 * Route label. `acp_foreground` is the in-tree value (interactive ACP foreground prompt);
 * `headless` marks a qwen-code `-p` prompt (`qwen-code.message_type = userQuery`), where qwen-code
 * itself has no guard.
 */
export type GuardRoute = 'acp_foreground' | 'headless';

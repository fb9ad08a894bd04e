/**
 * Names this package reads from qwen-code 0.24.4 telemetry and names it writes.
 *
 * Every value is copied from the wire reference (`qwen-code-0.24.4-wire.md`) or the design; the
 * section is given on each constant. Names the guard writes are built from a namespace whose
 * default, {@link DEFAULT_NAMESPACE}, is `qwen-code`, so the guard's output uses the in-tree names.
 */

/** Default namespace of emitted names. Source: wire reference §2.2. */
export const DEFAULT_NAMESPACE = 'qwen-code';


/** Log event name attribute on the guard's logs (as qwen-code writes it). */
export const ATTR_EVENT_NAME = 'event.name';
/** Session id on the guard's logs. */
export const ATTR_SESSION_ID = 'session.id';
/** Loop event name; un-prefixed on the wire (wire reference §2.3). */
export const EVENT_LOOP_DETECTED = 'loop_detected';
/** Log event timestamp attribute (ISO 8601), as on qwen-code's own events. */
export const ATTR_EVENT_TIMESTAMP = 'event.timestamp';
/** Prompt id on the guard's logs (in-tree key). §2.2 */
export const ATTR_PROMPT_ID = 'prompt_id';
/** Execution status of the candidate on the guard's diagnostic log. §2.2 */
export const ATTR_EXECUTION_STATUS = 'execution_status';
/** `native` | `mcp` on the guard's diagnostic log. §2.2 */
export const ATTR_TOOL_TYPE = 'tool_type';

// ---- emitted by the guard (in-tree names, wire reference §2.2, §2.3, §2.4) ----

/** Event name suffix of the guard diagnostic log: `<ns>.repeated_tool_failure_guard`. */
export const GUARD_EVENT_SUFFIX = 'repeated_tool_failure_guard';
/** Metric name suffix of the guard counter: `<ns>.repeated_tool_failure_guard.count`. */
export const GUARD_METRIC_SUFFIX = 'repeated_tool_failure_guard.count';
/** Metric name suffix of the eviction counter: `<ns>.repeated_tool_failure_guard.evicted_prompts`. */
export const GUARD_EVICTION_METRIC_SUFFIX = 'repeated_tool_failure_guard.evicted_prompts';
/** Metric name suffix of the unjudged-batch counter (attribute `reason`): `<ns>.repeated_tool_failure_guard.unjudged_batches`. */
export const GUARD_UNJUDGED_METRIC_SUFFIX = 'repeated_tool_failure_guard.unjudged_batches';
/**
 * Metric name suffix of the counter of received records no profile reads (their producer is no
 * supported agent): `<ns>.repeated_tool_failure_guard.unread_records`, attribute `signal`
 * (`traces` or `logs`). Producer names are not a closed vocabulary: `serve` names them on stderr.
 */
export const GUARD_UNREAD_METRIC_SUFFIX = 'repeated_tool_failure_guard.unread_records';
/** Metric name suffix of the counter of received spans that end before they start: `<ns>.repeated_tool_failure_guard.clock_anomalies`. */
export const GUARD_CLOCK_ANOMALY_METRIC_SUFFIX = 'repeated_tool_failure_guard.clock_anomalies';
/**
 * Metric name suffix of the gauge of the evicted-prompt filter's estimated false-positive rate (the
 * share of new prompts it would refuse as evicted): `<ns>.repeated_tool_failure_guard.evicted_filter.false_positive_rate`.
 */
export const GUARD_EVICTED_FILTER_RATE_METRIC_SUFFIX = 'repeated_tool_failure_guard.evicted_filter.false_positive_rate';
/** Event name suffix of the repetition breaker's diagnostic log: `<ns>.tool_call_repetition_guard`. */
export const REPETITION_EVENT_SUFFIX = 'tool_call_repetition_guard';
/** Metric name suffix of the repetition breaker's counter: `<ns>.tool_call_repetition_guard.count`. */
export const REPETITION_METRIC_SUFFIX = 'tool_call_repetition_guard.count';
/** Loop type of the repetition breaker's abort (in-tree LoopType). §4 */
export const LOOP_TYPE_CONSECUTIVE_IDENTICAL_TOOL_CALLS = 'consecutive_identical_tool_calls';
/** Run-length bucket label of the repetition breaker (`0|1-2|3-4|5-7|8+`). */
export const ATTR_RUN_LENGTH_BUCKET = 'run_length_bucket';
/** Loop type of the guard's stop. §4 */
export const LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE = 'repeated_tool_execution_failure';
/**
 * Marker attribute suffix on the guard's loop event (`<ns>.rum.exclude = true`): the design keeps
 * the stop's loop event out of QwenLogger/RUM; a collector filters on it.
 */
export const RUM_EXCLUDE_SUFFIX = 'rum.exclude';

/** Guard log / metric attribute keys. §2.2. `route`: `acp_foreground` (or `headless`; `agent_run` for the `genai` profile). */
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

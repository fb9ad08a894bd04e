/**
 * gemini-cli 0.61.0 wire names the `gemini-cli` profile reads (read from the published bundle,
 * `packages/core/src/telemetry/{types,constants}.ts`, and checked on captured telemetry).
 */

/** `service.name` of gemini-cli's Resource, and the instrumentation scope of its logs and spans. */
export const GEMINI_CLI_SERVICE_NAME = 'gemini-cli';
/** Prefix of gemini-cli's own log event names (auto-detection). */
export const GEMINI_CLI_EVENT_PREFIX = 'gemini_cli.';

/** One user prompt: `prompt_id`, `session.id`. */
export const EVENT_USER_PROMPT = 'gemini_cli.user_prompt';
/** One model request: `prompt_id`, `role` (`main` for the foreground loop). */
export const EVENT_API_REQUEST = 'gemini_cli.api_request';
/**
 * One settled call: `function_name`, `success` (boolean), `decision`, `prompt_id`, `tool_type`,
 * and on failure `error_type` / `error.type`. No call id; its span context is the batch span.
 */
export const EVENT_TOOL_CALL = 'gemini_cli.tool_call';
/**
 * gemini-cli's own loop detection (no `gemini_cli.` prefix): `loop_type`, `count` (1: recovery
 * attempted, the turn goes on; 2: the turn ends), `prompt_id` (written empty by 0.61.0).
 */
export const EVENT_LOOP_DETECTED = 'loop_detected';

/** The span around one scheduled batch of calls: every `tool_call` log of the batch carries its id. */
export const SPAN_SCHEDULE_TOOL_CALLS = 'schedule_tool_calls';

export const ATTR_EVENT_NAME = 'event.name';
export const ATTR_PROMPT_ID = 'prompt_id';
export const ATTR_SESSION_ID = 'session.id';
export const ATTR_INTERACTIVE = 'interactive';
export const ATTR_ROLE = 'role';
export const ATTR_FUNCTION_NAME = 'function_name';
export const ATTR_FUNCTION_ARGS = 'function_args';
export const ATTR_SUCCESS = 'success';
export const ATTR_DECISION = 'decision';
export const ATTR_TOOL_TYPE = 'tool_type';
export const ATTR_ERROR_TYPE = 'error_type';
export const ATTR_LOOP_COUNT = 'count';

/** `role` of the foreground loop's model requests. */
export const ROLE_MAIN = 'main';
/** `role` of a subagent's model requests: their calls are out of scope (design non-goals). */
export const ROLE_SUBAGENT = 'subagent';
/** `count` of a `loop_detected` event that ends the turn. */
export const LOOP_COUNT_TERMINATES = 2;

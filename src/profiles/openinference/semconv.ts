/**
 * Names the `openinference` profile reads: Arize's OpenInference semantic conventions, as the
 * Python package `openinference-semantic-conventions` 0.1.42 declares them
 * (`openinference.semconv.trace`: `SpanAttributes`, `OpenInferenceSpanKindValues`). That package
 * has no JavaScript counterpart checked here, so each name is a literal with its source.
 * Errors are OpenTelemetry's own: span status and `exception` events (`exception.type`), read
 * through the `genai` profile's names.
 *
 * @experimental The conventions are not versioned as stable.
 */

/** `openinference.span.kind` (`SpanAttributes.OPENINFERENCE_SPAN_KIND`): what a span stands for. */
export const ATTR_OPENINFERENCE_SPAN_KIND = 'openinference.span.kind';

/** Span kind `AGENT` (`OpenInferenceSpanKindValues.AGENT`): an agent run or an agent inside one. */
export const OPENINFERENCE_SPAN_KIND_AGENT = 'AGENT';
/** Span kind `LLM` (`OpenInferenceSpanKindValues.LLM`): one model call (the batch boundary). */
export const OPENINFERENCE_SPAN_KIND_LLM = 'LLM';
/** Span kind `TOOL` (`OpenInferenceSpanKindValues.TOOL`): one tool call. */
export const OPENINFERENCE_SPAN_KIND_TOOL = 'TOOL';

/** `tool.name` (`SpanAttributes.TOOL_NAME`): the name the model calls the tool by (the policy tool name). */
export const ATTR_TOOL_NAME = 'tool.name';
/** `tool.id` (`SpanAttributes.TOOL_ID`): the id of the tool call whose result the span is (`tool_call.id`). */
export const ATTR_TOOL_ID = 'tool.id';
/**
 * `input.value` (`SpanAttributes.INPUT_VALUE`): on a TOOL span, the call's input (JSON text in the
 * instrumentations read here). Hashed by the identical-call breaker and dropped; never kept.
 */
export const ATTR_INPUT_VALUE = 'input.value';
/** `session.id` (`SpanAttributes.SESSION_ID`): the session (set with `using_session`). */
export const ATTR_SESSION_ID = 'session.id';

/**
 * Prefix of the instrumentation scope names of Arize's instrumentations (Python:
 * `openinference.instrumentation.smolagents`, `openinference.instrumentation.openai_agents`, ...;
 * the scope is the instrumentation's module name).
 */
export const OPENINFERENCE_SCOPE_PREFIX = 'openinference.instrumentation.';

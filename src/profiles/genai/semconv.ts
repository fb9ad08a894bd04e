/**
 * Names the `genai` profile reads: the OpenTelemetry GenAI semantic conventions (status
 * Development), both the latest experimental generation (`OTEL_SEMCONV_STABILITY_OPT_IN=
 * gen_ai_latest_experimental`) and the v1.36-and-earlier names frameworks still emit by default.
 *
 * Attribute keys and operation names are those of `@opentelemetry/semantic-conventions` (its
 * incubating entry point for the GenAI ones, its stable entry point for `error.type` and the
 * exception event) wherever that package defines them, checked against it at compile time; the
 * rest are defined here and marked `@experimental`, with their source.
 */
import type * as stable from '@opentelemetry/semantic-conventions';
import type * as incubating from '@opentelemetry/semantic-conventions/incubating';

// Each constant below is checked at compile time (`satisfies`) against the constant of the same
// name in `@opentelemetry/semantic-conventions` (types only: the incubating entry is about 1 MB of
// JavaScript, and the package's own advice is not to depend on it at run time).

/** `error.type` (stable). */
export const ATTR_ERROR_TYPE = 'error.type' satisfies typeof stable.ATTR_ERROR_TYPE;
/** `service.name` (stable, a Resource attribute): which agent produced a run. */
export const ATTR_SERVICE_NAME = 'service.name' satisfies typeof stable.ATTR_SERVICE_NAME;
/** `exception.type` on the `exception` span event (stable). */
export const ATTR_EXCEPTION_TYPE = 'exception.type' satisfies typeof stable.ATTR_EXCEPTION_TYPE;
/** `_OTHER`: the `error.type` value of an unclassified error (stable). */
export const ERROR_TYPE_VALUE_OTHER = '_OTHER' satisfies typeof stable.ERROR_TYPE_VALUE_OTHER;
/** `gen_ai.conversation.id` (incubating): the session of a run. */
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id' satisfies typeof incubating.ATTR_GEN_AI_CONVERSATION_ID;
/** `gen_ai.operation.name` (incubating). */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name' satisfies typeof incubating.ATTR_GEN_AI_OPERATION_NAME;
/** `gen_ai.tool.call.arguments` (incubating; latest generation, opt-in content). Never emitted. */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments' satisfies typeof incubating.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS;
/** `gen_ai.tool.call.id` (incubating): the call id. */
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id' satisfies typeof incubating.ATTR_GEN_AI_TOOL_CALL_ID;
/** `gen_ai.tool.name` (incubating): the policy tool name. */
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name' satisfies typeof incubating.ATTR_GEN_AI_TOOL_NAME;
/** `gen_ai.tool.type` (incubating): `function`, `extension`, `datastore`. Not read yet. */
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type' satisfies typeof incubating.ATTR_GEN_AI_TOOL_TYPE;
/**
 * Operation `agent_step` (not in `@opentelemetry/semantic-conventions` 1.45): one step of an agent
 * run, parenting the step's model call and tool calls.
 *
 * @experimental Source: `@ai-sdk/otel` 1.0.173 `open-telemetry.ts` (`onStepStart`: span `step N`).
 */
export const GEN_AI_OPERATION_NAME_VALUE_AGENT_STEP = 'agent_step';
/** Operation `chat` (incubating): a model call. */
export const GEN_AI_OPERATION_NAME_VALUE_CHAT = 'chat' satisfies typeof incubating.GEN_AI_OPERATION_NAME_VALUE_CHAT;
/** Operation `execute_tool` (incubating): a tool call. */
export const GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL = 'execute_tool' satisfies typeof incubating.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL;
/** Operation `generate_content` (incubating): a model call. */
export const GEN_AI_OPERATION_NAME_VALUE_GENERATE_CONTENT = 'generate_content' satisfies typeof incubating.GEN_AI_OPERATION_NAME_VALUE_GENERATE_CONTENT;
/** Operation `invoke_agent` (incubating): an agent run. */
export const GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT = 'invoke_agent' satisfies typeof incubating.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT;
/** Operation `text_completion` (incubating): a model call. */
export const GEN_AI_OPERATION_NAME_VALUE_TEXT_COMPLETION = 'text_completion' satisfies typeof incubating.GEN_AI_OPERATION_NAME_VALUE_TEXT_COMPLETION;

/**
 * Name of the span event an SDK writes for a recorded exception (`Span.recordException`).
 * Source: OpenTelemetry exception semantic conventions (stable).
 */
export const EVENT_EXCEPTION = 'exception';

/**
 * Span status code of an error (`SpanStatusCode.ERROR`). Source: OpenTelemetry API.
 */
export const STATUS_CODE_ERROR = 2;

/**
 * Span names that stand for an operation when a producer sets no `gen_ai.operation.name`: the
 * GenAI conventions name spans `{gen_ai.operation.name} {target}` (e.g. `execute_tool read_file`).
 *
 * @experimental Derived from the GenAI span naming rule; the conventions are in Development.
 */
export const OPERATION_SPAN_NAME = /^(invoke_agent|execute_tool|chat|generate_content|text_completion)(?: |$)/;

/**
 * Legacy span names of pydantic-ai's instrumentation data format 2 (`InstrumentationSettings(
 * version=2)`): `agent run` for the run and `running tool` for a tool call. Both still carry
 * `gen_ai.operation.name`; the names are a fallback for producers that drop it.
 *
 * @experimental Source: pydantic-ai 2.68.0 `InstrumentationNames.for_version(2)`.
 */
export const LEGACY_SPAN_NAMES: Readonly<Record<string, string>> = {
  'agent run': GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  'running tool': GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
};

/**
 * Framework extension (pydantic-ai 2.68.0): set to `validation` on an `execute_tool` span whose
 * call failed argument validation, so the tool never ran (design: `not_started`).
 *
 * @experimental Source: pydantic-ai `InstrumentationNames.tool_failure_stage_attr`.
 */
export const ATTR_PYDANTIC_AI_TOOL_FAILURE_STAGE = 'pydantic_ai.tool.failure_stage';

/**
 * Framework extension (pydantic-ai 2.68.0): the deferral (`CallDeferred`, `ApprovalRequired`)
 * that stopped the call before it ran (design: `not_started`).
 *
 * @experimental Source: pydantic-ai `InstrumentationNames.tool_deferral_name_attr`.
 */
export const ATTR_PYDANTIC_AI_TOOL_DEFERRAL_NAME = 'pydantic_ai.tool.deferral.name';

/**
 * Framework extension (Strands Agents 1.62.0): the cancellation type on a span ended by a
 * cancellation (status left unset; design: `cancelled`).
 *
 * @experimental Source: Strands `Tracer.end_span_with_cancellation`.
 */
export const ATTR_STRANDS_CANCELLATION_TYPE = 'strands.cancellation.type';

/**
 * Framework extension (Google ADK 2.13.0, only with `ADK_EXPERIMENTAL_TELEMETRY=true`): which
 * callback produced a tool span's recorded response.
 *
 * @experimental Source: google-adk 2.13.0 `telemetry/_adk_attributes.py`, `_instrumentation.py`
 *   `record_response_source`.
 */
export const ATTR_ADK_RESPONSE_SOURCE = 'adk.experimental.response.source';

/**
 * {@link ATTR_ADK_RESPONSE_SOURCE} value of a tool call that raised and whose response an
 * `on_tool_error_callback` (e.g. `ReflectAndRetryToolPlugin`) produced: a failure, with no type.
 *
 * @experimental Source: google-adk 2.13.0 `ToolResponseSource`.
 */
export const ADK_RESPONSE_SOURCE_ON_TOOL_ERROR = 'on_tool_error_callback';

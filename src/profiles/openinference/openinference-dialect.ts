/**
 * OpenInference (Arize's conventions, used by the OpenInference instrumentations of OpenAI
 * Agents, smolagents, LangChain, LlamaIndex, CrewAI, the Claude Agent SDK and more) read as a
 * dialect of the `genai` profile: the same tree under other names, so the run, batch and call
 * rules are the profile's own.
 *
 * - Run (prompt): an `AGENT` span that is not inside another run. An `AGENT` span inside a run
 *   but not inside a tool call (OpenAI Agents' agent span under its trace's root, a handoff's next
 *   agent) is the same run's orchestration; one inside a `TOOL` span is an agent invoked as a tool
 *   (out of scope, as the design scopes out subagent-internal loops).
 * - Model call (batch boundary): an `LLM` span; the tool calls that start after it and before the
 *   next one form a batch.
 * - Tool call: a `TOOL` span; policy tool name `tool.name`; call id `tool.id`, else the span id;
 *   input `input.value` (hashed by the identical-call breaker, dropped).
 * - Outcome: span status and the `exception` event's `exception.type`, as in the `genai` profile.
 * - Session: `session.id`.
 *
 * Source: `openinference-semantic-conventions` 0.1.42; the spans as
 * `openinference-instrumentation-smolagents` 0.1.43 and `-openai-agents` 2.6.0 write them
 * (conformance/genai, docs/openinference.md).
 */
import type { WireProfileRecognition } from '../detect.js';
import type { GenAiDialect, GenAiOperation } from '../genai/genai-profile.js';
import type { SpanView, WireProfileReads } from '../wire-profile.js';
import {
  ATTR_INPUT_VALUE,
  ATTR_OPENINFERENCE_SPAN_KIND,
  ATTR_SESSION_ID,
  ATTR_TOOL_ID,
  ATTR_TOOL_NAME,
  OPENINFERENCE_SCOPE_PREFIX,
  OPENINFERENCE_SPAN_KIND_AGENT,
  OPENINFERENCE_SPAN_KIND_LLM,
  OPENINFERENCE_SPAN_KIND_TOOL,
} from './semconv.js';

/** The span kinds the profile acts on, by the operation they stand for; other kinds (`CHAIN`, `RETRIEVER`, ...) only link parents. */
export const OPENINFERENCE_OPERATIONS: Readonly<Record<string, GenAiOperation>> = {
  [OPENINFERENCE_SPAN_KIND_AGENT]: 'invoke_agent',
  [OPENINFERENCE_SPAN_KIND_LLM]: 'model_call',
  [OPENINFERENCE_SPAN_KIND_TOOL]: 'execute_tool',
};

/** The operation of a span from its `openinference.span.kind`; `undefined` for other kinds and spans without one. */
export function openInferenceOperation(span: Pick<SpanView, 'name' | 'attributes'>): GenAiOperation | undefined {
  const kind = span.attributes[ATTR_OPENINFERENCE_SPAN_KIND];
  return typeof kind === 'string' && Object.prototype.hasOwnProperty.call(OPENINFERENCE_OPERATIONS, kind) ? OPENINFERENCE_OPERATIONS[kind] : undefined;
}

/** The OpenInference dialect of the `genai` profile. */
export const OPENINFERENCE_DIALECT: GenAiDialect = {
  operation: openInferenceOperation,
  toolName: ATTR_TOOL_NAME,
  toolCallId: ATTR_TOOL_ID,
  toolArguments: ATTR_INPUT_VALUE,
  conversationId: ATTR_SESSION_ID,
};

/**
 * How OpenInference telemetry is recognised: spans carrying `openinference.span.kind`, or an
 * instrumentation scope named `openinference.instrumentation.*`.
 */
export const OPENINFERENCE_RECOGNITION: WireProfileRecognition = {
  spanAttributeKeys: [ATTR_OPENINFERENCE_SPAN_KIND],
  scopeNamePrefixes: [OPENINFERENCE_SCOPE_PREFIX],
};

/**
 * What the `openinference` profile reads; `serve` keeps only these at ingest (status and events,
 * hence `exception.type`, are always kept). Span names are free (a tool's class, the SDK trace's
 * name), so any name is kept.
 */
export const OPENINFERENCE_READS: WireProfileReads = Object.freeze({
  spanNames: undefined,
  spanAttributes: Object.freeze([ATTR_OPENINFERENCE_SPAN_KIND, ATTR_TOOL_NAME, ATTR_TOOL_ID, ATTR_INPUT_VALUE, ATTR_SESSION_ID, 'error.type']),
  logEventNames: Object.freeze([]),
  logAttributes: Object.freeze([]),
});

/**
 * The Vercel AI SDK's own telemetry (`ai.*` spans, AI SDK 6 with `experimental_telemetry`, AI SDK 7
 * with `LegacyOpenTelemetry`, and opencode, which runs on AI SDK 6) read as a dialect of the
 * `genai` profile: the same tree under other names, so the run, batch and call rules are the
 * profile's own.
 *
 * - Run (prompt): the `ai.generateText` / `ai.streamText` span of one SDK call (`ai.operationId`).
 * - Model call (batch boundary): `ai.generateText.doGenerate` / `ai.streamText.doStream`.
 * - Tool call: `ai.toolCall` with `ai.toolCall.name`, `ai.toolCall.id` and, when inputs are
 *   recorded, `ai.toolCall.args` (JSON text; hashed by the breaker and dropped).
 * - A failed call: status `ERROR` and an `exception` event whose `exception.type` is the error's
 *   `name`; no `error.type` (AI SDK 6.0.326 `telemetry/record-span.ts` `recordErrorOnSpan`).
 *
 * Source: `ai` 6.0.326 `generate-text/generate-text.ts`, `stream-text.ts`,
 * `execute-tool-call.ts`, `telemetry/assemble-operation-name.ts`.
 */
import type { SpanView, WireProfileReads } from '../wire-profile.js';
import { nonEmptyString } from '../wire-profile.js';
import type { GenAiDialect, GenAiOperation } from '../genai/genai-profile.js';

/** `ai.operationId`: the SDK operation a span stands for. */
export const ATTR_AI_OPERATION_ID = 'ai.operationId';
/** `ai.toolCall.name`: the tool name of an `ai.toolCall` span. */
export const ATTR_AI_TOOL_CALL_NAME = 'ai.toolCall.name';
/** `ai.toolCall.id`: the provider call id. */
export const ATTR_AI_TOOL_CALL_ID = 'ai.toolCall.id';
/** `ai.toolCall.args`: the call's input as JSON text (recorded unless `recordInputs: false`). Never emitted. */
export const ATTR_AI_TOOL_CALL_ARGS = 'ai.toolCall.args';

/** Operation ids (and span names) of the `ai.*` spans, by the operation they stand for. */
export const AI_SDK_OPERATIONS: Readonly<Record<string, GenAiOperation>> = {
  'ai.generateText': 'invoke_agent',
  'ai.streamText': 'invoke_agent',
  'ai.generateText.doGenerate': 'model_call',
  'ai.streamText.doStream': 'model_call',
  'ai.toolCall': 'execute_tool',
};

/** The operation of an `ai.*` span: its `ai.operationId`, else its name. */
export function aiSdkOperation(span: Pick<SpanView, 'name' | 'attributes'>): GenAiOperation | undefined {
  const id = nonEmptyString(span.attributes[ATTR_AI_OPERATION_ID]) ?? span.name;
  return Object.prototype.hasOwnProperty.call(AI_SDK_OPERATIONS, id) ? AI_SDK_OPERATIONS[id] : undefined;
}

/** The `ai.*` dialect (the SDK writes no session id on these spans). */
export const AI_SDK_DIALECT: GenAiDialect = {
  operation: aiSdkOperation,
  toolName: ATTR_AI_TOOL_CALL_NAME,
  toolCallId: ATTR_AI_TOOL_CALL_ID,
  toolArguments: ATTR_AI_TOOL_CALL_ARGS,
  conversationId: undefined,
};

/** Whether telemetry looks like the `ai.*` spans (names only). */
export function looksLikeAiSdk(sample: { readonly spanNames: ReadonlySet<string> }): boolean {
  for (const name of sample.spanNames) if (Object.prototype.hasOwnProperty.call(AI_SDK_OPERATIONS, name)) return true;
  return false;
}

/** What the `ai-sdk` profile reads; `serve` keeps only these at ingest (status and events are always kept). */
export const AI_SDK_READS: WireProfileReads = Object.freeze({
  spanNames: Object.freeze(Object.keys(AI_SDK_OPERATIONS)),
  spanAttributes: Object.freeze([ATTR_AI_OPERATION_ID, ATTR_AI_TOOL_CALL_NAME, ATTR_AI_TOOL_CALL_ID, ATTR_AI_TOOL_CALL_ARGS]),
  logEventNames: Object.freeze([]),
  logAttributes: Object.freeze([]),
});

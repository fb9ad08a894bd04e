/**
 * How telemetry that follows the OpenTelemetry GenAI semantic conventions is recognised (names
 * only, never attribute values).
 */
import type { WireProfileRecognition } from '../detect.js';
import { ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_TOOL_NAME, LEGACY_SPAN_NAMES, OPERATION_SPAN_NAME } from './semconv.js';

/**
 * A span named like a GenAI operation (`invoke_agent …`, `execute_tool …`, `chat …`), pydantic-ai's
 * legacy `agent run` / `running tool`, or spans that carry both `gen_ai.operation.name` and
 * `gen_ai.tool.name`. qwen-code's own spans carry those attributes too, so this is a `fallback`:
 * a producer an agent profile recognises stays that agent's.
 */
export const GENAI_RECOGNITION: WireProfileRecognition = {
  spanNamePattern: OPERATION_SPAN_NAME,
  spanNames: Object.keys(LEGACY_SPAN_NAMES),
  spanAttributeKeys: [ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_TOOL_NAME],
  fallback: true,
};

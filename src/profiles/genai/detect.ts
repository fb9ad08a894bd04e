/**
 * Whether telemetry looks like an agent that follows the OpenTelemetry GenAI semantic conventions
 * (for `replay --profile auto`). Names only, never attribute values.
 */
import type { TelemetrySample } from '../detect.js';
import { ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_TOOL_NAME, LEGACY_SPAN_NAMES, OPERATION_SPAN_NAME } from './semconv.js';

/**
 * True when a span is named like a GenAI operation (`invoke_agent …`, `execute_tool …`, `chat …`,
 * pydantic-ai's legacy `agent run` / `running tool`), or spans carry both `gen_ai.operation.name`
 * and `gen_ai.tool.name`. qwen-code's own spans carry those attributes too; the registry puts
 * `qwen-code` first, so a qwen-code capture stays qwen-code's.
 */
export function looksLikeGenAi(sample: TelemetrySample): boolean {
  for (const name of sample.spanNames) {
    if (OPERATION_SPAN_NAME.test(name) || LEGACY_SPAN_NAMES[name] !== undefined) return true;
  }
  return sample.spanAttributeKeys.has(ATTR_GEN_AI_OPERATION_NAME) && sample.spanAttributeKeys.has(ATTR_GEN_AI_TOOL_NAME);
}

/**
 * What a GenAI-conventions or OpenInference capture holds of the three span kinds the profile
 * needs (agent runs, model calls, tool calls), and what the guard says when one is missing: a
 * producer that records no tool calls (crewAI 1.15 with OpenLLMetry), or tool calls with no model
 * call between them (Semantic Kernel 1.45 without its GenAI diagnostics switch).
 */
import type { GenAiDialect } from './genai-profile.js';
import type { SpanView } from '../wire-profile.js';

/** Span counts by the operation the dialect reads them as. */
export interface GenAiCoverage {
  readonly runs: number;
  readonly modelCalls: number;
  readonly toolCalls: number;
}

/** Count the spans of each operation the profile acts on. */
export function genAiCoverage(spans: Iterable<Pick<SpanView, 'name' | 'attributes'>>, dialect: GenAiDialect): GenAiCoverage {
  let runs = 0;
  let modelCalls = 0;
  let toolCalls = 0;
  for (const s of spans) {
    const op = dialect.operation(s);
    if (op === 'invoke_agent') runs++;
    else if (op === 'model_call') modelCalls++;
    else if (op === 'execute_tool') toolCalls++;
  }
  return { runs, modelCalls, toolCalls };
}

/**
 * What is missing, as fixed sentences (counts only, no names from the input): empty when the
 * capture has tool calls and model calls, or nothing of the kind at all.
 *
 * @param c - the counts ({@link genAiCoverage})
 * @param toolSpan - how the profile names a tool-call span (`execute_tool`, OpenInference `TOOL`)
 */
export function genAiCoverageNotes(c: GenAiCoverage, toolSpan: string): string[] {
  if (c.toolCalls === 0 && c.runs + c.modelCalls > 0) {
    return [
      `no tool call spans: ${c.runs} agent run(s) and ${c.modelCalls} model call(s), but no ${toolSpan} span, so no tool outcome can be judged.`,
      '  The producer records no tool calls (crewAI 1.15 with OpenLLMetry is one: docs/genai.md, "Frameworks").',
    ];
  }
  if (c.toolCalls > 0 && c.modelCalls === 0) {
    return [
      `no model-call spans: ${c.toolCalls} ${toolSpan} span(s) but no chat, generate_content or text_completion span, so one model batch cannot be told from the next: these calls never lead to a warning.`,
      '  Semantic Kernel 1.45 records model calls only with SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS=true (Python) or the AppContext switch Microsoft.SemanticKernel.Experimental.GenAI.EnableOTelDiagnostics (.NET).',
    ];
  }
  return [];
}

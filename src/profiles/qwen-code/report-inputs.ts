/**
 * The shadow report's inputs from the qwen-code 0.24.4 wire (wire reference §1, §2): usage from
 * `qwen-code.api_response` logs, calls from `qwen-code.tool_call` logs, prompt extents from
 * `qwen-code.interaction` spans.
 */
import { createHash } from 'node:crypto';
import { argumentsTextFingerprint } from '../../engine/fingerprint.js';
import type { CallRecord, ReportInputRecords, ReportInputs, UsageRecord } from '../report-inputs.js';
import { hrTimeToMillis } from '../wire-profile.js';
import {
  ATTR_CALL_ID,
  ATTR_EVENT_NAME,
  ATTR_FUNCTION_ARGS,
  ATTR_FUNCTION_NAME,
  ATTR_LLM_REQUEST_CONTEXT,
  ATTR_PROMPT_ID,
  ATTR_QWEN_PROMPT_ID,
  ATTR_SESSION_ID,
  ATTR_STATUS,
  ATTR_TOOL_CALL_ID,
  EVENT_API_REQUEST,
  EVENT_TOOL_CALL,
  SPAN_INTERACTION,
  SPAN_LLM_REQUEST,
  SPAN_TOOL,
} from './semconv.js';

/** One log per model response: `input_token_count`, `output_token_count`, `duration_ms`. §2.3 */
const EVENT_API_RESPONSE = 'qwen-code.api_response';
/** One log per user prompt. §2.3 */
const EVENT_USER_PROMPT = 'qwen-code.user_prompt';
/** The tool result on `qwen-code.tool` spans, only with sensitive span attributes on. §1.2 */
const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** qwen-code 0.24.4 tools that write files (`packages/core/src/tools/tool-names.ts`). */
export const QWEN_CODE_FILE_CHANGING_TOOLS: ReadonlySet<string> = new Set(['edit', 'write_file', 'notebook_edit']);

/**
 * The qwen-code extractor: usage from `qwen-code.api_response` logs (one per model response), or
 * from interaction `qwen-code.llm_request` spans when the input has no such log; calls from
 * `qwen-code.tool_call` logs; prompt extents from `qwen-code.interaction` spans, else from the
 * prompt's first and last record.
 */
export function readQwenCodeReportInputs(records: ReportInputRecords): ReportInputs {
  const usage: UsageRecord[] = [];
  const prompts = new Map<string, { sessionId?: string; start: number; end: number; env?: string; version?: string; fromSpan: boolean }>();
  const touch = (promptId: string, t0: number, t1: number, sessionId: string | undefined, resource: Readonly<Record<string, unknown>> | undefined, fromSpan = false): void => {
    const p = prompts.get(promptId);
    const env = str(resource?.['deployment.environment']) ?? str(resource?.['deployment.environment.name']);
    const version = str(resource?.['service.version']);
    if (p === undefined) {
      prompts.set(promptId, { sessionId, start: t0, end: t1, env, version, fromSpan });
      return;
    }
    if (fromSpan && !p.fromSpan) {
      p.start = t0;
      p.end = Math.max(p.end, t1);
      p.fromSpan = true;
    } else if (!p.fromSpan) {
      p.start = Math.min(p.start, t0);
      p.end = Math.max(p.end, t1);
    } else {
      p.end = Math.max(p.end, t1);
    }
    p.sessionId ??= sessionId;
    p.env ??= env;
    p.version ??= version;
  };
  const results = new Map<string, string>();
  for (const s of records.spans) {
    const a = s.attributes;
    if (s.name === SPAN_INTERACTION) {
      const id = str(a[ATTR_QWEN_PROMPT_ID]);
      if (id !== undefined) touch(id, hrTimeToMillis(s.startTime), hrTimeToMillis(s.endTime), str(a[ATTR_SESSION_ID]), s.resource?.attributes, true);
    } else if (s.name === SPAN_TOOL) {
      const callId = str(a[ATTR_TOOL_CALL_ID]) ?? str(a[ATTR_CALL_ID]);
      const result = a[ATTR_GEN_AI_TOOL_CALL_RESULT];
      if (callId !== undefined && result !== undefined) results.set(callId, `r:${sha256(typeof result === 'string' ? result : JSON.stringify(result))}`);
    }
  }
  let apiResponses = 0;
  const calls: CallRecord[] = [];
  for (const l of records.logs) {
    const a = l.attributes;
    const name = str(a[ATTR_EVENT_NAME]) ?? l.eventName;
    const promptId = str(a[ATTR_PROMPT_ID]);
    if (promptId === undefined) continue;
    const t = hrTimeToMillis(l.hrTime);
    if (name === EVENT_API_RESPONSE) {
      apiResponses++;
      const duration = num(a['duration_ms']) ?? 0;
      usage.push({
        promptId,
        startMillis: t - duration,
        endMillis: t,
        inputTokens: num(a['input_token_count']),
        outputTokens: num(a['output_token_count']),
        costUsd: undefined,
      });
      touch(promptId, t - duration, t, str(a[ATTR_SESSION_ID]), l.resource?.attributes);
    } else if (name === EVENT_TOOL_CALL) {
      const callId = str(a[ATTR_CALL_ID]);
      const tool = str(a[ATTR_FUNCTION_NAME]) ?? 'unknown_tool';
      touch(promptId, t, t, str(a[ATTR_SESSION_ID]), l.resource?.attributes);
      if (callId === undefined) continue;
      const argsText = typeof a[ATTR_FUNCTION_ARGS] === 'string' ? a[ATTR_FUNCTION_ARGS] : JSON.stringify(a[ATTR_FUNCTION_ARGS] ?? null);
      const length = num(a['content_length']);
      calls.push({
        promptId,
        callId,
        atMillis: t,
        fingerprint: argumentsTextFingerprint(tool, argsText),
        toolFingerprint: sha256(`tool:${tool}`),
        succeeded: a[ATTR_STATUS] === 'success',
        resultFingerprint: results.get(callId) ?? (length === undefined ? undefined : `n:${length}`),
      });
    } else if (name === EVENT_API_REQUEST || name === EVENT_USER_PROMPT) {
      touch(promptId, t, t, str(a[ATTR_SESSION_ID]), l.resource?.attributes);
    }
  }
  let usageSource: string | undefined = apiResponses > 0 ? EVENT_API_RESPONSE : undefined;
  if (apiResponses === 0) {
    for (const s of records.spans) {
      const a = s.attributes;
      if (s.name !== SPAN_LLM_REQUEST || (a[ATTR_LLM_REQUEST_CONTEXT] !== undefined && a[ATTR_LLM_REQUEST_CONTEXT] !== 'interaction')) continue;
      const promptId = str(a[ATTR_QWEN_PROMPT_ID]);
      if (promptId === undefined) continue;
      usageSource = SPAN_LLM_REQUEST;
      usage.push({
        promptId,
        startMillis: hrTimeToMillis(s.startTime),
        endMillis: hrTimeToMillis(s.endTime),
        inputTokens: num(a['gen_ai.usage.input_tokens']),
        outputTokens: num(a['gen_ai.usage.output_tokens']),
        costUsd: undefined,
      });
    }
  }
  usage.sort((x, y) => x.endMillis - y.endMillis);
  calls.sort((x, y) => x.atMillis - y.atMillis);
  return {
    usageSource,
    usage,
    calls,
    prompts: [...prompts].map(([promptId, p]) => ({
      promptId,
      sessionId: p.sessionId,
      startMillis: p.start,
      endMillis: p.end,
      environment: p.env,
      serviceVersion: p.version,
    })),
    fileChangingTools: QWEN_CODE_FILE_CHANGING_TOOLS,
  };
}

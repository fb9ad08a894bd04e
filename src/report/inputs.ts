/**
 * What the report reads from the agent's telemetry besides the guard's decisions: model usage,
 * tool calls (for the identical-call breaker's what-if) and prompt extents. Profile-neutral records,
 * filled by one extractor per wire profile ({@link REPORT_EXTRACTORS}).
 *
 * Nothing here is rendered as is: the report keeps only counts, token sums, times and prompt ids.
 * Tool names, arguments and results are read only to compute in-memory fingerprints and are dropped.
 */
import { createHash } from 'node:crypto';
import { argumentsTextFingerprint } from '../canonical-json.js';
import type { RecordBatch } from '../replay/records.js';
import { hrTimeToMillis } from '../wire-profile.js';

/**
 * One model request, profile-neutral.
 *
 * Sources: qwen-code `qwen-code.api_response` logs (`input_token_count`, `output_token_count`,
 * `duration_ms`), else `qwen-code.llm_request` spans (`gen_ai.usage.input_tokens` /
 * `output_tokens`); Claude Code `claude_code.api_request` (tokens, `cost_usd`) and GenAI spans
 * (`gen_ai.usage.*`) plug in through their own extractors.
 */
export interface UsageRecord {
  /** The prompt the request belongs to (the profile's prompt id). */
  readonly promptId: string;
  /** Request start, in milliseconds since the epoch (end minus duration when only the end is recorded). */
  readonly startMillis: number;
  /** Response end, in milliseconds since the epoch. */
  readonly endMillis: number;
  /** Input (prompt) tokens; `undefined` when the agent did not record them. */
  readonly inputTokens: number | undefined;
  /** Output (completion) tokens; `undefined` when not recorded. */
  readonly outputTokens: number | undefined;
  /** Cost in US dollars, when the agent records it (Claude Code `cost_usd`). */
  readonly costUsd: number | undefined;
}

/** One tool call as the breaker what-if needs it. Fingerprints are opaque hashes. */
export interface CallRecord {
  readonly promptId: string;
  readonly callId: string;
  /** Time the call settled, in milliseconds since the epoch. */
  readonly atMillis: number;
  /** SHA-256 fingerprint of tool name + canonical arguments (the breaker's key). */
  readonly fingerprint: string;
  /** Fingerprint of the tool name alone (to tell "the same tool" without keeping its name). */
  readonly toolFingerprint: string;
  /** Terminal status as the agent recorded it. */
  readonly succeeded: boolean;
  /**
   * Fingerprint of the call's result, when the agent recorded something about it
   * (`gen_ai.tool.call.result`, hashed, else the result size); `undefined` when nothing was recorded.
   */
  readonly resultFingerprint: string | undefined;
}

/** Extent and labels of one prompt. */
export interface PromptRecord {
  readonly promptId: string;
  readonly sessionId: string | undefined;
  readonly startMillis: number;
  readonly endMillis: number;
  /** `deployment.environment` (or `deployment.environment.name`) of the Resource, when set. */
  readonly environment: string | undefined;
  /** `service.version` of the Resource, when set. */
  readonly serviceVersion: string | undefined;
}

/** Everything an extractor gives the report. */
export interface ReportInputs {
  /** Where usage came from, e.g. `qwen-code.api_response`; `undefined` when none was found. */
  readonly usageSource: string | undefined;
  readonly usage: readonly UsageRecord[];
  readonly calls: readonly CallRecord[];
  readonly prompts: readonly PromptRecord[];
  /**
   * Tools whose success changes files (for the what-if variant "a file-changing success resets
   * the candidate"), by the agent's policy tool name.
   */
  readonly fileChangingTools: ReadonlySet<string>;
}

/** Reads {@link ReportInputs} from one profile's telemetry. */
export type ReportExtractor = (records: RecordBatch) => ReportInputs;

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The record's Resource attributes, when the reader kept them. */
function resourceOf(record: object): Readonly<Record<string, unknown>> | undefined {
  const r = (record as { resource?: unknown }).resource;
  return typeof r === 'object' && r !== null ? (r as Record<string, unknown>) : undefined;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** qwen-code 0.24.4 tools that write files (`packages/core/src/tools/tool-names.ts`). */
export const QWEN_CODE_FILE_CHANGING_TOOLS: ReadonlySet<string> = new Set(['edit', 'write_file', 'notebook_edit']);

const INTERACTION = 'qwen-code.interaction';

/**
 * The qwen-code extractor: usage from `qwen-code.api_response` logs (one per model response), or
 * from interaction `qwen-code.llm_request` spans when the input has no such log; calls from
 * `qwen-code.tool_call` logs; prompt extents from `qwen-code.interaction` spans, else from the
 * prompt's first and last record.
 */
export function qwenCodeReportInputs(records: RecordBatch): ReportInputs {
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
    if (s.name === INTERACTION) {
      const id = str(a['qwen-code.prompt_id']);
      if (id !== undefined) touch(id, hrTimeToMillis(s.startTime), hrTimeToMillis(s.endTime), str(a['session.id']), resourceOf(s), true);
    } else if (s.name === 'qwen-code.tool') {
      const callId = str(a['tool.call_id']) ?? str(a['call_id']);
      const result = a['gen_ai.tool.call.result'];
      if (callId !== undefined && result !== undefined) results.set(callId, `r:${sha256(typeof result === 'string' ? result : JSON.stringify(result))}`);
    }
  }
  let apiResponses = 0;
  const calls: CallRecord[] = [];
  for (const l of records.logs) {
    const a = l.attributes;
    const name = str(a['event.name']) ?? l.eventName;
    const promptId = str(a['prompt_id']);
    if (promptId === undefined) continue;
    const t = hrTimeToMillis(l.hrTime);
    if (name === 'qwen-code.api_response') {
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
      touch(promptId, t - duration, t, str(a['session.id']), resourceOf(l));
    } else if (name === 'qwen-code.tool_call') {
      const callId = str(a['call_id']);
      const tool = str(a['function_name']) ?? 'unknown_tool';
      touch(promptId, t, t, str(a['session.id']), resourceOf(l));
      if (callId === undefined) continue;
      const argsText = typeof a['function_args'] === 'string' ? a['function_args'] : JSON.stringify(a['function_args'] ?? null);
      const length = num(a['content_length']);
      calls.push({
        promptId,
        callId,
        atMillis: t,
        fingerprint: argumentsTextFingerprint(tool, argsText),
        toolFingerprint: sha256(`tool:${tool}`),
        succeeded: a['status'] === 'success',
        resultFingerprint: results.get(callId) ?? (length === undefined ? undefined : `n:${length}`),
      });
    } else if (name === 'qwen-code.api_request' || name === 'qwen-code.user_prompt') {
      touch(promptId, t, t, str(a['session.id']), resourceOf(l));
    }
  }
  let usageSource: string | undefined = apiResponses > 0 ? 'qwen-code.api_response' : undefined;
  if (apiResponses === 0) {
    for (const s of records.spans) {
      const a = s.attributes;
      if (s.name !== 'qwen-code.llm_request' || (a['llm_request.context'] !== undefined && a['llm_request.context'] !== 'interaction')) continue;
      const promptId = str(a['qwen-code.prompt_id']);
      if (promptId === undefined) continue;
      usageSource = 'qwen-code.llm_request';
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

/** An extractor that finds nothing (profiles without one: the report then shows no usage). */
export function emptyReportInputs(): ReportInputs {
  return { usageSource: undefined, usage: [], calls: [], prompts: [], fileChangingTools: new Set() };
}

/** Extractors by wire profile name. Other profiles add theirs here. */
export const REPORT_EXTRACTORS: Readonly<Record<string, ReportExtractor>> = {
  'qwen-code': qwenCodeReportInputs,
  'batch-span': () => emptyReportInputs(),
};

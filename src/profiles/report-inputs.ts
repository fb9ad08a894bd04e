/**
 * What the shadow report reads from an agent's telemetry besides the guard's decisions: model
 * usage, tool calls (for the identical-call breaker's what-if) and prompt extents, as
 * profile-neutral records. Each wire profile reads its own wire into them (`readReportInputs` of
 * its registry entry); the report never sees wire names.
 *
 * Nothing here is rendered as is: the report keeps only counts, token sums, times and prompt ids.
 * Tool names, arguments and results are read only to compute in-memory fingerprints and are dropped.
 */
import type { HrTime } from '@opentelemetry/api';
import type { ResourceView } from './wire-profile.js';

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

/** A recorded span as the readers see it (replay's recorded spans satisfy it). */
export interface ReportInputSpan {
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  /** The producer's Resource (`service.version`, `deployment.environment`, ...). */
  readonly resource?: ResourceView | undefined;
}

/** A recorded log record as the readers see it. */
export interface ReportInputLog {
  readonly hrTime: HrTime;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly eventName?: string | undefined;
  readonly resource?: ResourceView | undefined;
}

/** The telemetry a reader reads. */
export interface ReportInputRecords {
  readonly spans: readonly ReportInputSpan[];
  readonly logs: readonly ReportInputLog[];
}

/**
 * Collects {@link ReportInputs} from one profile's telemetry, record by record (replay feeds a
 * whole file, serve each record as it is released). Never throws on malformed records.
 */
export interface ReportInputsCollector {
  addSpan(span: ReportInputSpan): void;
  addLog(log: ReportInputLog): void;
  /** The inputs so far (may be called more than once). */
  finish(): ReportInputs;
}

/** Makes a fresh collector for one profile. */
export type ReportInputsReader = () => ReportInputsCollector;

/** Inputs with nothing in them (a profile without a reader: the report then shows no usage). */
export function emptyReportInputs(): ReportInputs {
  return { usageSource: undefined, usage: [], calls: [], prompts: [], fileChangingTools: new Set() };
}

/** Feed every record of `records` to a fresh collector of `reader` and finish it. */
export function readReportInputs(reader: ReportInputsReader | undefined, records: ReportInputRecords): ReportInputs {
  if (reader === undefined) return emptyReportInputs();
  const collector = reader();
  for (const s of records.spans) collector.addSpan(s);
  for (const l of records.logs) collector.addLog(l);
  return collector.finish();
}


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
  /**
   * Input tokens read from the provider's prompt cache (Claude Code `cache_read_tokens`, qwen-code
   * and gemini-cli `cached_content_token_count`, GenAI `gen_ai.usage.cache_read.input_tokens`);
   * absent or `undefined` when not recorded.
   */
  readonly cacheReadTokens?: number | undefined;
  /** Input tokens written to the prompt cache (Claude Code `cache_creation_tokens`, GenAI `gen_ai.usage.cache_creation.input_tokens`). */
  readonly cacheCreationTokens?: number | undefined;
  /**
   * The model the request went to, as the agent records it (`model`, `gen_ai.request.model`). Used
   * only to look a price up in a user-passed price table; never rendered.
   */
  readonly model?: string | undefined;
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
  /** The profile (agent) that read the prompt; set by {@link mergeReportInputs}. */
  readonly agent?: string | undefined;
  /**
   * The prompt's owner, from {@link ReportInputsOptions.ownerAttribute} on its records or Resource;
   * used only to cluster prompts for the rollout gate's intervals, never rendered.
   */
  readonly owner?: string | undefined;
  /**
   * The mode the prompt ran under as its telemetry states it ({@link ReportInputsOptions.cohortAttribute}
   * on its records or Resource: `off`, `shadow`, `warn`, `enforce`); `undefined` when not stated.
   */
  readonly cohort?: string | undefined;
}

/** Everything an extractor gives the report. */
export interface ReportInputs {
  /** Where usage came from, e.g. `qwen-code.api_response`; `undefined` when none was found. */
  readonly usageSource: string | undefined;
  /** Where each agent's usage came from, by profile name ({@link mergeReportInputs}); absent for one profile's inputs. */
  readonly usageSources?: Readonly<Record<string, string>>;
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
  /** Its trace and span id (GenAI: the run a model call belongs to). */
  spanContext?(): { readonly traceId: string; readonly spanId: string };
  /** Its parent's context; `undefined` for a root span. */
  readonly parentSpanContext?: { readonly spanId: string } | undefined;
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
  /** Its instrumentation scope, when known. */
  readonly instrumentationScope?: { readonly name: string } | undefined;
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

/** What every collector reads besides its agent's own names. */
export interface ReportInputsOptions {
  /**
   * The attribute that names a prompt's owner (the rollout gate's unit of resampling), read from
   * the prompt's records, else its Resource. @defaultValue `'user.id'` (Claude Code's hashed user id)
   */
  readonly ownerAttribute?: string;
  /**
   * The attribute that states the mode a prompt ran under (its cohort), read from the prompt's
   * records, else its Resource. @defaultValue {@link DEFAULT_COHORT_ATTRIBUTE}
   */
  readonly cohortAttribute?: string;
}

/** The default owner attribute: Claude Code's hashed `user.id`. */
export const DEFAULT_OWNER_ATTRIBUTE = 'user.id';
/**
 * The default cohort attribute: the Resource attribute the deployment sets beside the guard's
 * mode (e.g. `OTEL_RESOURCE_ATTRIBUTES=repeated_tool_failure_guard.mode=warn`; docs/report.md).
 */
export const DEFAULT_COHORT_ATTRIBUTE = 'repeated_tool_failure_guard.mode';

/** Makes a fresh collector for one profile. */
export type ReportInputsReader = (options?: ReportInputsOptions) => ReportInputsCollector;

/** Inputs with nothing in them (a profile without a reader: the report then shows no usage). */
export function emptyReportInputs(): ReportInputs {
  return { usageSource: undefined, usage: [], calls: [], prompts: [], fileChangingTools: new Set() };
}

/** Feed every record of `records` to a fresh collector of `reader` and finish it. */
export function readReportInputs(reader: ReportInputsReader | undefined, records: ReportInputRecords, options?: ReportInputsOptions): ReportInputs {
  if (reader === undefined) return emptyReportInputs();
  const collector = reader(options);
  for (const s of records.spans) collector.addSpan(s);
  for (const l of records.logs) collector.addLog(l);
  return collector.finish();
}


/**
 * Several agents' inputs as one: every prompt tagged with its agent (profile name), usage and calls
 * concatenated (prompt ids of different agents do not collide: each profile's ids are its own
 * wire's), `usageSources` by agent, and the union of the file-changing tools.
 */
export function mergeReportInputs(parts: readonly { readonly agent: string; readonly inputs: ReportInputs }[]): ReportInputs {
  if (parts.length === 0) return emptyReportInputs();
  const usageSources: Record<string, string> = {};
  for (const { agent, inputs } of parts) if (inputs.usageSource !== undefined) usageSources[agent] = inputs.usageSource;
  return {
    usageSource: parts.find((p) => p.inputs.usageSource !== undefined)?.inputs.usageSource,
    usageSources,
    usage: parts.flatMap((p) => p.inputs.usage),
    calls: parts.flatMap((p) => p.inputs.calls),
    prompts: parts.flatMap(({ agent, inputs }) => inputs.prompts.map((r) => ({ ...r, agent }))),
    fileChangingTools: new Set(parts.flatMap((p) => [...p.inputs.fileChangingTools])),
  };
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A number attribute (OTLP JSON int64 values arrive as strings); `undefined` when absent or not a finite number. */
export function numberAttribute(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** Where an agent's per-request usage log record puts each field (attribute keys; absent: not recorded). */
export interface UsageLogKeys {
  readonly inputTokens: string;
  readonly outputTokens: string;
  readonly cacheReadTokens?: string;
  readonly cacheCreationTokens?: string;
  /** A stated cost in US dollars. */
  readonly costUsd?: string;
  /** The request's duration in milliseconds (its start is the record's time minus it). */
  readonly durationMillis: string;
  readonly model: string;
}

/**
 * The `*_token_count` usage fields qwen-code 0.24.4 and gemini-cli 0.61.0 share (gemini-cli's
 * telemetry is qwen-code's origin): `input_token_count`, `output_token_count`,
 * `cached_content_token_count` (included in the input count), `duration_ms`, `model`.
 */
export const COUNT_USAGE_KEYS: UsageLogKeys = {
  inputTokens: 'input_token_count',
  outputTokens: 'output_token_count',
  cacheReadTokens: 'cached_content_token_count',
  durationMillis: 'duration_ms',
  model: 'model',
};

/** The usage of one request from its log record, which is written when the response ended (`endMillis`). */
export function usageFromLog(promptId: string, endMillis: number, a: Readonly<Record<string, unknown>>, keys: UsageLogKeys): UsageRecord {
  const at = (k: string | undefined): number | undefined => (k === undefined ? undefined : numberAttribute(a[k]));
  return {
    promptId,
    startMillis: endMillis - (at(keys.durationMillis) ?? 0),
    endMillis,
    inputTokens: at(keys.inputTokens),
    outputTokens: at(keys.outputTokens),
    costUsd: at(keys.costUsd),
    cacheReadTokens: at(keys.cacheReadTokens),
    cacheCreationTokens: at(keys.cacheCreationTokens),
    model: nonEmpty(a[keys.model]),
  };
}

interface Extent {
  sessionId: string | undefined;
  start: number;
  end: number;
  environment: string | undefined;
  version: string | undefined;
  owner: string | undefined;
  cohort: string | undefined;
  /** Extent from the prompt's own span (exact), not from its records. */
  fromSpan: boolean;
}

/**
 * Prompt extents and labels as the collectors gather them, record by record: the first and last
 * time of the prompt's records (or its own span's extent, which wins), its session, and from its
 * records or Resource `deployment.environment` (or `deployment.environment.name`),
 * `service.version`, the owner and the cohort attributes. Holds at most `maxPrompts` prompts.
 */
export class PromptExtents {
  private readonly _prompts = new Map<string, Extent>();
  private readonly _max: number;
  private readonly _owner: string;
  private readonly _cohort: string;

  /** @param maxPrompts - prompts held. @defaultValue `1000000` */
  constructor(options: ReportInputsOptions = {}, maxPrompts = 1_000_000) {
    this._max = maxPrompts;
    this._owner = options.ownerAttribute ?? DEFAULT_OWNER_ATTRIBUTE;
    this._cohort = options.cohortAttribute ?? DEFAULT_COHORT_ATTRIBUTE;
  }

  /** Whether the prompt has been seen. */
  has(promptId: string): boolean {
    return this._prompts.has(promptId);
  }

  /**
   * One record of a prompt, from `t0` to `t1` (milliseconds since the epoch).
   *
   * @param fromSpan - the times are the prompt's own span's (its exact extent)
   */
  touch(
    promptId: string,
    t0: number,
    t1: number,
    sessionId: string | undefined,
    attributes: Readonly<Record<string, unknown>> | undefined,
    resource: Readonly<Record<string, unknown>> | undefined,
    fromSpan = false,
  ): void {
    const environment = nonEmpty(resource?.['deployment.environment']) ?? nonEmpty(resource?.['deployment.environment.name']);
    const version = nonEmpty(resource?.['service.version']);
    const owner = nonEmpty(attributes?.[this._owner]) ?? nonEmpty(resource?.[this._owner]);
    const cohort = nonEmpty(attributes?.[this._cohort]) ?? nonEmpty(resource?.[this._cohort]);
    const p = this._prompts.get(promptId);
    if (p === undefined) {
      if (this._prompts.size < this._max) this._prompts.set(promptId, { sessionId, start: t0, end: t1, environment, version, owner, cohort, fromSpan });
      return;
    }
    if (fromSpan && !p.fromSpan) {
      p.start = t0;
      p.fromSpan = true;
    } else if (!p.fromSpan) {
      p.start = Math.min(p.start, t0);
    }
    p.end = Math.max(p.end, t1);
    p.sessionId ??= sessionId;
    p.environment ??= environment;
    p.version ??= version;
    p.owner ??= owner;
    p.cohort ??= cohort;
  }

  /** The prompts so far. */
  records(): PromptRecord[] {
    return [...this._prompts].map(([promptId, p]) => ({
      promptId,
      sessionId: p.sessionId,
      startMillis: p.start,
      endMillis: p.end,
      environment: p.environment,
      serviceVersion: p.version,
      owner: p.owner,
      cohort: p.cohort,
    }));
  }
}

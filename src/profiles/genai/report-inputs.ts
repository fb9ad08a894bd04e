/**
 * The shadow report's inputs from GenAI-conventions spans (and, through its dialect, the Vercel AI
 * SDK's `ai.*` spans): usage from model-call spans (`chat`, `generate_content`, `text_completion`;
 * `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `gen_ai.usage.cache_read.input_tokens`,
 * `gen_ai.usage.cache_creation.input_tokens`, `gen_ai.request.model`), calls from `execute_tool`
 * spans that carry `gen_ai.tool.call.arguments` (hashed, dropped), prompt extents from the runs.
 *
 * A prompt is a run as the `genai` profile names it: `<traceId>:<spanId>` of a top-level
 * `invoke_agent` span (one not inside another run of its trace), else of the trace's root span.
 * Every model call of the trace within the run's time counts, a sub-agent's too (the run pays for
 * them). The conventions record no cost.
 */
import { argumentsTextFingerprint } from '../../engine/fingerprint.js';
import { numberAttribute as num, PromptExtents } from '../report-inputs.js';
import type { CallRecord, ReportInputLog, ReportInputs, ReportInputsCollector, ReportInputsOptions, ReportInputSpan, UsageRecord } from '../report-inputs.js';
import { hrTimeToMillis } from '../wire-profile.js';
import { GENAI_DIALECT, genAiPromptId } from './genai-profile.js';
import type { GenAiDialect } from './genai-profile.js';

/** Where a dialect puts a model call's usage (attribute keys, first present wins). */
export interface GenAiUsageKeys {
  readonly inputTokens: readonly string[];
  readonly outputTokens: readonly string[];
  readonly cacheReadTokens: readonly string[];
  readonly cacheCreationTokens: readonly string[];
  readonly model: readonly string[];
  /** The `usageSource` label the report shows. */
  readonly source: string;
}

/**
 * The GenAI conventions' usage keys (latest experimental names; `gen_ai.usage.prompt_tokens` /
 * `completion_tokens` of v1.26 and earlier as fallbacks).
 */
export const GENAI_USAGE_KEYS: GenAiUsageKeys = {
  inputTokens: ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens'],
  outputTokens: ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens'],
  cacheReadTokens: ['gen_ai.usage.cache_read.input_tokens'],
  cacheCreationTokens: ['gen_ai.usage.cache_creation.input_tokens'],
  model: ['gen_ai.request.model', 'gen_ai.response.model'],
  source: 'gen_ai.usage',
};

/** The Vercel AI SDK's `ai.usage.*` keys on its model-call spans (AI SDK 5/6; `promptTokens` in 4). */
export const AI_SDK_USAGE_KEYS: GenAiUsageKeys = {
  inputTokens: ['ai.usage.inputTokens', 'ai.usage.promptTokens', 'gen_ai.usage.input_tokens'],
  outputTokens: ['ai.usage.outputTokens', 'ai.usage.completionTokens', 'gen_ai.usage.output_tokens'],
  cacheReadTokens: ['ai.usage.cachedInputTokens'],
  cacheCreationTokens: [],
  model: ['ai.model.id', 'gen_ai.request.model'],
  source: 'ai.usage',
};

function first(a: Readonly<Record<string, unknown>>, keys: readonly string[]): number | undefined {
  for (const k of keys) {
    const v = num(a[k]);
    if (v !== undefined) return v;
  }
  return undefined;
}

function firstString(a: Readonly<Record<string, unknown>>, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = a[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

interface Run {
  readonly id: string;
  readonly start: number;
  readonly end: number;
  readonly agent: boolean;
  readonly sessionId: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly resource: Readonly<Record<string, unknown>> | undefined;
}

type Pending = { readonly traceId: string; readonly at: number; readonly usage?: Omit<UsageRecord, 'promptId'>; readonly call?: Omit<CallRecord, 'promptId'> };

/** Collects the report's inputs from GenAI-conventions spans (see the module comment). */
export class GenAiReportInputsCollector implements ReportInputsCollector {
  private readonly _max: number;
  private readonly _dialect: GenAiDialect;
  private readonly _keys: GenAiUsageKeys;
  private readonly _options: ReportInputsOptions;
  private readonly _runs = new Map<string, Run[]>();
  private readonly _pending: Pending[] = [];

  /**
   * @param options - the owner and cohort attributes
   * @param dialect - where the producer puts operations and tool fields. @defaultValue the GenAI conventions
   * @param keys - where it puts usage. @defaultValue {@link GENAI_USAGE_KEYS}
   * @param maxItems - model calls, tool calls and runs held, each. @defaultValue `1000000`
   */
  constructor(options: ReportInputsOptions = {}, dialect: GenAiDialect = GENAI_DIALECT, keys: GenAiUsageKeys = GENAI_USAGE_KEYS, maxItems = 1_000_000) {
    this._options = options;
    this._dialect = dialect;
    this._keys = keys;
    this._max = maxItems;
  }

  addSpan(span: ReportInputSpan): void {
    const ctx = span.spanContext?.();
    if (ctx === undefined) return;
    const op = this._dialect.operation(span);
    const a = span.attributes;
    const start = hrTimeToMillis(span.startTime);
    const end = Math.max(start, hrTimeToMillis(span.endTime));
    if (op === 'invoke_agent' || span.parentSpanContext === undefined) {
      let runs = this._runs.get(ctx.traceId);
      if (runs === undefined) {
        if (this._runs.size >= this._max) return;
        this._runs.set(ctx.traceId, (runs = []));
      }
      const conversation = this._dialect.conversationId;
      runs.push({
        id: genAiPromptId(ctx),
        start,
        end,
        agent: op === 'invoke_agent',
        sessionId: conversation === undefined ? undefined : firstString(a, [conversation]),
        attributes: a,
        resource: span.resource?.attributes,
      });
      return;
    }
    if (this._pending.length >= this._max) return;
    if (op === 'model_call') {
      const k = this._keys;
      this._pending.push({
        traceId: ctx.traceId,
        at: start,
        usage: {
          startMillis: start,
          endMillis: end,
          inputTokens: first(a, k.inputTokens),
          outputTokens: first(a, k.outputTokens),
          costUsd: undefined,
          cacheReadTokens: first(a, k.cacheReadTokens),
          cacheCreationTokens: first(a, k.cacheCreationTokens),
          model: firstString(a, k.model),
        },
      });
    } else if (op === 'execute_tool') {
      const args = a[this._dialect.toolArguments];
      const tool = firstString(a, [this._dialect.toolName]);
      if (typeof args !== 'string' || tool === undefined) return;
      this._pending.push({
        traceId: ctx.traceId,
        at: start,
        call: {
          callId: firstString(a, [this._dialect.toolCallId]) ?? ctx.spanId,
          atMillis: end,
          fingerprint: argumentsTextFingerprint(tool, args),
          succeeded: (span as { readonly status?: { readonly code: number } }).status?.code !== 2 && a['error.type'] === undefined,
          resultFingerprint: undefined,
        },
      });
    }
  }

  addLog(_log: ReportInputLog): void {
    // The conventions' model and tool calls are spans.
  }

  finish(): ReportInputs {
    const prompts = new PromptExtents(this._options, this._max);
    const runsOf = new Map<string, Run[]>();
    for (const [traceId, all] of this._runs) {
      // Top-level agent runs (not inside another run of the trace), else the trace's root span.
      const agents = all.filter((r) => r.agent);
      const top = agents.length > 0 ? agents.filter((r) => !agents.some((o) => o !== r && o.start <= r.start && r.end <= o.end && (o.start < r.start || r.end < o.end))) : all;
      runsOf.set(traceId, top);
      for (const r of top) prompts.touch(r.id, r.start, r.end, r.sessionId, r.attributes, r.resource, true);
    }
    const usage: UsageRecord[] = [];
    const calls: CallRecord[] = [];
    for (const p of this._pending) {
      const runs = runsOf.get(p.traceId);
      const run = runs?.find((r) => r.start <= p.at && p.at <= r.end) ?? runs?.[0];
      if (run === undefined) continue;
      if (p.usage !== undefined) usage.push({ ...p.usage, promptId: run.id });
      if (p.call !== undefined) calls.push({ ...p.call, promptId: run.id });
    }
    usage.sort((x, y) => x.endMillis - y.endMillis);
    calls.sort((x, y) => x.atMillis - y.atMillis);
    return {
      usageSource: usage.length > 0 ? this._keys.source : undefined,
      usage,
      calls,
      prompts: prompts.records(),
      fileChangingTools: new Set(),
    };
  }
}

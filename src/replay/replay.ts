/**
 * Replay recorded telemetry through the same processors as the in-process path, on a virtual
 * clock, and collect every batch decision plus the guard's own emitted telemetry.
 */
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import type { SdkLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace-base';
import type { WireProfileName } from '../profiles/registry.js';
import type { BatchDecision } from '../engine/failure-engine.js';
import type { RepetitionDecisionRecord } from '../engine/repetition-engine.js';
import { RepeatedToolFailureGuard } from '../otel/repeated-tool-failure-guard.js';
import type { BatchSpanProfileOptions } from '../profiles/batch-span/batch-span-profile.js';
import { hrTimeToMillis } from '../profiles/wire-profile.js';
import type { GuardMode } from '../core/failure/types.js';
import type { RecordBatch, RecordedLog, RecordedSpan } from '../otlp/records.js';
import { inTreeGuardEvents } from '../profiles/qwen-code/in-tree.js';
import type { InTreeGuardEvent } from '../profiles/qwen-code/in-tree.js';

/** Options of {@link replayRecords}. */
export interface ReplayOptions {
  /**
   * Mode for every prompt. `undefined` uses, per prompt, the mode the in-tree guard recorded in
   * the same input, else `shadow`.
   */
  readonly mode?: GuardMode;
  /** @defaultValue `'qwen-code'` */
  readonly profile?: WireProfileName;
  readonly batchSpan?: BatchSpanProfileOptions;
  /** Called every `progressEvery` events with (done, total). */
  readonly onProgress?: (done: number, total: number) => void;
  /** @defaultValue `5000` */
  readonly progressEvery?: number;
}

/** One emitted record of the guard's own telemetry, kept for audits. */
export interface EmittedGuardRecord {
  readonly kind: 'log' | 'metric';
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly body: unknown;
}

/** Result of a replay. */
export interface ReplayResult {
  /** Every reduced batch in decision order, including decision `none`. */
  readonly decisions: readonly BatchDecision[];
  /** Reported decisions of the identical tool-call repetition breaker (warn, abort, end of a warned run). */
  readonly repetition: readonly RepetitionDecisionRecord[];
  /** Final batches not judged because they ended the turn first (permission cancel, cancelled turn, another loop stop). */
  readonly unjudgedBatches: readonly { readonly promptId: string; readonly reason: string }[];
  /** Prompts evicted before they ended (idle or capacity): their later batches were not judged. */
  readonly evictions: readonly { readonly promptId: string; readonly reason: string }[];
  /** The in-tree guard's own events found in the input. */
  readonly inTree: readonly InTreeGuardEvent[];
  /** What the guard emitted (logs and metric data points). */
  readonly emitted: readonly EmittedGuardRecord[];
  readonly spanCount: number;
  readonly logCount: number;
  readonly lateRecords: number;
}

interface TimedEvent {
  readonly t: number;
  readonly order: number;
  readonly seq: number;
  readonly span?: RecordedSpan;
  readonly log?: RecordedLog;
}

/**
 * Events in time order. At equal times logs come first, then span starts, then span ends: log times
 * have millisecond precision (truncated), so a log that shares a millisecond with a span start was
 * emitted before it (a batch's last `tool_call` log before the next model request).
 */
function timeline(records: RecordBatch): TimedEvent[] {
  const events: TimedEvent[] = [];
  let seq = 0;
  for (const span of records.spans) {
    events.push({ t: hrTimeToMillis(span.startTime), order: 1, seq: seq++, span });
    events.push({ t: hrTimeToMillis(span.endTime), order: 2, seq: seq++, span });
  }
  for (const log of records.logs) events.push({ t: hrTimeToMillis(log.hrTime), order: 0, seq: seq++, log });
  events.sort((a, b) => a.t - b.t || a.order - b.order || a.seq - b.seq);
  return events;
}

/**
 * Replay records through a fresh guard (span processor, log-record processor and engine exactly
 * as registered in-process) and collect the decisions.
 */
export async function replayRecords(records: RecordBatch, options: ReplayOptions = {}): Promise<ReplayResult> {
  const inTree = inTreeGuardEvents(records.logs);
  let now = 0;
  const logExporter = new InMemoryLogRecordExporter();
  const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: logExporter })] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 2_147_483_647 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const guard = new RepeatedToolFailureGuard({
    mode: options.mode ?? 'shadow',
    profile: options.profile ?? 'qwen-code',
    batchSpan: options.batchSpan,
    clock: () => now,
    controlHookRequired: false,
    sweepIntervalMillis: 0,
    meterProvider,
    loggerProvider,
  });
  const decisions: BatchDecision[] = [];
  const repetition: RepetitionDecisionRecord[] = [];
  const unjudgedBatches: { promptId: string; reason: string }[] = [];
  const evictions: { promptId: string; reason: string }[] = [];
  guard.addListener({
    onDecision: (d) => decisions.push(d),
    onRepetitionDecision: (r) => repetition.push(r),
    onUnjudgedBatch: (promptId, reason) => unjudgedBatches.push({ promptId, reason }),
    onEviction: (promptId, reason) => evictions.push({ promptId, reason }),
  });
  if (options.mode === undefined) {
    for (const e of inTree) if (e.mode !== undefined) guard.engine.setPromptMode(e.promptId, e.mode);
  }
  const events = timeline(records);
  const every = options.progressEvery ?? 5000;
  const sweepEvery = guard.options.sweepIntervalMillis || 60_000;
  let nextSweep = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as TimedEvent;
    now = e.t;
    if (now >= nextSweep) {
      if (nextSweep !== Number.NEGATIVE_INFINITY) guard.sweep();
      nextSweep = now + sweepEvery;
    }
    if (e.span !== undefined) {
      if (e.order === 1) guard.spanProcessor.onStart(e.span as unknown as Span, ROOT_CONTEXT);
      else guard.spanProcessor.onEnd(e.span as unknown as ReadableSpan);
    } else if (e.log !== undefined) {
      guard.logRecordProcessor.onEmit(e.log as unknown as SdkLogRecord);
    }
    if (options.onProgress !== undefined && (i + 1) % every === 0) options.onProgress(i + 1, events.length);
  }
  guard.finishAll();
  const lateRecords = guard.engine.lateRecords;
  await guard.shutdown();
  await reader.forceFlush();
  const emitted: EmittedGuardRecord[] = logExporter.getFinishedLogRecords().map((r) => ({
    kind: 'log' as const,
    name: String(r.attributes['event.name'] ?? r.eventName ?? ''),
    attributes: r.attributes,
    body: r.body,
  }));
  for (const rm of metricExporter.getMetrics()) {
    for (const sm of rm.scopeMetrics) {
      for (const m of sm.metrics) {
        for (const dp of m.dataPoints) emitted.push({ kind: 'metric', name: m.descriptor.name, attributes: dp.attributes, body: undefined });
      }
    }
  }
  await meterProvider.shutdown();
  await loggerProvider.shutdown();
  return { decisions, repetition, unjudgedBatches, evictions, inTree, emitted, spanCount: records.spans.length, logCount: records.logs.length, lateRecords };
}

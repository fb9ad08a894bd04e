/**
 * Replay recorded telemetry through the same processors as the in-process path, on a virtual
 * clock, and collect every batch decision plus the guard's own emitted telemetry.
 */
import type { UntypedFailurePolicy } from '../core/failure/reducer.js';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import type { ReadWriteLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace';
import { detectWireProfiles, WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileDefinition, WireProfileName } from '../profiles/registry.js';
import { sampleTelemetry, TelemetrySampleBuilder } from '../profiles/detect.js';
import { ProducerRecognizer, resourceKey } from '../profiles/router/producer-recognizer.js';
import type { BatchDecision, UnjudgedReason } from '../engine/failure-types.js';
import type { RepetitionDecisionRecord } from '../engine/repetition-engine.js';
import { RepeatedToolFailureGuard } from '../otel/repeated-tool-failure-guard.js';
import { AgentTallies } from './agent-tallies.js';
import type { AgentTally } from './agent-tallies.js';
import type { BatchSpanProfileOptions } from '../profiles/batch-span/batch-span-profile.js';
import { hrTimeToMillis, INSTRUMENTATION_SCOPE_NAME, notCheckableFor } from '../profiles/wire-profile.js';
import type { UnreadProducerCount } from '../profiles/router/routing-profile.js';
import type { ResourceView } from '../profiles/wire-profile.js';
import type { GuardMode } from '../core/failure/types.js';
import type { RecordBatch, RecordedLog, RecordedSpan } from '../otlp/records.js';
import { inTreeGuardEvents } from '../profiles/qwen-code/in-tree.js';
import type { InTreeGuardEvent } from '../profiles/qwen-code/in-tree.js';
import { isProjectedRecordBatch, producerProfiles } from './replay-input.js';
import type { ProjectedRecordBatch, WholeInputFacts } from './replay-input.js';

/** Options of {@link replayRecords}. */
export interface ReplayOptions {
  /**
   * Mode for every prompt. `undefined` uses, per prompt, the mode the in-tree guard recorded in
   * the same input, else `shadow`.
   */
  readonly mode?: GuardMode;
  /**
   * The wire profile for every record, or `'auto'`: each producer's (each Resource's) records read
   * by the first built-in profile its records look like (`producerProfiles`); with one profile in
   * use (or none: `qwen-code`) it reads every record. @defaultValue `'auto'`
   */
  readonly profile?: WireProfileName | 'auto';
  readonly batchSpan?: BatchSpanProfileOptions;
  /**
   * What a failed call with no type is: `'ineligible'` (the design's rule, `unknown`) or the opt-in
   * `'key-by-tool'` (keyed `(tool, untyped)`; see `RepeatedToolFailureGuardOptions.untypedFailures`).
   * @defaultValue `'ineligible'`
   */
  readonly untypedFailures?: UntypedFailurePolicy;
  /** Called every `progressEvery` events with (done, total). */
  readonly onProgress?: (done: number, total: number) => void;
  /** @defaultValue `5000` */
  readonly progressEvery?: number;
}

/** One batch not judged on its outcomes. */
export interface UnjudgedBatch {
  readonly promptId: string;
  /** 1-based batch index in the prompt. */
  readonly batch: number;
  readonly reason: UnjudgedReason;
}

/** One emitted record of the guard's own telemetry, kept for audits. */
export interface EmittedGuardRecord {
  readonly kind: 'log' | 'metric';
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly body: unknown;
}

export type { AgentTally } from './agent-tallies.js';

/** Result of a replay. */
export interface ReplayResult {
  /** Every reduced batch in decision order, including decision `none`. */
  readonly decisions: readonly BatchDecision[];
  /** Reported decisions of the identical tool-call repetition breaker (warn, abort, end of a warned run). */
  readonly repetition: readonly RepetitionDecisionRecord[];
  /**
   * Batches not judged on their outcomes, with why (see {@link UnjudgedReason}): final batches that
   * ended the turn first, and batches none of whose calls has its terminal record.
   */
  readonly unjudgedBatches: readonly UnjudgedBatch[];
  /** Prompts evicted before they ended (idle or capacity): their later batches were not judged. */
  readonly evictions: readonly { readonly promptId: string; readonly reason: string }[];
  /** The in-tree guard's own events found in the input. */
  readonly inTree: readonly InTreeGuardEvent[];
  /** What the guard emitted (logs and metric data points). */
  readonly emitted: readonly EmittedGuardRecord[];
  readonly spanCount: number;
  readonly logCount: number;
  /**
   * The profile the records were replayed with; with several in use (`profiles`), the first of
   * them; `qwen-code` when `auto` recognised no producer.
   */
  readonly profile: WireProfileName;
  /**
   * Every profile that read records, in precedence order: with `auto`, each producer's (Resource's)
   * own (empty when no producer was recognised); else the one asked for.
   */
  readonly profiles: readonly WireProfileName[];
  /** The built-in profiles the records look like, most specific first (may be empty). */
  readonly detectedProfiles: readonly WireProfileName[];
  /** Prompts and batches judged by each profile that judged any, in precedence order. */
  readonly agents: readonly AgentTally[];
  /**
   * With `auto`: producers no profile recognised, named by `service.name` and scope names (never
   * values), with their record counts; their records were not judged.
   */
  readonly unread: readonly UnreadProducerCount[];
  /** Namespace of the guard's emitted names (the profile's own unless configured). */
  readonly namespace: string;
  /**
   * Every namespace the guard's telemetry may carry: `namespace` and, under `auto` with none
   * configured, the namespace of each profile in `profiles` (each agent's telemetry under its own).
   * Absent: `namespace` alone.
   */
  readonly namespaces?: readonly string[];
  /**
   * Spans that end before they start (a clock step between the two reads, opentelemetry-js#3330).
   * They are replayed as ending when they start; the terminal record decides the call's outcome.
   */
  readonly clockAnomalies: number;
  readonly lateRecords: number;
  /**
   * The Phase 1 invariants this input cannot show a violation of (id → reason), from the profile's
   * registry entry and the input's spans: `auditInvariants` reports them `not checkable`. Absent: none.
   */
  readonly notCheckable?: Readonly<Record<string, string>>;
  /** What failures with no type were under (the option given): `auditInvariants` and the summary read it. Absent: `ineligible`. */
  readonly untypedFailures?: UntypedFailurePolicy;
  /** What the profile's wire cannot show the guard (fixed sentences). Absent: nothing known. */
  readonly blindSpots?: readonly string[];
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
function timeline(records: RecordBatch): { events: TimedEvent[]; clockAnomalies: number } {
  const events: TimedEvent[] = [];
  let seq = 0;
  let clockAnomalies = 0;
  for (const span of records.spans) {
    const start = hrTimeToMillis(span.startTime);
    const end = hrTimeToMillis(span.endTime);
    if (end < start) clockAnomalies += 1;
    events.push({ t: start, order: 1, seq: seq++, span });
    events.push({ t: Math.max(start, end), order: 2, seq: seq++, span });
  }
  for (const log of records.logs) events.push({ t: hrTimeToMillis(log.hrTime), order: 0, seq: seq++, log });
  events.sort((a, b) => a.t - b.t || a.order - b.order || a.seq - b.seq);
  return { events, clockAnomalies };
}

const NO_TICKS = new Float64Array(0);

function sameOptions(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

interface Routing {
  readonly profiles: readonly WireProfileName[];
  readonly producerProfiles: ReadonlyMap<string, WireProfileName> | undefined;
}

/**
 * What `auto` reads `records` with: each producer's profile (as `parseReplayInput` finds them).
 * Records projected for one profile carry only the whole input's detection: its first, which the
 * caller checks against the projection's profile.
 */
function autoRouting(records: RecordBatch, whole: WholeInputFacts | undefined): Routing {
  if (whole !== undefined) return whole.auto ? whole : { profiles: whole.detectedProfiles.slice(0, 1), producerProfiles: undefined };
  const samples = new Map<string, TelemetrySampleBuilder>();
  const sampleOf = (r: ResourceView | undefined): TelemetrySampleBuilder => {
    const key = resourceKey(r);
    let b = samples.get(key);
    if (b === undefined) samples.set(key, (b = new TelemetrySampleBuilder()));
    return b;
  };
  for (const s of records.spans) sampleOf(s.resource).addSpan(s);
  // The guard's own records are no producer's (the guard never reads them).
  for (const l of records.logs) if (l.instrumentationScope.name !== INSTRUMENTATION_SCOPE_NAME) sampleOf(l.resource).addLog(l);
  const { producers, profiles } = producerProfiles(new Map([...samples].map(([k, b]) => [k, b.sample()])));
  const allRecognised = producers.size === samples.size;
  return { profiles, producerProfiles: profiles.length === 1 && allRecognised ? undefined : producers };
}

/**
 * Replay records through a fresh guard (span processor, log-record processor and engine exactly
 * as registered in-process) and collect the decisions.
 *
 * @param records - whole records (`parseTelemetryText`), or records projected for one profile by
 *   `parseReplayInput` (the CLI's path): those replay with the profile they were projected for,
 *   on the same virtual clock, to the same result
 * @throws Error when `records` were projected for another profile or other `batchSpan` options than
 *   `options` resolve to
 */
export async function replayRecords(records: RecordBatch | ProjectedRecordBatch, options: ReplayOptions = {}): Promise<ReplayResult> {
  const whole = isProjectedRecordBatch(records) ? records.whole : undefined;
  const inTree = whole === undefined ? inTreeGuardEvents(records.logs) : whole.inTree;
  const detectedProfiles = whole === undefined ? detectWireProfiles(sampleTelemetry(records.spans, records.logs)) : whole.detectedProfiles;
  const auto = options.profile === undefined || options.profile === 'auto';
  const routing = auto ? autoRouting(records, whole) : undefined;
  const profile = routing === undefined ? (options.profile as WireProfileName) : (routing.profiles[0] ?? 'qwen-code');
  const profiles = routing === undefined ? [profile] : routing.profiles;
  // Several agents in one input: every producer's records read by its own profile.
  const producers = routing?.producerProfiles;
  const batchSpan = options.batchSpan ?? whole?.batchSpan;
  if (whole !== undefined) {
    if (profile !== whole.profile) throw new Error(`replayRecords: the records were projected for profile ${whole.profile}, not ${profile}`);
    if (!auto && whole.producerProfiles !== undefined) {
      throw new Error(`replayRecords: the records were projected for profiles ${whole.profiles.join(', ')} (auto), not ${profile} alone`);
    }
    if (profiles.includes('batch-span') && !sameOptions(batchSpan, whole.batchSpan)) {
      throw new Error('replayRecords: the records were projected for other batch-span options');
    }
  }
  let now = 0;
  const logExporter = new InMemoryLogRecordExporter();
  const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: logExporter })] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 2_147_483_647 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const guard = new RepeatedToolFailureGuard({
    mode: options.mode ?? 'shadow',
    ...(producers === undefined
      ? { profile }
      : {
          profile: 'auto',
          producers: new ProducerRecognizer({ producerProfile: (r: ResourceView | undefined) => producers.get(resourceKey(r)) }),
          // One agent beside producers none reads: its own names.
          ...(profiles.length === 1 ? { namespace: WIRE_PROFILES[profile].defaultNamespace } : {}),
        }),
    batchSpan,
    untypedFailures: options.untypedFailures,
    clock: () => now,
    controlHookRequired: false,
    sweepIntervalMillis: 0,
    meterProvider,
    loggerProvider,
  });
  const decisions: BatchDecision[] = [];
  const repetition: RepetitionDecisionRecord[] = [];
  const unjudgedBatches: UnjudgedBatch[] = [];
  const evictions: { promptId: string; reason: string }[] = [];
  const agents = new AgentTallies();
  guard.addListener({
    onDecision: (d) => {
      decisions.push(d);
      agents.add(guard.profileOfPrompt(d.promptId) ?? profile, d);
    },
    onRepetitionDecision: (r) => repetition.push(r),
    onUnjudgedBatch: (promptId, reason, batch) => unjudgedBatches.push({ promptId, batch, reason }),
    onEviction: (promptId, reason) => evictions.push({ promptId, reason }),
  });
  if (options.mode === undefined) {
    for (const e of inTree) if (e.mode !== undefined) guard.engine.setPromptMode(e.promptId, e.mode);
  }
  const { events, clockAnomalies } = timeline(records);
  // The times of records the projection dropped: the clock advances over them as over the others.
  const ticks = whole?.clockTicks ?? NO_TICKS;
  const total = events.length + ticks.length;
  const every = options.progressEvery ?? 5000;
  const onProgress = options.onProgress;
  const sweepEvery = guard.options.sweepIntervalMillis || 60_000;
  let nextSweep = Number.NEGATIVE_INFINITY;
  let done = 0;
  let ti = 0;
  const advance = (t: number): void => {
    now = t;
    if (now >= nextSweep) {
      if (nextSweep !== Number.NEGATIVE_INFINITY) guard.sweep();
      nextSweep = now + sweepEvery;
    }
  };
  const tick = (): void => {
    advance(ticks[ti++] as number);
    done++;
    if (onProgress !== undefined && done % every === 0) onProgress(done, total);
  };
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as TimedEvent;
    while (ti < ticks.length && (ticks[ti] as number) <= e.t) tick();
    advance(e.t);
    if (e.span !== undefined) {
      if (e.order === 1) guard.spanProcessor.onStart(e.span as unknown as Span, ROOT_CONTEXT);
      else guard.spanProcessor.onEnd(e.span as unknown as ReadableSpan);
    } else if (e.log !== undefined) {
      guard.logRecordProcessor.onEmit(e.log as unknown as ReadWriteLogRecord);
    }
    done++;
    if (onProgress !== undefined && done % every === 0) onProgress(done, total);
  }
  while (ti < ticks.length) tick();
  guard.finishAll();
  const lateRecords = guard.engine.lateRecords;
  const unreadNow = guard.unreadProducers();
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
  return {
    decisions,
    repetition,
    unjudgedBatches,
    evictions,
    inTree,
    emitted,
    spanCount: whole === undefined ? records.spans.length : whole.spanCount,
    logCount: whole === undefined ? records.logs.length : whole.logCount,
    lateRecords,
    profile,
    profiles,
    detectedProfiles,
    namespace: guard.options.namespace,
    namespaces: [
      ...new Set([
        guard.options.namespace,
        ...(guard.options.profile === 'auto' && !guard.options.namespaceGiven ? profiles.map((p) => (WIRE_PROFILES[p] as WireProfileDefinition).defaultNamespace) : []),
      ]),
    ],
    agents: agents.list(),
    unread: whole === undefined ? unreadNow : whole.unread,
    clockAnomalies: whole === undefined ? clockAnomalies : whole.clockAnomalies,
    // Several profiles in use: what any of them cannot check or see.
    notCheckable: Object.assign({}, ...profiles.map((p) => notCheckableFor((WIRE_PROFILES[p] as WireProfileDefinition).notCheckable, records.spans))) as Record<string, string>,
    blindSpots: [...new Set(profiles.flatMap((p) => (WIRE_PROFILES[p] as WireProfileDefinition).blindSpots ?? []))],
    untypedFailures: guard.options.untypedFailures,
  };
}

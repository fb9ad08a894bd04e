/**
 * What `serve --report` keeps while it runs, so that it can write the shadow report at exit or on
 * demand: the guard's decisions and emitted telemetry (for the invariants), the profile's report
 * inputs (usage, call fingerprints, prompt extents; no arguments or results) and the input's ids.
 * Everything is bounded by `maxItems`; what goes beyond is counted, not kept.
 */
import type { UntypedFailurePolicy } from '../core/failure/reducer.js';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { MetricReader } from '@opentelemetry/sdk-metrics';
import type { BatchDecision, EvictionReason } from '../engine/failure-types.js';
import type { RepetitionDecisionRecord } from '../engine/repetition-engine.js';
import type { FailureEngineListener } from '../engine/failure-types.js';
import type { RepetitionListener } from '../engine/repetition-engine.js';
import type { RecordedLog, RecordedSpan } from '../otlp/records.js';
import { mergeReportInputs } from '../profiles/report-inputs.js';
import type { ReportInputs, ReportInputsCollector, ReportInputsOptions, ReportInputsReader } from '../profiles/report-inputs.js';
import type { ResourceView } from '../profiles/wire-profile.js';
import { addLogInputIdentifiers, addSpanInputIdentifiers } from '../replay/audit.js';
import type { InputIdentifiers } from '../replay/audit.js';
import type { AgentTally, EmittedGuardRecord, ReplayResult, UnjudgedBatch } from '../replay/replay.js';
import type { UnreadProducerCount } from '../profiles/router/routing-profile.js';
import type { WireProfileDefinition, WireProfileName } from '../profiles/registry.js';
import { WIRE_PROFILES } from '../profiles/registry.js';

/** Keeps the guard's emitted logs (attributes and body only) for the report's invariants. */
class EmittedLogKeeper implements LogRecordExporter {
  readonly records: EmittedGuardRecord[] = [];
  private readonly _max: number;
  dropped = 0;

  constructor(max: number) {
    this._max = max;
  }

  export(records: ReadableLogRecord[], done: (r: ExportResult) => void): void {
    for (const r of records) {
      if (this.records.length >= this._max) {
        this.dropped++;
        continue;
      }
      this.records.push({ kind: 'log', name: String(r.attributes['event.name'] ?? ''), attributes: r.attributes, body: r.body });
    }
    done({ code: ExportResultCode.SUCCESS });
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The parts `renderReportFromParts` needs. */
export interface ServeReportParts {
  readonly result: ReplayResult;
  readonly inputs: ReportInputs;
  readonly ids: InputIdentifiers;
}

/** Collects the report's parts inside `serve`. */
export class ServeReportCollector {
  /** Register on the guard (`guard.addListener`). */
  readonly listener: FailureEngineListener & RepetitionListener;
  /** Add to the guard's logger provider (a `SimpleLogRecordProcessor` over it). */
  readonly logExporter: EmittedLogKeeper;
  /** Collectors by agent (profile); the server's own profile's is made at once. */
  private readonly _inputs = new Map<WireProfileName, ReportInputsCollector | undefined>();
  private readonly _profileOf: ((resource: ResourceView | undefined) => WireProfileName | undefined) | undefined;
  private readonly _reportInputs: ReportInputsOptions | undefined;
  private readonly _ids = { promptIds: new Set<string>(), sessionIds: new Set<string>() };
  private readonly _repetition: RepetitionDecisionRecord[] = [];
  private readonly _unjudged: UnjudgedBatch[] = [];
  private readonly _evictions: { promptId: string; reason: EvictionReason }[] = [];
  private readonly _max: number;
  private readonly _profile: WireProfileName;
  private readonly _untypedFailures: UntypedFailurePolicy | undefined;
  private _spans = 0;
  private _logs = 0;

  /**
   * @param profile - the server's wire profile
   * @param reader - the profile's report-input reader; `undefined` collects no usage
   * @param maxItems - records of each kind kept. @defaultValue `1000000`
   * @param routing - under `auto`: the profile that reads a record's producer (each agent's usage is
   *   then read by its own profile's reader), and the owner and cohort attributes
   */
  constructor(
    profile: WireProfileName,
    reader: ReportInputsReader | undefined,
    maxItems = 1_000_000,
    routing: {
      readonly profileOf?: (resource: ResourceView | undefined) => WireProfileName | undefined;
      readonly reportInputs?: ReportInputsOptions;
      /** The server's `untypedFailures` option (the report's invariants and wording read it). */
      readonly untypedFailures?: UntypedFailurePolicy;
    } = {},
  ) {
    this._profile = profile;
    this._untypedFailures = routing.untypedFailures;
    this._max = maxItems;
    this._profileOf = routing.profileOf;
    this._reportInputs = routing.reportInputs;
    if (this._profileOf === undefined) this._inputs.set(profile, reader?.(routing.reportInputs));
    this.logExporter = new EmittedLogKeeper(maxItems);
    const keep = <T>(list: T[], item: T): void => {
      if (list.length < this._max) list.push(item);
    };
    this.listener = {
      onRepetitionDecision: (r) => keep(this._repetition, r),
      onUnjudgedBatch: (promptId, reason, batch) => keep(this._unjudged, { promptId, batch, reason }),
      onEviction: (promptId, reason) => keep(this._evictions, { promptId, reason }),
    };
  }

  /** A finished span as it is released to the guard. */
  addSpan(span: RecordedSpan): void {
    this._spans++;
    if (this._ids.promptIds.size < this._max) addSpanInputIdentifiers(span, this._ids);
    this._collector(span.resource)?.addSpan(span);
  }

  /** A log record as it is released to the guard. */
  addLog(log: RecordedLog): void {
    this._logs++;
    if (this._ids.promptIds.size < this._max) addLogInputIdentifiers(log, this._ids);
    this._collector(log.resource)?.addLog(log);
  }

  /** The collector of a record's agent: the server's profile, or under `auto` its producer's. */
  private _collector(resource: ResourceView | undefined): ReportInputsCollector | undefined {
    const profile = this._profileOf === undefined ? this._profile : this._profileOf(resource);
    if (profile === undefined) return undefined;
    if (!this._inputs.has(profile)) this._inputs.set(profile, (WIRE_PROFILES[profile] as WireProfileDefinition).readReportInputs?.(this._reportInputs));
    return this._inputs.get(profile);
  }

  /**
   * The report's parts now.
   *
   * @param decisions - every batch decision so far
   * @param metrics - the guard's metric reader (its current data points join the audit)
   * @param lateRecords - records dropped as late
   * @param clockAnomalies - spans that ended before they started
   * @param agents - prompts and batches judged by each profile
   * @param unread - producers no profile read
   */
  async parts(
    decisions: readonly BatchDecision[],
    metrics: MetricReader,
    lateRecords: number,
    clockAnomalies: number,
    agents: readonly AgentTally[] = [],
    unread: readonly UnreadProducerCount[] = [],
  ): Promise<ServeReportParts> {
    const emitted: EmittedGuardRecord[] = [...this.logExporter.records];
    try {
      const { resourceMetrics } = await metrics.collect();
      for (const sm of resourceMetrics.scopeMetrics) {
        for (const m of sm.metrics) for (const dp of m.dataPoints) emitted.push({ kind: 'metric', name: m.descriptor.name, attributes: dp.attributes, body: undefined });
      }
    } catch {
      // A reader already shut down has nothing more to say; the logs still count.
    }
    return {
      result: {
        decisions,
        repetition: this._repetition,
        unjudgedBatches: this._unjudged,
        evictions: this._evictions,
        inTree: [],
        emitted,
        spanCount: this._spans,
        logCount: this._logs,
        lateRecords,
        clockAnomalies,
        profile: this._profile,
        profiles: this._profileOf === undefined ? [this._profile] : [...this._inputs.keys()],
        agents,
        unread,
        detectedProfiles: [this._profile],
        namespace: WIRE_PROFILES[this._profile].defaultNamespace,
        // Under auto, each agent's telemetry carries its own profile's namespace.
        namespaces: [...new Set([this._profile, ...agents.map((a) => a.profile)].map((p) => (WIRE_PROFILES[p] as WireProfileDefinition).defaultNamespace))],
        untypedFailures: this._untypedFailures,
      },
      inputs: mergeReportInputs([...this._inputs].flatMap(([agent, c]) => (c === undefined ? [] : [{ agent, inputs: c.finish() }]))),
      ids: this._ids,
    };
  }
}

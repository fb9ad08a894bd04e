/**
 * What `replay` reads of telemetry files. Every object is parsed (malformed JSON is reported as by
 * `parseTelemetryText`), but a record is kept only as far as the replay reads it: the spans, log
 * events and attribute keys of the profile's reads (the projection `serve` applies at ingest), the
 * time of every other record (it still advances the replay's virtual clock), and the facts the
 * replay and its printout take from the whole input (counts, detection names, the in-tree guard's
 * events, prompt and session ids, and on request the shadow report's inputs). The parsed objects
 * then die young instead of being promoted whole.
 */
import type { InputIdentifiers } from './audit.js';
import { addLogInputIdentifiers, addSpanInputIdentifiers } from './audit.js';
import { RecordFilter } from '../otlp/record-filter.js';
import type { RecordBatch, RecordedLog, RecordedSpan } from '../otlp/records.js';
import { readTelemetryText } from '../otlp/telemetry-file.js';
import type { TelemetryRecordSink, TruncatedEnd } from '../otlp/telemetry-file.js';
import type { BatchSpanProfileOptions } from '../profiles/batch-span/batch-span-profile.js';
import { TelemetrySampleBuilder } from '../profiles/detect.js';
import type { TelemetrySample } from '../profiles/detect.js';
import { resourceKey } from '../profiles/router/producer-recognizer.js';
import { MAX_SCOPES_NAMED } from '../profiles/router/routing-profile.js';
import type { UnreadProducerCount } from '../profiles/router/routing-profile.js';
import { inTreeGuardEvents } from '../profiles/qwen-code/in-tree.js';
import type { InTreeGuardEvent } from '../profiles/qwen-code/in-tree.js';
import { detectWireProfiles, WIRE_PROFILE_PRECEDENCE, WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileDefinition, WireProfileName } from '../profiles/registry.js';
import { emptyReportInputs, mergeReportInputs } from '../profiles/report-inputs.js';
import type { ReportInputs, ReportInputsCollector, ReportInputsOptions } from '../profiles/report-inputs.js';
import { hrTimeToMillis, INSTRUMENTATION_SCOPE_NAME } from '../profiles/wire-profile.js';
import type { ResourceView } from '../profiles/wire-profile.js';

/** Options of {@link parseReplayInput}. */
export interface ReplayInputOptions {
  /**
   * The profile the input will be replayed with, or `'auto'`: each producer's (each Resource's)
   * records read by the profile `replayRecords` would recognise from all of them (see
   * {@link producerProfiles}).
   * @defaultValue `'auto'`
   */
  readonly profile?: WireProfileName | 'auto';
  /** Options of the `batch-span` profile (they name what it reads). */
  readonly batchSpan?: BatchSpanProfileOptions;
  /**
   * Also collect the shadow report's inputs from the whole records (for `renderReportFromParts`;
   * `renderReport` would read them from the kept records, which lack what only the report reads).
   * @defaultValue `false`
   */
  readonly reportInputs?: boolean;
  /** The owner and cohort attributes the report's inputs read (`ReportInputsOptions`). */
  readonly reportInputsOptions?: ReportInputsOptions;
  /**
   * Called for a file whose last object is cut short (half-written): the objects before it are
   * replayed. Without it such a file is a `TelemetryParseError`. (Called once per file and read.)
   */
  readonly onTruncatedEnd?: (cut: TruncatedEnd) => void;
}

/** One telemetry file's contents and the name used for it in error messages. */
export interface TelemetrySource {
  /**
   * The file's text, or its bytes as read from disk (UTF-8): the CLI passes bytes, which are
   * decoded one object at a time (see `readTelemetryText`).
   */
  readonly text: string | Uint8Array;
  readonly file: string;
}

/**
 * A telemetry file the reader loads when it reaches it (the CLI's files: one file's bytes held at
 * a time; `input-files.ts` decompresses gzip and zstd).
 */
export interface LazyTelemetrySource {
  /** Read (and decompress) the file now; called once per read of the input. */
  load(): Uint8Array;
  readonly file: string;
}

/** What the replay takes from the whole input, gathered from every record before projection. */
export interface WholeInputFacts {
  /** The profile the records were projected for (what `replayRecords` must replay them with). */
  readonly profile: WireProfileName;
  /**
   * The profiles that read the input, in precedence order: the one given, or with `auto` each
   * producer's (empty when no producer was recognised: then `profile` is `qwen-code`, as before).
   */
  readonly profiles: readonly WireProfileName[];
  /** Whether the projection was asked for `auto` (each producer's profile) or for one profile. */
  readonly auto: boolean;
  /**
   * With `auto`, unless one profile recognised every producer: each producer's profile, by
   * `resourceKey` of its Resource (records of producers absent here were not kept).
   * `undefined`: `profile` reads every record.
   */
  readonly producerProfiles: ReadonlyMap<string, WireProfileName> | undefined;
  /**
   * With `auto`: producers no profile recognises (their records were not kept), named by
   * `service.name` and scope names, never values, with their record counts.
   */
  readonly unread: readonly UnreadProducerCount[];
  /** The `batch-span` options the projection used. */
  readonly batchSpan: BatchSpanProfileOptions | undefined;
  /** The built-in profiles the whole input looks like, most specific first (may be empty). */
  readonly detectedProfiles: readonly WireProfileName[];
  /** Spans in the input (kept or not). */
  readonly spanCount: number;
  /** Log records in the input (kept or not). */
  readonly logCount: number;
  /** Spans of the input that end before they start. */
  readonly clockAnomalies: number;
  /**
   * Times, in milliseconds since the epoch and ascending, of the records not kept (a span's start
   * and its end, a log record's time): replay advances its virtual clock over them as over the
   * kept records, so idle sweeps run exactly when they would with every record.
   */
  readonly clockTicks: Float64Array;
  /** The in-tree guard's events of the whole input (`inTreeGuardEvents`). */
  readonly inTree: readonly InTreeGuardEvent[];
  /** The prompt and session ids of the whole input (`inputIdentifiers`). */
  readonly identifiers: InputIdentifiers;
  /** The shadow report's inputs of the whole input, when {@link ReplayInputOptions.reportInputs} asked for them. */
  readonly reportInputs: ReportInputs | undefined;
}

/**
 * Records projected for one profile (only what it reads), with the facts of the whole input.
 * `replayRecords` replays it exactly as it would replay every record whole, with the profile it
 * was projected for; `spans` and `logs` alone are not the whole input (counts, ids, the in-tree
 * events and report inputs are in {@link ProjectedRecordBatch.whole}).
 */
export interface ProjectedRecordBatch extends RecordBatch {
  readonly whole: WholeInputFacts;
}

/** Whether `records` came from {@link parseReplayInput}. */
export function isProjectedRecordBatch(records: RecordBatch): records is ProjectedRecordBatch {
  const whole = (records as Partial<ProjectedRecordBatch>).whole;
  return typeof whole === 'object' && whole !== null && whole.clockTicks instanceof Float64Array;
}

/** Whether `inTreeGuardEvents` takes a log record of this event name (probed once per name). */
function isInTreeEventName(name: string): boolean {
  const probe: RecordedLog = {
    hrTime: [0, 0],
    attributes: { 'event.name': name, prompt_id: 'p', decision: 'd' },
    spanContext: undefined,
    eventName: name,
    instrumentationScope: { name: '' },
    body: undefined,
    resource: undefined,
  };
  return inTreeGuardEvents([probe]).length > 0;
}

/** One producer's (one Resource's) records as read: its names, its profile once known, what waits for it. */
interface ProducerInput {
  readonly sample: TelemetrySampleBuilder;
  sampleSizeSeen: number;
  /** Records seen before the profile was known, and when to try recognition next. */
  undecided: number;
  nextDetection: number;
  profile: WireProfileName | undefined;
  filter: RecordFilter | undefined;
  pendingSpans: RecordedSpan[];
  pendingLogs: RecordedLog[];
}

/**
 * How records are assigned to profiles: one profile for all (`--profile`), or `auto` with each
 * producer's profile recognised as its records come (`fixed` undefined), or fixed per producer
 * from a first read of the whole input.
 */
type Assignment =
  | { readonly kind: 'one'; readonly profile: WireProfileName }
  | { readonly kind: 'auto'; readonly fixed: ReadonlyMap<string, WireProfileName> | undefined };

/**
 * The profile each producer's records go to, from each producer's names over the whole input:
 * the first profile that recognises it (see `detectWireProfiles`); producers none recognises are
 * absent. Then the profiles in use, in precedence order.
 */
export function producerProfiles(samples: ReadonlyMap<string, TelemetrySample>): { producers: Map<string, WireProfileName>; profiles: WireProfileName[] } {
  const producers = new Map<string, WireProfileName>();
  for (const [key, sample] of samples) {
    const first = detectWireProfiles(sample)[0];
    if (first !== undefined) producers.set(key, first);
  }
  const inUse = new Set(producers.values());
  return { producers, profiles: WIRE_PROFILE_PRECEDENCE.filter((p) => inUse.has(p)) };
}

/** Reads records, keeps what each producer's profile reads, and gathers the whole input's facts. */
class ProjectingReader implements TelemetryRecordSink {
  private readonly _options: ReplayInputOptions;
  private readonly _assignment: Assignment;
  private readonly _spans: RecordedSpan[] = [];
  private readonly _logs: RecordedLog[] = [];
  private _metricCount = 0;
  private _ignoredCount = 0;
  private _spanCount = 0;
  private _logCount = 0;
  private _clockAnomalies = 0;
  private readonly _ticks: number[] = [];
  private readonly _sample = new TelemetrySampleBuilder();
  private readonly _producers = new Map<string, ProducerInput>();
  private readonly _ids = { promptIds: new Set<string>(), sessionIds: new Set<string>() };
  private readonly _inTreeLogs: RecordedLog[] = [];
  /** Whether `inTreeGuardEvents` reads log records of an event name, by name. */
  private readonly _inTreeNames = new Map<string, boolean>();
  private readonly _filters = new Map<WireProfileName, RecordFilter>();
  /** The shadow report's collectors, by profile (only profiles with a report reader). */
  private readonly _reports = new Map<WireProfileName, ReportInputsCollector>();
  /** Logs for the report collectors, which read every span before any log (as `readReportInputs`). */
  private readonly _reportLogs: { readonly profile: WireProfileName; readonly log: RecordedLog }[] = [];

  constructor(options: ReplayInputOptions, assignment: Assignment) {
    this._options = options;
    this._assignment = assignment;
  }

  span(s: RecordedSpan): void {
    this._spanCount++;
    if (hrTimeToMillis(s.endTime) < hrTimeToMillis(s.startTime)) this._clockAnomalies++;
    this._sample.addSpan(s);
    addSpanInputIdentifiers(s, this._ids);
    const p = this._producer(s.resource);
    p.sample.addSpan(s);
    if (p.filter === undefined) {
      p.pendingSpans.push(s);
      this._detect(p);
    } else {
      this._keepSpan(s, p.profile as WireProfileName, p.filter);
    }
  }

  log(l: RecordedLog): void {
    this._logCount++;
    this._sample.addLog(l);
    addLogInputIdentifiers(l, this._ids);
    // Candidates for the in-tree guard's events (`inTreeGuardEvents` of them all decides at the end).
    const name = l.attributes['event.name'] ?? l.eventName;
    if (typeof name === 'string' && this._isInTreeEventName(name)) this._inTreeLogs.push(l);
    // The guard's own records (a hook's exported telemetry in the same capture) are no producer's:
    // the guard never reads them.
    if (this._assignment.kind === 'auto' && l.instrumentationScope.name === INSTRUMENTATION_SCOPE_NAME) {
      this._ticks.push(hrTimeToMillis(l.hrTime));
      return;
    }
    const p = this._producer(l.resource);
    p.sample.addLog(l);
    if (p.filter === undefined) {
      p.pendingLogs.push(l);
      this._detect(p);
    } else {
      this._keepLog(l, p.profile as WireProfileName, p.filter);
    }
  }

  metrics(count: number): void {
    this._metricCount += count;
  }

  ignored(): void {
    this._ignoredCount++;
  }

  /**
   * The projected batch, or, with `auto`, each producer's profile over the whole input when one
   * differs from what its first records looked like (then the input must be read again with them).
   */
  finish(): ProjectedRecordBatch | Map<string, WireProfileName> {
    const detectedProfiles = detectWireProfiles(this._sample.sample());
    const samples = new Map<string, TelemetrySample>();
    for (const [key, p] of this._producers) samples.set(key, p.sample.sample());
    const { producers, profiles } = producerProfiles(samples);
    const a = this._assignment;
    if (a.kind === 'auto' && a.fixed === undefined) {
      for (const [key, p] of this._producers) {
        if (p.profile !== undefined && p.profile !== producers.get(key)) return producers;
      }
    }
    // Producers no profile recognises: read by none (named in `unread`), unless one profile was asked for.
    const unread: UnreadProducerCount[] = [];
    for (const [key, p] of this._producers) {
      if (p.filter !== undefined) continue;
      const profile = a.kind === 'one' ? a.profile : producers.get(key);
      if (profile !== undefined) this._decide(p, profile);
      else {
        for (const s of p.pendingSpans) this._tickSpan(s);
        for (const l of p.pendingLogs) this._ticks.push(hrTimeToMillis(l.hrTime));
        const sample = p.sample.sample();
        unread.push({
          serviceName: sample.serviceNames.values().next().value,
          scopeName: undefined,
          scopeNames: [...sample.scopeNames].slice(0, MAX_SCOPES_NAMED),
          records: p.pendingSpans.length + p.pendingLogs.length,
          spans: p.pendingSpans.length,
        });
        p.pendingSpans = [];
        p.pendingLogs = [];
      }
    }
    const profile = a.kind === 'one' ? a.profile : (profiles[0] ?? 'qwen-code');
    let reportInputs: ReportInputs | undefined;
    if (this._options.reportInputs === true) {
      for (const { profile: p, log } of this._reportLogs) this._reports.get(p)?.addLog(log);
      // Every agent's inputs, each prompt tagged with its agent (profile).
      reportInputs = this._reports.size === 0 ? emptyReportInputs() : mergeReportInputs([...this._reports].map(([agent, c]) => ({ agent, inputs: c.finish() })));
    }
    const clockTicks = Float64Array.from(this._ticks).sort();
    return {
      spans: this._spans,
      logs: this._logs,
      metricCount: this._metricCount,
      ignoredCount: this._ignoredCount,
      whole: {
        profile,
        auto: a.kind === 'auto',
        profiles: a.kind === 'one' ? [a.profile] : profiles,
        producerProfiles: a.kind === 'one' || (profiles.length === 1 && unread.length === 0) ? undefined : producers,
        unread,
        batchSpan: this._options.batchSpan,
        detectedProfiles,
        spanCount: this._spanCount,
        logCount: this._logCount,
        clockAnomalies: this._clockAnomalies,
        clockTicks,
        inTree: inTreeGuardEvents(this._inTreeLogs),
        identifiers: this._ids,
        reportInputs,
      },
    };
  }

  private _producer(resource: ResourceView | undefined): ProducerInput {
    const key = resourceKey(resource);
    let p = this._producers.get(key);
    if (p === undefined) {
      p = {
        sample: new TelemetrySampleBuilder(),
        sampleSizeSeen: 0,
        undecided: 0,
        nextDetection: 1,
        profile: undefined,
        filter: undefined,
        pendingSpans: [],
        pendingLogs: [],
      };
      this._producers.set(key, p);
      const a = this._assignment;
      const profile = a.kind === 'one' ? a.profile : a.fixed?.get(key);
      if (profile !== undefined) this._decide(p, profile);
    }
    return p;
  }

  private _isInTreeEventName(name: string): boolean {
    let inTree = this._inTreeNames.get(name);
    if (inTree === undefined) this._inTreeNames.set(name, (inTree = isInTreeEventName(name)));
    return inTree;
  }

  /**
   * With `auto`, take the profile a producer's records so far look like, once they look like one.
   * Tried after 1, 2, 4, 8, ... of its records (when new names came), so that a producer no
   * profile recognises is not checked again for every new name.
   */
  private _detect(p: ProducerInput): void {
    if (this._assignment.kind !== 'auto' || this._assignment.fixed !== undefined) return;
    p.undecided++;
    if (p.undecided < p.nextDetection || p.sample.size === p.sampleSizeSeen) return;
    p.nextDetection = p.undecided * 2;
    p.sampleSizeSeen = p.sample.size;
    const found = detectWireProfiles(p.sample.sample());
    if (found.length > 0) this._decide(p, found[0] as WireProfileName);
  }

  private _decide(p: ProducerInput, profile: WireProfileName): void {
    p.profile = profile;
    const filter = this._filter(profile);
    p.filter = filter;
    const spans = p.pendingSpans;
    const logs = p.pendingLogs;
    p.pendingSpans = [];
    p.pendingLogs = [];
    for (const s of spans) this._keepSpan(s, profile, filter);
    for (const l of logs) this._keepLog(l, profile, filter);
  }

  private _filter(profile: WireProfileName): RecordFilter {
    let filter = this._filters.get(profile);
    if (filter === undefined) {
      const definition: WireProfileDefinition = WIRE_PROFILES[profile];
      filter = new RecordFilter(definition.reads?.({ batchSpan: this._options.batchSpan }));
      this._filters.set(profile, filter);
      const report = this._options.reportInputs === true ? definition.readReportInputs?.(this._options.reportInputsOptions) : undefined;
      if (report !== undefined) this._reports.set(profile, report);
    }
    return filter;
  }

  private _keepSpan(s: RecordedSpan, profile: WireProfileName, filter: RecordFilter): void {
    this._reports.get(profile)?.addSpan(s);
    const kept = filter.span(s);
    if (kept !== undefined) this._spans.push(kept);
    else this._tickSpan(s);
  }

  private _tickSpan(s: RecordedSpan): void {
    const start = hrTimeToMillis(s.startTime);
    this._ticks.push(start, Math.max(start, hrTimeToMillis(s.endTime)));
  }

  private _keepLog(l: RecordedLog, profile: WireProfileName, filter: RecordFilter): void {
    if (this._reports.has(profile)) {
      this._reportLogs.push({
        profile,
        log: {
          hrTime: l.hrTime,
          attributes: l.attributes,
          spanContext: l.spanContext,
          eventName: l.eventName,
          instrumentationScope: l.instrumentationScope,
          body: undefined,
          resource: l.resource,
        },
      });
    }
    const kept = filter.log(l);
    if (kept !== undefined) this._logs.push(kept);
    else this._ticks.push(hrTimeToMillis(l.hrTime));
  }
}

/**
 * Read telemetry files for `replayRecords` as the CLI does: every object is parsed and checked, but
 * only what the profile reads is kept (see {@link ProjectedRecordBatch}). Replaying the result
 * gives the same decisions, unjudged batches, evictions, in-tree events, counts and emitted
 * telemetry as replaying `parseTelemetryText` of the same sources, with much less held.
 *
 * With `profile: 'auto'` each producer's profile is taken from its first records that look like
 * one; if a producer's whole records then look like another profile, the sources are read a second
 * time with every producer's profile fixed.
 *
 * @param sources - the files' contents (text or UTF-8 bytes), in order (as if concatenated into one batch)
 * @param options - the profile (default `auto`), `batch-span` options, and whether to collect the
 *   shadow report's inputs
 * @returns the kept records and {@link WholeInputFacts}
 * @throws {@link TelemetryParseError} for malformed JSON (with the file, line and column of the
 *   object that holds it) or a source with no telemetry at all
 */
export function parseReplayInput(sources: readonly (TelemetrySource | LazyTelemetrySource)[], options: ReplayInputOptions = {}): ProjectedRecordBatch {
  const read = (assignment: Assignment): ProjectedRecordBatch | Map<string, WireProfileName> => {
    const reader = new ProjectingReader(options, assignment);
    for (const s of sources) readTelemetryText('text' in s ? s.text : s.load(), s.file, reader, { onTruncatedEnd: options.onTruncatedEnd });
    return reader.finish();
  };
  const first = read(options.profile === undefined || options.profile === 'auto' ? { kind: 'auto', fixed: undefined } : { kind: 'one', profile: options.profile });
  if (!(first instanceof Map)) return first;
  // Only with `auto`: a producer's first records looked like one profile, all of them like another.
  const again = read({ kind: 'auto', fixed: first });
  if (again instanceof Map) throw new Error('parseReplayInput: the detected profiles changed between two reads of the same input');
  return again;
}

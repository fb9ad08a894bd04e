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
import { addInputIdentifiers, addSpanInputIdentifiers } from './audit.js';
import { RecordFilter } from '../otlp/record-filter.js';
import type { RecordBatch, RecordedLog, RecordedSpan } from '../otlp/records.js';
import { readTelemetryText } from '../otlp/telemetry-file.js';
import type { TelemetryRecordSink } from '../otlp/telemetry-file.js';
import type { BatchSpanProfileOptions } from '../profiles/batch-span/batch-span-profile.js';
import { TelemetrySampleBuilder } from '../profiles/detect.js';
import { inTreeGuardEvents } from '../profiles/qwen-code/in-tree.js';
import type { InTreeGuardEvent } from '../profiles/qwen-code/in-tree.js';
import { detectWireProfiles, WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileDefinition, WireProfileName } from '../profiles/registry.js';
import { emptyReportInputs } from '../profiles/report-inputs.js';
import type { ReportInputs, ReportInputsCollector } from '../profiles/report-inputs.js';
import { hrTimeToMillis } from '../profiles/wire-profile.js';

/** Options of {@link parseReplayInput}. */
export interface ReplayInputOptions {
  /**
   * The profile the input will be replayed with, or `'auto'`: the profile `replayRecords` would
   * detect from the whole input (the first of `detectWireProfiles`, else `qwen-code`).
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

/** What the replay takes from the whole input, gathered from every record before projection. */
export interface WholeInputFacts {
  /** The profile the records were projected for (what `replayRecords` must replay them with). */
  readonly profile: WireProfileName;
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

/** Reads records, keeps what one profile reads, and gathers the whole input's facts. */
class ProjectingReader implements TelemetryRecordSink {
  private readonly _options: ReplayInputOptions;
  private readonly _spans: RecordedSpan[] = [];
  private readonly _logs: RecordedLog[] = [];
  private _metricCount = 0;
  private _ignoredCount = 0;
  private _spanCount = 0;
  private _logCount = 0;
  private _clockAnomalies = 0;
  private readonly _ticks: number[] = [];
  private readonly _sample = new TelemetrySampleBuilder();
  private _sampleSizeSeen = 0;
  /** Records seen before the profile was known, and when to try detection next. */
  private _undecided = 0;
  private _nextDetection = 1;
  private readonly _ids = { promptIds: new Set<string>(), sessionIds: new Set<string>() };
  private readonly _inTreeLogs: RecordedLog[] = [];
  /** Whether `inTreeGuardEvents` reads log records of an event name, by name. */
  private readonly _inTreeNames = new Map<string, boolean>();
  /** The profile, once known; until then records are held whole in `_pending*`. */
  private _profile: WireProfileName | undefined;
  private _filter: RecordFilter | undefined;
  private _pendingSpans: RecordedSpan[] = [];
  private _pendingLogs: RecordedLog[] = [];
  private _report: ReportInputsCollector | undefined;
  /** Logs for the report collector, which reads every span before any log (as `readReportInputs`). */
  private readonly _reportLogs: RecordedLog[] = [];

  constructor(options: ReplayInputOptions, profile: WireProfileName | undefined) {
    this._options = options;
    if (profile !== undefined) this._decide(profile);
  }

  span(s: RecordedSpan): void {
    this._spanCount++;
    if (hrTimeToMillis(s.endTime) < hrTimeToMillis(s.startTime)) this._clockAnomalies++;
    this._sample.addSpan(s);
    addSpanInputIdentifiers(s, this._ids);
    if (this._filter === undefined) {
      this._pendingSpans.push(s);
      this._detect();
    } else {
      this._keepSpan(s, this._filter);
    }
  }

  log(l: RecordedLog): void {
    this._logCount++;
    this._sample.addLog(l);
    addInputIdentifiers(l.attributes, this._ids);
    // Candidates for the in-tree guard's events (`inTreeGuardEvents` of them all decides at the end).
    const name = l.attributes['event.name'] ?? l.eventName;
    if (typeof name === 'string' && this._isInTreeEventName(name)) this._inTreeLogs.push(l);
    if (this._filter === undefined) {
      this._pendingLogs.push(l);
      this._detect();
    } else {
      this._keepLog(l, this._filter);
    }
  }

  metrics(count: number): void {
    this._metricCount += count;
  }

  ignored(): void {
    this._ignoredCount++;
  }

  /**
   * The projected batch, or the profile the whole input detects as when it is not the one the
   * first records looked like (then the input must be read again for that profile).
   */
  finish(): ProjectedRecordBatch | WireProfileName {
    const detectedProfiles = detectWireProfiles(this._sample.sample());
    const detected = detectedProfiles[0] ?? 'qwen-code';
    if (this._profile === undefined) this._decide(detected);
    else if (this._options.profile === undefined || this._options.profile === 'auto') {
      if (detected !== this._profile) return detected;
    }
    const profile = this._profile as WireProfileName;
    let reportInputs: ReportInputs | undefined;
    if (this._options.reportInputs === true) {
      const report = this._report;
      if (report === undefined) reportInputs = emptyReportInputs();
      else {
        for (const l of this._reportLogs) report.addLog(l);
        reportInputs = report.finish();
      }
    }
    const clockTicks = Float64Array.from(this._ticks).sort();
    return {
      spans: this._spans,
      logs: this._logs,
      metricCount: this._metricCount,
      ignoredCount: this._ignoredCount,
      whole: {
        profile,
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

  private _isInTreeEventName(name: string): boolean {
    let inTree = this._inTreeNames.get(name);
    if (inTree === undefined) this._inTreeNames.set(name, (inTree = isInTreeEventName(name)));
    return inTree;
  }

  /**
   * With `auto`, take the profile the records so far look like, once they look like one. Tried after
   * 1, 2, 4, 8, ... records (when new names came), so that input no profile recognises is not
   * checked again for every new name.
   */
  private _detect(): void {
    this._undecided++;
    if (this._undecided < this._nextDetection || this._sample.size === this._sampleSizeSeen) return;
    this._nextDetection = this._undecided * 2;
    this._sampleSizeSeen = this._sample.size;
    const found = detectWireProfiles(this._sample.sample());
    if (found.length > 0) this._decide(found[0] as WireProfileName);
  }

  private _decide(profile: WireProfileName): void {
    const definition: WireProfileDefinition = WIRE_PROFILES[profile];
    this._profile = profile;
    const filter = new RecordFilter(definition.reads?.({ batchSpan: this._options.batchSpan }));
    this._filter = filter;
    if (this._options.reportInputs === true) this._report = definition.readReportInputs?.();
    const spans = this._pendingSpans;
    const logs = this._pendingLogs;
    this._pendingSpans = [];
    this._pendingLogs = [];
    for (const s of spans) this._keepSpan(s, filter);
    for (const l of logs) this._keepLog(l, filter);
  }

  private _keepSpan(s: RecordedSpan, filter: RecordFilter): void {
    this._report?.addSpan(s);
    const kept = filter.span(s);
    if (kept !== undefined) {
      this._spans.push(kept);
    } else {
      const start = hrTimeToMillis(s.startTime);
      this._ticks.push(start, Math.max(start, hrTimeToMillis(s.endTime)));
    }
  }

  private _keepLog(l: RecordedLog, filter: RecordFilter): void {
    if (this._report !== undefined) {
      this._reportLogs.push({
        hrTime: l.hrTime,
        attributes: l.attributes,
        spanContext: l.spanContext,
        eventName: l.eventName,
        instrumentationScope: l.instrumentationScope,
        body: undefined,
        resource: l.resource,
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
 * With `profile: 'auto'` the profile is taken from the first records that look like one; if the
 * whole input then detects as another profile, the sources are read a second time for that one.
 *
 * @param sources - the files' contents (text or UTF-8 bytes), in order (as if concatenated into one batch)
 * @param options - the profile (default `auto`), `batch-span` options, and whether to collect the
 *   shadow report's inputs
 * @returns the kept records and {@link WholeInputFacts}
 * @throws {@link TelemetryParseError} for malformed JSON (with the file, line and column of the
 *   object that holds it) or a source with no telemetry at all
 */
export function parseReplayInput(sources: readonly TelemetrySource[], options: ReplayInputOptions = {}): ProjectedRecordBatch {
  const requested = options.profile === undefined || options.profile === 'auto' ? undefined : options.profile;
  const read = (profile: WireProfileName | undefined): ProjectedRecordBatch | WireProfileName => {
    const reader = new ProjectingReader(options, profile);
    for (const s of sources) readTelemetryText(s.text, s.file, reader);
    return reader.finish();
  };
  const first = read(requested);
  if (typeof first !== 'string') return first;
  // Only with `auto`: the first records looked like one profile, the whole input like another.
  const again = read(first);
  if (typeof again === 'string') throw new Error('parseReplayInput: the detected profile changed between two reads of the same input');
  return again;
}

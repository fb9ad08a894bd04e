/**
 * The compact projection `serve` applies at ingest: only the spans, log events and attributes the
 * profile reads are kept (its {@link WireProfileReads}); everything else (unread spans, prompt and
 * result text, log bodies) is dropped on arrival. Also the byte estimate of what is kept, which the
 * ingest budget counts.
 */
import { OtlpProtobufRecordReader } from '../otlp/otlp-protobuf-reader.js';
import type { OtlpSignal } from '../otlp/otlp.js';
import { RecordFilter } from '../otlp/record-filter.js';
import type { RequestLimits } from '../otlp/request-limit.js';
import type { RecordBatch, RecordedLog, RecordedSpan } from '../otlp/records.js';
import type { WireProfileReads } from '../profiles/wire-profile.js';
import type { WireProfileName } from '../profiles/registry.js';
import type { ProducerRecognizer } from '../profiles/router/producer-recognizer.js';

/** Fixed cost of a held span in bytes: the object, its contexts and ids, times, two reorder-buffer entries. */
export const SPAN_OVERHEAD_BYTES = 640;
/** Fixed cost of a held log record in bytes: the object, context, time, one reorder-buffer entry. */
export const LOG_OVERHEAD_BYTES = 400;
/** Fixed cost of one kept attribute in bytes (the property slot, the value's header). */
const ATTRIBUTE_OVERHEAD_BYTES = 48;

function valueBytes(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (v === null || typeof v !== 'object') return 8;
  try {
    return (JSON.stringify(v) ?? '').length;
  } catch {
    return 1024;
  }
}

function attributeBytes(attrs: Readonly<Record<string, unknown>>): number {
  let n = 0;
  for (const k in attrs) n += ATTRIBUTE_OVERHEAD_BYTES + k.length + valueBytes(attrs[k]);
  return n;
}

/** Hex length of a valid trace id and span id (16 and 8 bytes); the overheads above hold ids of these lengths. */
const TRACE_ID_HEX = 32;
const SPAN_ID_HEX = 16;
/** Fixed cost of one kept span event in bytes (the object, its time, its array slot). */
const EVENT_OVERHEAD_BYTES = 96;

/** Bytes of ids beyond the valid lengths: OTLP decoders accept ids of any length. */
function idExcess(ctx: { readonly traceId: string; readonly spanId: string } | undefined): number {
  return ctx === undefined ? 0 : Math.max(0, ctx.traceId.length - TRACE_ID_HEX) + Math.max(0, ctx.spanId.length - SPAN_ID_HEX);
}

/**
 * Bytes of the record's Resource, counted with every record that holds it. A Resource is shared by
 * the records of one request, so this over-counts (the safe side of a budget); a projected
 * record's Resource holds at most five short attributes (`RESOURCE_KEYS_READ`).
 */
function resourceBytes(resource: { readonly attributes: Readonly<Record<string, unknown>> } | undefined): number {
  return resource === undefined ? 0 : attributeBytes(resource.attributes);
}

/**
 * Estimated bytes a span takes while held: the fixed overhead, its names, kept attributes, kept
 * (exception) events, ids beyond their valid lengths, and its Resource's attributes.
 */
export function estimateSpanBytes(span: RecordedSpan): number {
  let n = SPAN_OVERHEAD_BYTES + span.name.length + span.scopeName.length + attributeBytes(span.attributes);
  for (const e of span.events) n += EVENT_OVERHEAD_BYTES + e.name.length + attributeBytes(e.attributes ?? {});
  return n + idExcess(span.spanContext()) + idExcess(span.parentSpanContext) + resourceBytes(span.resource);
}

/** Estimated bytes a log record takes while held (as {@link estimateSpanBytes}: names, attributes, ids, Resource). */
export function estimateLogBytes(log: RecordedLog): number {
  return (
    LOG_OVERHEAD_BYTES +
    (log.eventName?.length ?? 0) +
    log.instrumentationScope.name.length +
    attributeBytes(log.attributes) +
    idExcess(log.spanContext) +
    resourceBytes(log.resource)
  );
}

/**
 * Under `auto`: the recognizer that tells each record's producer's profile (shared with the
 * guard's router) and what each profile reads.
 */
export interface ProducerReads {
  readonly recognizer: ProducerRecognizer;
  readonly readsOf: (profile: WireProfileName) => WireProfileReads | undefined;
}

const WHOLE = new RecordFilter(undefined);

/**
 * A projection built once from a profile's reads, or, under `auto`, per producer: each record is
 * kept as far as its producer's profile reads it; records of a producer no profile recognises yet
 * are kept whole (the router decides when they are released: by then more of the producer has arrived).
 */
export class RecordProjection {
  private readonly _filter: RecordFilter;
  private readonly _reader: OtlpProtobufRecordReader;
  private readonly _producers: ProducerReads | undefined;
  private readonly _filters = new Map<WireProfileName, RecordFilter>();

  /** @param reads - the profile's reads; `undefined` keeps every record whole; {@link ProducerReads}: per producer */
  constructor(reads: WireProfileReads | ProducerReads | undefined) {
    const perProducer = reads !== undefined && 'recognizer' in reads ? reads : undefined;
    this._producers = perProducer;
    const one = perProducer === undefined ? (reads as WireProfileReads | undefined) : undefined;
    this._filter = new RecordFilter(one);
    this._reader = new OtlpProtobufRecordReader(one);
  }

  /**
   * Read an OTLP protobuf request body straight into projected records: the records
   * `project(otlpProtobufToRecords(signal, body))` gives, without building what is dropped (see
   * {@link OtlpProtobufRecordReader}; per producer: read whole, then projected).
   *
   * @param signal - Which export request the body holds.
   * @param body - The request body, already decompressed.
   * @param limits - Most records the request may hold and the charge for what decoding builds. @defaultValue no bound
   * @returns A new batch (a metrics request: only its `metricCount`).
   * @throws {RequestLimitError} past `limits` (see {@link OtlpProtobufRecordReader.read}).
   * @throws {Error} when the body is not a valid message of that type (as `otlpProtobufToRecords`).
   */
  readProtobuf(signal: OtlpSignal, body: Uint8Array, limits?: RequestLimits): RecordBatch {
    const read = this._reader.read(signal, body, undefined, limits);
    return this._producers === undefined ? read : this.project(read);
  }

  /** Keep what the profile reads (a new batch; without reads: the given one). Metric and ignored counts are carried over. */
  project(batch: RecordBatch): RecordBatch {
    const producers = this._producers;
    if (producers === undefined && this._filter.whole) return batch;
    const spans: RecordedSpan[] = [];
    for (const s of batch.spans) {
      const kept = (producers === undefined ? this._filter : this._filterOf(producers.recognizer.span(s))).span(s);
      if (kept !== undefined) spans.push(kept);
    }
    const logs: RecordedLog[] = [];
    for (const l of batch.logs) {
      const kept = (producers === undefined ? this._filter : this._filterOf(producers.recognizer.log(l))).log(l);
      if (kept !== undefined) logs.push(kept);
    }
    return { spans, logs, metricCount: batch.metricCount, ignoredCount: batch.ignoredCount };
  }

  private _filterOf(profile: WireProfileName | undefined): RecordFilter {
    if (profile === undefined) return WHOLE;
    let filter = this._filters.get(profile);
    if (filter === undefined) this._filters.set(profile, (filter = new RecordFilter(this._producers?.readsOf(profile))));
    return filter;
  }
}

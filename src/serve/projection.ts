/**
 * The compact projection `serve` applies at ingest: only the spans, log events and attributes the
 * profile reads are kept (its {@link WireProfileReads}); everything else (unread spans, prompt and
 * result text, log bodies) is dropped on arrival. Also the byte estimate of what is kept, which the
 * ingest budget counts.
 */
import { OtlpProtobufRecordReader } from '../otlp/otlp-protobuf-reader.js';
import type { OtlpSignal } from '../otlp/otlp.js';
import { RecordFilter } from '../otlp/record-filter.js';
import type { RecordBatch, RecordedLog, RecordedSpan } from '../otlp/records.js';
import type { WireProfileReads } from '../profiles/wire-profile.js';

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

/** Estimated bytes a span takes while held. */
export function estimateSpanBytes(span: RecordedSpan): number {
  return SPAN_OVERHEAD_BYTES + span.name.length + span.scopeName.length + attributeBytes(span.attributes);
}

/** Estimated bytes a log record takes while held. */
export function estimateLogBytes(log: RecordedLog): number {
  return LOG_OVERHEAD_BYTES + (log.eventName?.length ?? 0) + log.instrumentationScope.name.length + attributeBytes(log.attributes);
}

/** A projection built once from a profile's reads. */
export class RecordProjection {
  private readonly _filter: RecordFilter;
  private readonly _reader: OtlpProtobufRecordReader;

  /** @param reads - the profile's reads; `undefined` keeps every record whole */
  constructor(reads: WireProfileReads | undefined) {
    this._filter = new RecordFilter(reads);
    this._reader = new OtlpProtobufRecordReader(reads);
  }

  /**
   * Read an OTLP protobuf request body straight into projected records: the records
   * `project(otlpProtobufToRecords(signal, body))` gives, without building what is dropped (see
   * {@link OtlpProtobufRecordReader}).
   *
   * @param signal - Which export request the body holds.
   * @param body - The request body, already decompressed.
   * @returns A new batch (a metrics request: only its `metricCount`).
   * @throws {Error} when the body is not a valid message of that type (as `otlpProtobufToRecords`).
   */
  readProtobuf(signal: OtlpSignal, body: Uint8Array): RecordBatch {
    return this._reader.read(signal, body);
  }

  /** Keep what the profile reads (a new batch; without reads: the given one). Metric and ignored counts are carried over. */
  project(batch: RecordBatch): RecordBatch {
    const filter = this._filter;
    if (filter.whole) return batch;
    const spans: RecordedSpan[] = [];
    for (const s of batch.spans) {
      const kept = filter.span(s);
      if (kept !== undefined) spans.push(kept);
    }
    const logs: RecordedLog[] = [];
    for (const l of batch.logs) {
      const kept = filter.log(l);
      if (kept !== undefined) logs.push(kept);
    }
    return { spans, logs, metricCount: batch.metricCount, ignoredCount: batch.ignoredCount };
  }
}

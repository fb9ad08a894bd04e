/**
 * OTLP protobuf request bodies straight into {@link RecordedSpan}s and {@link RecordedLog}s: the
 * generated decoder's messages are read directly, without the JSON-shaped copy that
 * `decodeOtlpProtobuf` builds. The records are the ones `otlpRequestToRecords(decodeOtlpProtobuf(…))`
 * gives (tested on real captures).
 */
import { opentelemetry } from './generated/otlp-proto.js';
import { MAX_ANY_VALUE_DEPTH } from './otlp.js';
import { otlpReader } from './otlp-protobuf.js';
import type { OtlpSignal } from './otlp-protobuf.js';
import { emptyRecordBatch, nanosToHrTime, RecordedSpan, setAttribute } from './records.js';
import type { RecordBatch, RecordedLog } from './records.js';
import type { AnyValue, ResourceView, SpanEventView } from '../profiles/wire-profile.js';

const collector = opentelemetry.proto.collector;

/** A 64-bit field as the decoder gives it (a `Long` when the `long` package is there, else a number). */
/** @internal */
export type Int64 = number | { toString(): string; isZero?(): boolean } | null | undefined;

// The parts of the decoded messages read here (field names as generated: lowerCamelCase).
/** @internal */
export interface AnyValueMessage {
  /** The name of the `value` oneof field that is set. */
  readonly value?: string;
  readonly stringValue?: string | null;
  readonly boolValue?: boolean | null;
  readonly intValue?: Int64;
  readonly doubleValue?: number | null;
  readonly arrayValue?: { readonly values?: readonly AnyValueMessage[] | null } | null;
  readonly kvlistValue?: { readonly values?: readonly KeyValueMessage[] | null } | null;
  readonly bytesValue?: Uint8Array | null;
}
/** @internal */
export interface KeyValueMessage {
  readonly key: string;
  readonly value?: AnyValueMessage | null;
}
/** @internal */
export interface Resourced {
  readonly resource?: { readonly attributes?: readonly KeyValueMessage[] | null } | null;
}
interface Scoped {
  readonly scope?: { readonly name?: string | null } | null;
}
/** @internal */
export interface SpanMessage {
  readonly traceId?: Uint8Array | null;
  readonly spanId?: Uint8Array | null;
  readonly parentSpanId?: Uint8Array | null;
  readonly name?: string | null;
  readonly startTimeUnixNano?: Int64;
  readonly endTimeUnixNano?: Int64;
  readonly attributes?: readonly KeyValueMessage[] | null;
  readonly status?: { readonly code?: number | null } | null;
  readonly events?: readonly { readonly name?: string | null; readonly attributes?: readonly KeyValueMessage[] | null }[] | null;
}
/** @internal */
export interface LogRecordMessage {
  readonly timeUnixNano?: Int64;
  readonly observedTimeUnixNano?: Int64;
  readonly body?: AnyValueMessage | null;
  readonly attributes?: readonly KeyValueMessage[] | null;
  readonly traceId?: Uint8Array | null;
  readonly spanId?: Uint8Array | null;
  readonly eventName?: string | null;
}
interface TracesRequest {
  readonly resourceSpans: readonly (Resourced & { readonly scopeSpans?: readonly (Scoped & { readonly spans?: readonly SpanMessage[] | null })[] | null })[];
}
interface LogsRequest {
  readonly resourceLogs: readonly (Resourced & { readonly scopeLogs?: readonly (Scoped & { readonly logRecords?: readonly LogRecordMessage[] | null })[] | null })[];
}

/** Decimal nanoseconds, or `undefined` for zero (a proto3 default, as absent). */
/** @internal */
export function nanos(v: Int64): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'number') return v === 0 ? undefined : String(v);
  return v.isZero?.() === true ? undefined : v.toString();
}

/** @internal */
export function hex(bytes: Uint8Array | null | undefined): string {
  if (bytes === null || bytes === undefined || bytes.length === 0) return '';
  return Buffer.isBuffer(bytes) ? bytes.toString('hex') : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * A decoded `AnyValue` message as the value OTLP/JSON gives (see `anyValue` in `otlp.ts`).
 * @internal
 */
export function anyValue(v: AnyValueMessage | null | undefined, depth: number): AnyValue {
  if (v === null || v === undefined || depth > MAX_ANY_VALUE_DEPTH) return undefined;
  switch (v.value) {
    case 'stringValue':
      return v.stringValue ?? '';
    case 'boolValue':
      return v.boolValue === true;
    case 'intValue': {
      const i = v.intValue;
      if (typeof i === 'number') return i;
      if (i === null || i === undefined) return undefined;
      // the value JSON gives: Number of the decimal text (exact for every int64 within 2^53)
      const n = Number(i.toString());
      return Number.isFinite(n) ? n : i.toString();
    }
    case 'doubleValue':
      return Number(v.doubleValue);
    case 'arrayValue':
      return (v.arrayValue?.values ?? []).map((x) => anyValue(x, depth + 1));
    case 'kvlistValue':
      return attributes(v.kvlistValue?.values, depth + 1);
    case 'bytesValue':
      return hex(v.bytesValue);
    case undefined:
    default:
      return undefined;
  }
}

/**
 * Decoded `KeyValue` messages as an attribute record (later keys win; an empty key is skipped).
 * @internal
 */
export function attributes(list: readonly KeyValueMessage[] | null | undefined, depth = 0): Record<string, AnyValue> {
  const out: Record<string, AnyValue> = {};
  if (list === null || list === undefined) return out;
  // an empty key is absent on the decoded message (proto3 default), as in decodeOtlpProtobuf's objects
  for (const kv of list) if (kv.key !== '') setAttribute(out, kv.key, anyValue(kv.value, depth));
  return out;
}

function spanContext(traceId: string, spanId: string) {
  return { traceId, spanId, traceFlags: 1 };
}

/** The span's `exception` events with their attributes (what the `genai` profile reads); other events are dropped. */
/** @internal */
export function exceptionEvents(events: SpanMessage['events']): SpanEventView[] | undefined {
  let out: SpanEventView[] | undefined;
  for (const e of events ?? []) if (e.name === 'exception') (out ??= []).push({ name: 'exception', attributes: attributes(e.attributes) });
  return out;
}

/** @internal */
export function resourceOf(r: Resourced): { attributes: Record<string, AnyValue> } | undefined {
  return r.resource === null || r.resource === undefined ? undefined : { attributes: attributes(r.resource.attributes) };
}

/**
 * A decoded `LogRecord` message as a record.
 * @internal
 */
export function logFromMessage(l: LogRecordMessage, scopeName: string, resource: ResourceView | undefined): RecordedLog {
  const traceId = hex(l.traceId);
  const time = nanos(l.timeUnixNano) ?? nanos(l.observedTimeUnixNano);
  return {
    hrTime: nanosToHrTime(time),
    attributes: attributes(l.attributes),
    spanContext: traceId === '' ? undefined : spanContext(traceId, hex(l.spanId)),
    eventName: typeof l.eventName === 'string' && l.eventName !== '' ? l.eventName : undefined,
    instrumentationScope: { name: scopeName },
    body: anyValue(l.body, 0),
    resource,
  };
}

/**
 * Decode an OTLP protobuf request body of `signal` and append its spans and logs (a metrics request:
 * its count of `resourceMetrics`) to `into`.
 *
 * @param signal - Which export request the body holds (from the request path).
 * @param body - The request body, already decompressed.
 * @param into - Records are appended here. @defaultValue a new empty batch
 * @returns `into`.
 * @throws {Error} The decoder's error when the body is not a valid message of that type; nothing
 *   is appended then.
 */
export function otlpProtobufToRecords(signal: OtlpSignal, body: Uint8Array, into: RecordBatch = emptyRecordBatch()): RecordBatch {
  switch (signal) {
    case 'traces': {
      const request = collector.trace.v1.ExportTraceServiceRequest.decode(otlpReader(body)) as unknown as TracesRequest;
      for (const rs of request.resourceSpans) {
        const resource = resourceOf(rs);
        for (const ss of rs.scopeSpans ?? []) {
          const scopeName = ss.scope?.name ?? '';
          for (const s of ss.spans ?? []) {
            const traceId = hex(s.traceId);
            const parent = hex(s.parentSpanId);
            into.spans.push(
              new RecordedSpan({
                name: s.name ?? '',
                attributes: attributes(s.attributes),
                spanContext: spanContext(traceId, hex(s.spanId)),
                parentSpanContext: parent === '' ? undefined : spanContext(traceId, parent),
                startTime: nanosToHrTime(nanos(s.startTimeUnixNano)),
                endTime: nanosToHrTime(nanos(s.endTimeUnixNano)),
                scopeName,
                resource,
                status: { code: s.status?.code ?? 0 },
                events: exceptionEvents(s.events),
              }),
            );
          }
        }
      }
      return into;
    }
    case 'logs': {
      const request = collector.logs.v1.ExportLogsServiceRequest.decode(otlpReader(body)) as unknown as LogsRequest;
      for (const rl of request.resourceLogs) {
        const resource = resourceOf(rl);
        for (const sl of rl.scopeLogs ?? []) {
          const scopeName = sl.scope?.name ?? '';
          for (const l of sl.logRecords ?? []) into.logs.push(logFromMessage(l, scopeName, resource));
        }
      }
      return into;
    }
    case 'metrics':
      into.metricCount += collector.metrics.v1.ExportMetricsServiceRequest.decode(otlpReader(body)).resourceMetrics.length;
      return into;
    default: {
      const _exhaustive: never = signal;
      return _exhaustive;
    }
  }
}

/**
 * OTLP request objects (JSON encoding, or protobuf decoded by {@link decodeOtlpProtobuf} from the
 * vendored official definitions) into {@link RecordedSpan}s and {@link RecordedLog}s.
 */
import { emptyRecordBatch, nanosToHrTime, RecordedSpan, setAttribute } from './records.js';
import type { RecordBatch } from './records.js';
import type { AnyValue, SpanEventView } from '../profiles/wire-profile.js';

type Json = Record<string, unknown>;

// Types only: a value import of './otlp-protobuf.js' would load the generated protobuf decoders
// (about 0.5 MB of JavaScript) into every reader of JSON telemetry, the `replay` CLI's included.
export type { OtlpSignal } from './otlp-protobuf.js';

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** An id as hex: JSON OTLP uses hex strings; decoded protobuf gives byte arrays. */
function idHex(v: unknown): string {
  if (typeof v === 'string') return /^[0-9a-fA-F]*$/.test(v) ? v.toLowerCase() : Buffer.from(v, 'base64').toString('hex');
  if (Array.isArray(v) || v instanceof Uint8Array) return Buffer.from(v as number[]).toString('hex');
  return '';
}

function nanos(v: unknown): string | number | undefined {
  if (typeof v === 'string' || typeof v === 'number') return v;
  if (isObj(v) && typeof v.low === 'number' && typeof v.high === 'number') {
    return ((BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0)).toString();
  }
  return undefined;
}

/** Nesting depth beyond which an AnyValue is cut (the guard reads only flat attributes). */
export const MAX_ANY_VALUE_DEPTH = 16;

/** OTLP AnyValue to a plain value; nesting deeper than {@link MAX_ANY_VALUE_DEPTH} becomes `undefined`. */
export function anyValue(v: unknown, depth = 0): AnyValue {
  if (!isObj(v) || depth > MAX_ANY_VALUE_DEPTH) return undefined;
  if ('stringValue' in v) return String(v.stringValue);
  if ('boolValue' in v) return Boolean(v.boolValue);
  if ('intValue' in v) {
    const n = Number(v.intValue);
    return Number.isFinite(n) ? n : String(v.intValue);
  }
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('arrayValue' in v) return arr(isObj(v.arrayValue) ? v.arrayValue.values : undefined).map((x) => anyValue(x, depth + 1));
  if ('kvlistValue' in v) return attributes(isObj(v.kvlistValue) ? v.kvlistValue.values : undefined, depth + 1);
  if ('bytesValue' in v) return idHex(v.bytesValue);
  return undefined;
}

/** OTLP `KeyValue[]` to a record. */
export function attributes(list: unknown, depth = 0): Record<string, AnyValue> {
  const out: Record<string, AnyValue> = {};
  for (const kv of arr(list)) {
    if (isObj(kv) && typeof kv.key === 'string') setAttribute(out, kv.key, anyValue(kv.value, depth));
  }
  return out;
}

function spanContext(traceId: string, spanId: string) {
  return { traceId, spanId, traceFlags: 1 };
}

/** OTLP status code: a number (JSON, protobuf) or the enum name (`STATUS_CODE_ERROR`). */
function statusCode(status: unknown): number {
  if (!isObj(status)) return 0;
  const c = status.code;
  if (typeof c === 'number') return c === 1 || c === 2 ? c : 0;
  if (c === 'STATUS_CODE_OK') return 1;
  if (c === 'STATUS_CODE_ERROR') return 2;
  return 0;
}

/** The span's `exception` events with their attributes; other events are dropped. */
function exceptionEvents(events: unknown): SpanEventView[] | undefined {
  let out: SpanEventView[] | undefined;
  for (const e of arr(events)) {
    if (!isObj(e) || e.name !== 'exception') continue;
    (out ??= []).push({ name: 'exception', attributes: attributes(e.attributes) });
  }
  return out;
}

/** True when the object is an OTLP export request of any signal. */
export function isOtlpRequest(o: unknown): o is Json {
  return isObj(o) && ('resourceSpans' in o || 'resourceLogs' in o || 'resourceMetrics' in o);
}

/** The Resource of one `resourceSpans`/`resourceLogs` entry (shared by its records), or `undefined`. */
function resourceOf(r: Json): { attributes: Record<string, AnyValue> } | undefined {
  return isObj(r.resource) && Array.isArray(r.resource.attributes) ? { attributes: attributes(r.resource.attributes) } : undefined;
}

/** Convert one OTLP request object (any signal) into records, appended to `into`. */
export function otlpRequestToRecords(request: Json, into: RecordBatch = emptyRecordBatch()): RecordBatch {
  for (const rs of arr(request.resourceSpans)) {
    if (!isObj(rs)) continue;
    const resource = resourceOf(rs);
    for (const ss of arr(rs.scopeSpans ?? rs.instrumentationLibrarySpans)) {
      if (!isObj(ss)) continue;
      const scopeName = isObj(ss.scope) && typeof ss.scope.name === 'string' ? ss.scope.name : '';
      for (const s of arr(ss.spans)) {
        if (!isObj(s)) continue;
        const traceId = idHex(s.traceId);
        const parent = idHex(s.parentSpanId);
        into.spans.push(
          new RecordedSpan({
            name: typeof s.name === 'string' ? s.name : '',
            attributes: attributes(s.attributes),
            spanContext: spanContext(traceId, idHex(s.spanId)),
            parentSpanContext: parent === '' ? undefined : spanContext(traceId, parent),
            startTime: nanosToHrTime(nanos(s.startTimeUnixNano)),
            endTime: nanosToHrTime(nanos(s.endTimeUnixNano)),
            scopeName,
            resource,
            status: { code: statusCode(s.status) },
            events: exceptionEvents(s.events),
          }),
        );
      }
    }
  }
  for (const rl of arr(request.resourceLogs)) {
    if (!isObj(rl)) continue;
    const resource = resourceOf(rl);
    for (const sl of arr(rl.scopeLogs ?? rl.instrumentationLibraryLogs)) {
      if (!isObj(sl)) continue;
      const scopeName = isObj(sl.scope) && typeof sl.scope.name === 'string' ? sl.scope.name : '';
      for (const l of arr(sl.logRecords)) {
        if (!isObj(l)) continue;
        const traceId = idHex(l.traceId);
        const t = nanos(l.timeUnixNano);
        const time = t === undefined || t === '0' || t === 0 ? nanos(l.observedTimeUnixNano) : t;
        into.logs.push({
          hrTime: nanosToHrTime(time),
          attributes: attributes(l.attributes),
          spanContext: traceId === '' ? undefined : spanContext(traceId, idHex(l.spanId)),
          eventName: typeof l.eventName === 'string' && l.eventName !== '' ? l.eventName : undefined,
          instrumentationScope: { name: scopeName },
          body: anyValue(l.body),
          resource,
        });
      }
    }
  }
  for (const rm of arr(request.resourceMetrics)) {
    if (isObj(rm)) into.metricCount += 1;
  }
  return into;
}

/**
 * OTLP protobuf trace and logs requests read field by field with protobufjs's `Reader`, straight
 * into records, keeping only what a profile reads (its {@link WireProfileReads}) when one is given.
 *
 * Why not the generated decoders alone: they build a message object for every span, log record,
 * attribute and value (a oneof setter that deletes the other seven fields of every `AnyValue`, a
 * `Long` for every timestamp), which is most of the cost of reading a request; `serve` then drops
 * most of it. Here the messages on the hot path (the request, `ResourceSpans`/`ResourceLogs`,
 * `ScopeSpans`/`ScopeLogs`, `Span`, `LogRecord`, `KeyValue` and a scalar `AnyValue`) are walked
 * with the same `Reader` calls the generated code makes, and everything else is decoded by the
 * generated decoders themselves (`Resource`, `InstrumentationScope`, `Status`, `Span.Event`,
 * `Span.Link`, an `AnyValue` holding an array or key-value list, and any `KeyValue` or `LogRecord`
 * whose fields repeat a message field, which protobuf merges).
 *
 * Exact for the official schema (opentelemetry-proto v1.11.0, the vendored `.proto` files): the
 * field numbers and wire types are those of the generated code, a field with an unexpected wire
 * type or an unknown field is skipped by `Reader#skipType` as the generated code skips it, a later
 * scalar field replaces an earlier one, strings are checked for valid UTF-8, nested lengths are
 * bounded the same way. So a body gives the records `otlpProtobufToRecords` gives (projected when a
 * profile is given), and is refused exactly when that refuses it: nothing is skipped unread, only
 * not kept (tests compare both on real captures and on generated messages).
 *
 * Longer than the ~350-line norm on purpose: one walk per hot message of the schema (request,
 * resource and scope entries, span, log record, key-value, value), each a switch over its field
 * numbers, read together against the `.proto` files they follow.
 */
import { CHARGE_EVERY_RECORDS, DECODED_RECORD_BYTES, RequestLimitError } from './request-limit.js';
import type { RequestLimits } from './request-limit.js';
import type { HrTime, SpanContext } from '@opentelemetry/api';
import type protobuf from 'protobufjs/minimal.js';
import { opentelemetry } from './generated/otlp-proto.js';
import { otlpReader } from './otlp-protobuf.js';
import type { OtlpSignal } from './otlp-protobuf.js';
import { anyValue, exceptionEvents, logFromMessage, resourceOf } from './otlp-protobuf-records.js';
import type { AnyValueMessage, KeyValueMessage, LogRecordMessage, Resourced, SpanMessage } from './otlp-protobuf-records.js';
import { emptyRecordBatch, RecordedSpan, setAttribute } from './records.js';
import { pickAttributes, projectResource, SESSION_ID_KEY } from './record-filter.js';
import type { RecordBatch, RecordedLog } from './records.js';
import type { AnyValue, ResourceView, WireProfileReads } from '../profiles/wire-profile.js';

const proto = opentelemetry.proto;

/** A generated decoder called as the generated code calls it: (reader, length, end group, depth, merge target). */
type Decode<T> = (reader: protobuf.Reader, length: number, end: undefined, depth: number, target?: T) => T;
const decodeResource = proto.resource.v1.Resource.decode as unknown as Decode<NonNullable<Resourced['resource']>>;
const decodeScope = proto.common.v1.InstrumentationScope.decode as unknown as Decode<{ readonly name?: string | null }>;
const decodeStatus = proto.trace.v1.Status.decode as unknown as Decode<{ readonly code?: number | null }>;
const decodeEvent = proto.trace.v1.Span.Event.decode as unknown as Decode<NonNullable<SpanMessage['events']>[number]>;
const decodeLink = proto.trace.v1.Span.Link.decode as unknown as Decode<unknown>;
const decodeKeyValue = proto.common.v1.KeyValue.decode as unknown as Decode<KeyValueMessage>;
const decodeAnyValue = proto.common.v1.AnyValue.decode as unknown as Decode<AnyValueMessage>;
const decodeLogRecord = proto.logs.v1.LogRecord.decode as unknown as Decode<LogRecordMessage>;

/** The reader's state the walk reads and moves (public fields of protobufjs's `Reader`). */
type Reader = protobuf.Reader & { buf: Buffer };

// Wire types.
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

// Message depths as the generated decoders count them (the request is 0).
const D_RESOURCE_ENTRY = 1;
const D_SCOPE_ENTRY = 2;
const D_RECORD = 3;
const D_KEY_VALUE = 4;

const TWO_POW_32 = 4294967296;

function outOfRange(): RangeError {
  return new RangeError('index out of range');
}

/** Enter a length-delimited message: bound the reader to it; returns the outer bound. */
function enter(r: Reader): number {
  const length = r.size();
  const end = r.pos + length;
  if (end > r.len) throw outOfRange();
  const outer = r.len;
  r.len = end;
  return outer;
}

/** Leave a message entered with {@link enter}. */
function leave(r: Reader, outer: number): void {
  if (r.pos !== r.len) throw outOfRange();
  r.len = outer;
}

/** Skip a length-delimited field (its content is checked on another pass). */
function skipLen(r: Reader): void {
  const length = r.size();
  if (r.pos + length > r.len) throw outOfRange();
  r.pos += length;
}

/** A `bytes` field as lowercase hex ('' when empty), without copying it. */
function readHex(r: Reader): string {
  const length = r.size();
  const start = r.pos;
  const end = start + length;
  if (end > r.len) throw outOfRange();
  r.pos = end;
  return length === 0 ? '' : r.buf.toString('hex', start, end);
}

/**
 * A `fixed64` nanosecond timestamp: its low word in `lo`, high word in `hi` of `out` (read as
 * `Reader#fixed64` reads it, without the `Long`).
 */
function readFixed64(r: Reader, out: Float64Array, at: number): void {
  if (r.pos + 8 > r.len) throw outOfRange();
  out[at] = r.buf.readUInt32LE(r.pos);
  out[at + 1] = r.buf.readUInt32LE(r.pos + 4);
  r.pos += 8;
}

/**
 * Unsigned nanoseconds (`lo`, `hi` words) as `HrTime`: exactly what `nanosToHrTime` of their decimal
 * text gives, in double arithmetic: the quotient is estimated from the rounded value (off by at most
 * one), and the remainder computed from terms that are each exact (below 2^53) and corrected.
 */
function hrTime(lo: number, hi: number): HrTime {
  let sec = Math.floor((hi * TWO_POW_32 + lo) / 1e9);
  const a = Math.floor(sec / 65536);
  const b = sec - a * 65536;
  // V - sec·1e9 = (hi·2^16 - a·1e9)·2^16 + lo - b·1e9, every product and partial sum exact
  let ns = (hi * 65536 - a * 1e9) * 65536 + lo - b * 1e9;
  while (ns < 0) {
    sec -= 1;
    ns += 1e9;
  }
  while (ns >= 1e9) {
    sec += 1;
    ns -= 1e9;
  }
  return [sec, ns];
}

/** Strings up to this many bytes are looked up in the reader's cache. */
const CACHED_STRING_BYTES = 64;
/** Slots of the string cache (a power of two). */
const STRING_CACHE_SLOTS = 4096;
/** The name cache: one string a slot, replaced on a miss (bounded: 4096 strings of at most 64 characters). */
const STRINGS: (string | undefined)[] = new Array<string | undefined>(STRING_CACHE_SLOTS).fill(undefined);

/**
 * A `string` field that names something (an attribute key, a span name, an event name, a severity
 * text), as `Reader#stringVerify` reads it. These are the same few values again and again: a short
 * ASCII one comes from the cache when the slot (shared by every reader) holds the same characters,
 * so each is built once (ASCII is valid UTF-8). Longer or non-ASCII strings are read by
 * `stringVerify` (UTF-8 checked). Attribute values are never cached (they may be argument text).
 */
function readString(r: Reader): string {
  const cache = STRINGS;
  const at = r.pos;
  const length = r.size();
  const start = r.pos;
  const end = start + length;
  if (end > r.len) throw outOfRange();
  if (length === 0) {
    r.pos = end;
    return '';
  }
  const buf = r.buf;
  if (length <= CACHED_STRING_BYTES) {
    let h = length;
    let i = start;
    for (; i < end; i++) {
      const c = buf[i] as number;
      if (c >= 0x80) break;
      h = (Math.imul(h, 31) + c) | 0;
    }
    if (i === end) {
      r.pos = end;
      const slot = h & (STRING_CACHE_SLOTS - 1);
      const cached = cache[slot];
      if (cached !== undefined && cached.length === length) {
        let k = 0;
        while (k < length && cached.charCodeAt(k) === buf[start + k]) k++;
        if (k === length) return cached;
      }
      const fresh = buf.toString('latin1', start, end);
      cache[slot] = fresh;
      return fresh;
    }
  }
  r.pos = at;
  return r.stringVerify();
}

function spanContext(traceId: string, spanId: string): SpanContext {
  return { traceId, spanId, traceFlags: 1 };
}

/** Set when a walked `AnyValue` holds a message field: decode it again with the generated decoder. */
const NESTED = Symbol('nested');

/**
 * A scalar `AnyValue` (string, bool, int, double, bytes; the last one set wins, as in the oneof),
 * or {@link NESTED} when it holds an array or key-value list.
 */
function readScalarAnyValue(r: Reader, depth: number): AnyValue | typeof NESTED {
  const outer = enter(r);
  let value: AnyValue = undefined;
  while (r.pos < r.len) {
    const tag = r.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LEN) value = r.stringVerify();
    else if (field === 2 && wire === VARINT) value = r.bool();
    else if (field === 3 && wire === VARINT) {
      const i = r.int64() as number | { low: number; high: number };
      // Number of the decimal text (what JSON gives) is the double nearest high·2^32 + low: this sum, rounded once
      value = typeof i === 'number' ? i : i.high * TWO_POW_32 + (i.low >>> 0);
    } else if (field === 4 && wire === I64) value = r.double();
    else if (field === 7 && wire === LEN) value = readHex(r);
    else if (field === 8 && wire === VARINT) {
      r.int32();
      value = undefined; // string_value_strindex (profiles only): not a value
    } else if ((field === 5 || field === 6) && wire === LEN) {
      r.len = outer;
      return NESTED;
    } else r.skipType(wire, depth, field);
  }
  leave(r, outer);
  return value;
}

/** An `AnyValue` field (at the reader, its length next) as a value; nested values by the generated decoder. */
function readAnyValue(r: Reader, depth: number): AnyValue {
  const begin = r.pos;
  const v = readScalarAnyValue(r, depth);
  if (v !== NESTED) return v;
  r.pos = begin;
  return anyValue(decodeAnyValue(r, r.size(), undefined, depth), 0);
}

/** What to keep of an attribute list: `undefined` keeps every key. */
type Keys = ReadonlySet<string> | undefined;

/**
 * One `KeyValue` (at the reader, its length next) into `out` when its key is kept (later keys
 * win; an empty key is skipped). Its key and value are left in `seen`, for the caller's own look.
 */
function readKeyValue(r: Reader, out: Record<string, AnyValue>, keep: Keys, seen: { key: string; value: AnyValue }): void {
  const begin = r.pos;
  const outer = enter(r);
  let key = '';
  let value: AnyValue = undefined;
  let values = 0;
  while (r.pos < r.len) {
    const tag = r.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LEN) key = readString(r);
    else if (field === 2 && wire === LEN) {
      if (++values > 1) break; // a repeated message field is merged: the generated decoder does it
      value = readAnyValue(r, D_KEY_VALUE + 1);
    } else if (field === 3 && wire === VARINT) r.int32();
    else r.skipType(wire, D_KEY_VALUE, field);
  }
  if (values > 1) {
    r.len = outer;
    r.pos = begin;
    const kv = decodeKeyValue(r, r.size(), undefined, D_KEY_VALUE);
    key = kv.key;
    value = anyValue(kv.value, 0);
  } else leave(r, outer);
  seen.key = key;
  seen.value = value;
  if (key !== '' && (keep === undefined || keep.has(key))) setAttribute(out, key, value);
}

/**
 * First pass over a `Scope{Spans,Logs}`: the scope's name (scopes merged when repeated), the
 * schema URL checked, the records skipped; the reader is left where it started.
 */
function readScopeName(r: Reader, depth: number): string {
  let scope: { readonly name?: string | null } | undefined;
  const begin = r.pos;
  while (r.pos < r.len) {
    const tag = r.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LEN) scope = decodeScope(r, r.size(), undefined, depth + 1, scope);
    else if (field === 3 && wire === LEN) r.stringVerify(); // schema_url
    else if (field === 2 && wire === LEN) skipLen(r); // the records: next pass
    else r.skipType(wire, depth, field);
  }
  r.pos = begin;
  return scope?.name ?? '';
}

/** Scope objects a reader keeps for its whole life (shared by the records of every request). */
const MAX_CACHED_SCOPES = 64;
/**
 * Longest scope name kept with them: a name is the client's text, up to the body limit, and kept
 * names are never released (64 of 256 characters: at most 16 KiB a reader).
 */
const MAX_CACHED_SCOPE_NAME = 256;

/** Projection sets of a reader. */
interface Projection {
  readonly spanNames: ReadonlySet<string> | undefined;
  readonly spanKeys: Keys;
  readonly logEvents: ReadonlySet<string> | undefined;
  readonly logKeys: Keys;
  /** Log bodies are kept only without a projection. */
  readonly bodies: boolean;
}

const WHOLE: Projection = { spanNames: undefined, spanKeys: undefined, logEvents: undefined, logKeys: undefined, bodies: true };

/** Reads OTLP protobuf trace and logs requests into records, keeping what a profile reads. */
export class OtlpProtobufRecordReader {
  private readonly _p: Projection;
  /** Scratch: the timestamps of the record being read (lo, hi words). */
  private readonly _t = new Float64Array(4);
  private readonly _seen = { key: '', value: undefined as AnyValue };
  private readonly _scopes = new Map<string, { readonly name: string }>();
  /** The last trace id read from the body being read (its offset, length, hex): records of a trace come together. */
  private _traceAt = -1;
  private _traceLength = 0;
  private _traceHex = '';
  /** Bounds of the request being read (see {@link RequestLimits}); records read of it so far. */
  private _maxRecords = Number.POSITIVE_INFINITY;
  private _charge: RequestLimits['charge'];
  private _records = 0;

  /**
   * @param reads - what the profile reads: only those spans, log events and attributes are kept,
   *   and log bodies are dropped (as `serve`'s projection does); `undefined` keeps every record whole.
   */
  constructor(reads?: WireProfileReads) {
    this._p =
      reads === undefined
        ? WHOLE
        : {
            spanNames: reads.spanNames === undefined ? undefined : new Set(reads.spanNames),
            spanKeys: new Set([...reads.spanAttributes, SESSION_ID_KEY]),
            logEvents: reads.logEventNames === undefined ? undefined : new Set(reads.logEventNames),
            logKeys: new Set([...reads.logAttributes, SESSION_ID_KEY]),
            bodies: false,
          };
  }

  /**
   * Read an OTLP protobuf request body of `signal` and append its spans and logs (kept ones; a
   * metrics request: its count of `resourceMetrics`) to `into`.
   *
   * @param signal - Which export request the body holds (from the request path or gRPC method).
   * @param body - The request body, already decompressed.
   * @param into - Records are appended here. @defaultValue a new empty batch
   * @param limits - Most records the request may hold (kept or not) and the charge for what decoding
   *   builds. @defaultValue no bound
   * @returns `into`.
   * @throws {RequestLimitError} when the request holds more than `limits.maxRecords` records or the
   *   charge is refused (nothing is appended then).
   * @throws {Error} The reader's error (`RangeError` "index out of range", "invalid wire type", a
   *   `TypeError` for invalid UTF-8, …) when the body is not a valid message of that type; nothing is
   *   appended then.
   */
  read(signal: OtlpSignal, body: Uint8Array, into: RecordBatch = emptyRecordBatch(), limits?: RequestLimits): RecordBatch {
    this._maxRecords = limits?.maxRecords ?? Number.POSITIVE_INFINITY;
    this._charge = limits?.charge;
    this._records = 0;
    if (signal === 'metrics') {
      // The guard reads no metrics: only the ResourceMetrics entries are counted (their framing
      // checked), never decoded, so a metrics body builds nothing whatever it holds.
      const r = otlpReader(body) as Reader;
      let count = 0;
      while (r.pos < r.len) {
        const tag = r.tag();
        const wire = tag & 7;
        if (tag >>> 3 === 1 && wire === LEN) {
          skipLen(r);
          count += 1;
        } else r.skipType(wire, 0, tag >>> 3);
      }
      into.metricCount += count;
      return into;
    }
    const r = otlpReader(body) as Reader;
    this._traceAt = -1;
    if (signal === 'traces') {
      const spans: RecordedSpan[] = [];
      this._request(r, spans, undefined);
      for (const s of spans) into.spans.push(s);
    } else {
      const logs: RecordedLog[] = [];
      this._request(r, undefined, logs);
      for (const l of logs) into.logs.push(l);
    }
    return into;
  }

  /** `Export{Trace,Logs}ServiceRequest { repeated Resource{Spans,Logs} = 1; }` */
  private _request(r: Reader, spans: RecordedSpan[] | undefined, logs: RecordedLog[] | undefined): void {
    while (r.pos < r.len) {
      const tag = r.tag();
      const wire = tag & 7;
      const field = tag >>> 3;
      if (field === 1 && wire === LEN) this._resourceEntry(r, spans, logs);
      else r.skipType(wire, 0, field);
    }
  }

  /** `Resource{Spans,Logs} { Resource resource = 1; repeated Scope{Spans,Logs} = 2; string schema_url = 3; }` */
  private _resourceEntry(r: Reader, spans: RecordedSpan[] | undefined, logs: RecordedLog[] | undefined): void {
    const outer = enter(r);
    // First pass: the resource (merged when repeated) and the schema URL; the scopes are skipped.
    const begin = r.pos;
    let resourceMessage: Resourced['resource'];
    while (r.pos < r.len) {
      const tag = r.tag();
      const wire = tag & 7;
      const field = tag >>> 3;
      if (field === 1 && wire === LEN) resourceMessage = decodeResource(r, r.size(), undefined, D_RESOURCE_ENTRY + 1, resourceMessage ?? undefined);
      else if (field === 3 && wire === LEN) r.stringVerify();
      else if (field === 2 && wire === LEN) skipLen(r);
      else r.skipType(wire, D_RESOURCE_ENTRY, field);
    }
    const whole = resourceOf({ resource: resourceMessage });
    // Projected: only the Resource attributes anything reads, as RecordFilter keeps them.
    const resource = this._p === WHOLE ? whole : projectResource(whole);
    // Second pass: the scopes.
    r.pos = begin;
    while (r.pos < r.len) {
      const tag = r.tag();
      const wire = tag & 7;
      const field = tag >>> 3;
      if (field === 2 && wire === LEN) this._scopeEntry(r, resource, spans, logs);
      else r.skipType(wire, D_RESOURCE_ENTRY, field); // checked on the first pass
    }
    leave(r, outer);
  }

  /** `Scope{Spans,Logs} { InstrumentationScope scope = 1; repeated {Span,LogRecord} = 2; string schema_url = 3; }` */
  private _scopeEntry(r: Reader, resource: ResourceView | undefined, spans: RecordedSpan[] | undefined, logs: RecordedLog[] | undefined): void {
    const outer = enter(r);
    const scopeName = readScopeName(r, D_SCOPE_ENTRY);
    let scope = this._scopes.get(scopeName);
    if (scope === undefined) {
      scope = Object.freeze({ name: scopeName });
      if (this._scopes.size < MAX_CACHED_SCOPES && scopeName.length <= MAX_CACHED_SCOPE_NAME) this._scopes.set(scopeName, scope);
    }
    while (r.pos < r.len) {
      const tag = r.tag();
      const wire = tag & 7;
      const field = tag >>> 3;
      if (field === 2 && wire === LEN) {
        this._count();
        if (spans !== undefined) this._span(r, scopeName, resource, spans);
        else if (logs !== undefined) this._log(r, scope, resource, logs);
      } else r.skipType(wire, D_SCOPE_ENTRY, field); // checked on the first pass
    }
    leave(r, outer);
  }

  /** One more record read: within the request's bound, and charged every {@link CHARGE_EVERY_RECORDS}. */
  private _count(): void {
    const n = ++this._records;
    if (n > this._maxRecords) throw new RequestLimitError('records', this._maxRecords);
    if (n % CHARGE_EVERY_RECORDS === 0 && this._charge !== undefined && !this._charge(CHARGE_EVERY_RECORDS * DECODED_RECORD_BYTES)) {
      throw new RequestLimitError('budget');
    }
  }

  /** One `Span`; appended to `out` when its name is kept. */
  private _span(r: Reader, scopeName: string, resource: ResourceView | undefined, out: RecordedSpan[]): void {
    const outer = enter(r);
    const keep = this._p.spanKeys;
    const t = this._t;
    t[0] = t[1] = t[2] = t[3] = 0;
    let traceId = '';
    let spanId = '';
    let parentId = '';
    let name = '';
    let status: { readonly code?: number | null } | undefined;
    let events: NonNullable<SpanMessage['events']>[number][] | undefined;
    const attrs: Record<string, AnyValue> = {};
    const seen = this._seen;
    while (r.pos < r.len) {
      const tag = r.tag();
      const wire = tag & 7;
      const field = tag >>> 3;
      switch (field) {
        case 1:
          if (wire !== LEN) break;
          traceId = this._traceId(r);
          continue;
        case 2:
          if (wire !== LEN) break;
          spanId = readHex(r);
          continue;
        case 3:
          if (wire !== LEN) break;
          r.stringVerify(); // trace_state
          continue;
        case 4:
          if (wire !== LEN) break;
          parentId = readHex(r);
          continue;
        case 5:
          if (wire !== LEN) break;
          name = readString(r);
          continue;
        case 6:
          if (wire !== VARINT) break;
          r.int32(); // kind
          continue;
        case 7:
          if (wire !== I64) break;
          readFixed64(r, t, 0);
          continue;
        case 8:
          if (wire !== I64) break;
          readFixed64(r, t, 2);
          continue;
        case 9:
          if (wire !== LEN) break;
          readKeyValue(r, attrs, keep, seen);
          continue;
        case 10:
        case 12:
        case 14:
          if (wire !== VARINT) break;
          r.uint32(); // dropped counts
          continue;
        case 11:
          if (wire !== LEN) break;
          (events ??= []).push(decodeEvent(r, r.size(), undefined, D_RECORD + 1));
          continue;
        case 13:
          if (wire !== LEN) break;
          decodeLink(r, r.size(), undefined, D_RECORD + 1); // checked, not kept
          continue;
        case 15:
          if (wire !== LEN) break;
          status = decodeStatus(r, r.size(), undefined, D_RECORD + 1, status);
          continue;
        case 16:
          if (wire !== I32) break;
          r.fixed32(); // flags
          continue;
        default:
          break;
      }
      r.skipType(wire, D_RECORD, field);
    }
    leave(r, outer);
    const names = this._p.spanNames;
    if (names !== undefined && !names.has(name)) return;
    out.push(
      new RecordedSpan({
        name,
        attributes: attrs,
        spanContext: spanContext(traceId, spanId),
        parentSpanContext: parentId === '' ? undefined : spanContext(traceId, parentId),
        startTime: hrTime(t[0] as number, t[1] as number),
        endTime: hrTime(t[2] as number, t[3] as number),
        scopeName,
        resource,
        status: statusOf(status?.code ?? 0),
        events: exceptionEvents(events),
      }),
    );
  }

  /** One `LogRecord`; appended to `out` when its event is kept. */
  private _log(r: Reader, scope: { readonly name: string }, resource: ResourceView | undefined, out: RecordedLog[]): void {
    const begin = r.pos;
    const outer = enter(r);
    const p = this._p;
    const t = this._t;
    t[0] = t[1] = t[2] = t[3] = 0;
    let traceId = '';
    let spanId = '';
    let eventName = '';
    let eventNameAttr: AnyValue = undefined;
    let body: AnyValue = undefined;
    let bodies = 0;
    const attrs: Record<string, AnyValue> = {};
    const seen = this._seen;
    while (r.pos < r.len) {
      const tag = r.tag();
      const wire = tag & 7;
      const field = tag >>> 3;
      switch (field) {
        case 1:
          if (wire !== I64) break;
          readFixed64(r, t, 0);
          continue;
        case 11:
          if (wire !== I64) break;
          readFixed64(r, t, 2);
          continue;
        case 2:
          if (wire !== VARINT) break;
          r.int32(); // severity_number
          continue;
        case 3:
          if (wire !== LEN) break;
          readString(r); // severity_text
          continue;
        case 5:
          if (wire !== LEN) break;
          if (++bodies > 1) {
            // a repeated message field is merged: the generated decoder reads this record
            r.len = outer;
            r.pos = begin;
            this._logByGeneratedDecoder(r, scope, resource, out);
            return;
          }
          body = readAnyValue(r, D_RECORD + 1);
          continue;
        case 6:
          if (wire !== LEN) break;
          readKeyValue(r, attrs, p.logKeys, seen);
          if (seen.key === 'event.name') eventNameAttr = seen.value;
          continue;
        case 7:
          if (wire !== VARINT) break;
          r.uint32(); // dropped_attributes_count
          continue;
        case 8:
          if (wire !== I32) break;
          r.fixed32(); // flags
          continue;
        case 9:
          if (wire !== LEN) break;
          traceId = this._traceId(r);
          continue;
        case 10:
          if (wire !== LEN) break;
          spanId = readHex(r);
          continue;
        case 12:
          if (wire !== LEN) break;
          eventName = readString(r);
          continue;
        default:
          break;
      }
      r.skipType(wire, D_RECORD, field);
    }
    leave(r, outer);
    if (p.logEvents !== undefined) {
      const name = typeof eventNameAttr === 'string' && eventNameAttr !== '' ? eventNameAttr : eventName;
      if (name === '' || !p.logEvents.has(name)) return;
    }
    const timeZero = t[0] === 0 && t[1] === 0;
    out.push({
      hrTime: timeZero ? hrTime(t[2] as number, t[3] as number) : hrTime(t[0] as number, t[1] as number),
      attributes: attrs,
      spanContext: traceId === '' ? undefined : spanContext(traceId, spanId),
      eventName: eventName === '' ? undefined : eventName,
      instrumentationScope: scope,
      body: p.bodies ? body : undefined,
      resource,
    });
  }

  /** A trace id, as {@link readHex}; the previous one's string again when the bytes are the same. */
  private _traceId(r: Reader): string {
    const length = r.size();
    const start = r.pos;
    const end = start + length;
    if (end > r.len) throw outOfRange();
    r.pos = end;
    if (length === 0) return '';
    const buf = r.buf;
    const at = this._traceAt;
    if (at >= 0 && length === this._traceLength) {
      let i = 0;
      while (i < length && buf[at + i] === buf[start + i]) i++;
      if (i === length) return this._traceHex;
    }
    this._traceAt = start;
    this._traceLength = length;
    return (this._traceHex = buf.toString('hex', start, end));
  }

  /** A log record read by the generated decoder (the reader at its length), then projected. */
  private _logByGeneratedDecoder(r: Reader, scope: { readonly name: string }, resource: ResourceView | undefined, out: RecordedLog[]): void {
    const message = decodeLogRecord(r, r.size(), undefined, D_RECORD);
    const whole = logFromMessage(message, scope.name, resource);
    const p = this._p;
    if (p.logEvents !== undefined) {
      const nameAttr = whole.attributes['event.name'];
      const name = typeof nameAttr === 'string' && nameAttr !== '' ? nameAttr : whole.eventName;
      if (name === undefined || !p.logEvents.has(name)) return;
    }
    out.push({ ...whole, instrumentationScope: scope, attributes: pickKeys(whole.attributes, p.logKeys), body: p.bodies ? whole.body : undefined });
  }
}

function pickKeys(attrs: Readonly<Record<string, AnyValue>>, keys: Keys): Record<string, AnyValue> {
  return keys === undefined ? (attrs as Record<string, AnyValue>) : pickAttributes(attrs, keys);
}

const STATUS: readonly { readonly code: number }[] = [Object.freeze({ code: 0 }), Object.freeze({ code: 1 }), Object.freeze({ code: 2 })];

/** A span status (shared for the three codes). */
function statusOf(code: number): { readonly code: number } {
  return STATUS[code] ?? { code };
}

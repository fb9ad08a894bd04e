/**
 * Reading telemetry files: the qwen-code telemetry outfile (pretty JSON objects of finished spans
 * and log records, concatenated) and OTLP JSON lines as a collector's file exporter writes them.
 * The format is told by content, per object, not by file name.
 */
import { Buffer } from 'node:buffer';
import type { HrTime, SpanContext } from '@opentelemetry/api';
import { isOtlpRequest, otlpRequestToRecords } from './otlp.js';
import { emptyRecordBatch, RecordedSpan, setAttribute } from './records.js';
import type { RecordBatch, RecordedLog } from './records.js';
import type { AnyValue } from '../profiles/wire-profile.js';

/** A file that is not telemetry the reader understands. `message` names the file and position. */
export class TelemetryParseError extends Error {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** What is wrong, without the position (e.g. `truncated JSON object`). */
  readonly reason: string;

  constructor(file: string, line: number, column: number, reason: string) {
    super(`${file}:${line}:${column}: ${reason}`);
    this.name = 'TelemetryParseError';
    this.file = file;
    this.line = line;
    this.column = column;
    this.reason = reason;
  }
}

/** A file whose last object is cut short (a file still being written, or cut by a crash). */
export interface TruncatedEnd {
  readonly file: string;
  /** Line and column (1-based, in characters of the decoded text) where the cut object starts. */
  readonly line: number;
  readonly column: number;
  /** Bytes (code units of text) of the cut object that are present. */
  readonly length: number;
}

/** Options of {@link readTelemetryText}. */
export interface ReadTelemetryOptions {
  /**
   * Called when the last object is cut short (it never closes before the end of the contents)
   * after at least one object with telemetry: the objects before it have been read, and reading
   * ends without an error. Otherwise a cut last object is a {@link TelemetryParseError}
   * (`truncated JSON object`).
   */
  readonly onTruncatedEnd?: (cut: TruncatedEnd) => void;
}

const TRUNCATED = 'truncated JSON object';

type Json = Record<string, unknown>;

/**
 * A telemetry file's contents as the reader scans them: its text, or its UTF-8 bytes. JSON's
 * structural characters (braces, brackets, quote, backslash, whitespace) are ASCII, and in UTF-8
 * every byte of a multi-byte character is 0x80 or above, so one scan over code units finds the
 * same object boundaries in both; only the objects themselves are decoded from bytes.
 */
type Contents = string | Buffer;

/** The code unit at `i`: a UTF-16 unit of text, a byte of UTF-8. */
function unitAt(contents: Contents, i: number): number {
  return typeof contents === 'string' ? contents.charCodeAt(i) : (contents[i] as number);
}

/** The text of `[start, end)`: bytes are decoded as UTF-8 (invalid sequences become U+FFFD, as reading the file as UTF-8 text does). */
function textOf(contents: Contents, start: number, end: number): string {
  return typeof contents === 'string' ? contents.slice(start, end) : contents.toString('utf8', start, end);
}

/** 1-based line and column (in UTF-16 units, as for the decoded text) of the code unit at `offset`. */
function lineCol(contents: Contents, offset: number): [number, number] {
  let line = 1;
  let last = -1;
  for (let i = contents.indexOf('\n'); i !== -1 && i < offset; i = contents.indexOf('\n', i + 1)) {
    line += 1;
    last = i;
  }
  return [line, typeof contents === 'string' ? offset - last : textOf(contents, last + 1, offset).length + 1];
}

/** Code units of a byte order mark at the start (U+FEFF; EF BB BF in UTF-8), which is skipped; else 0. */
function byteOrderMarkLength(contents: Contents): number {
  if (typeof contents === 'string') return contents.charCodeAt(0) === 0xfeff ? 1 : 0;
  return contents[0] === 0xef && contents[1] === 0xbb && contents[2] === 0xbf ? 3 : 0;
}

/**
 * The character at `offset` for an error message: printable ASCII quoted, anything else as its code
 * point (`U+FEFF`), so that an invisible or control character is named.
 */
function characterAt(contents: Contents, offset: number): string {
  const cp = textOf(contents, offset, Math.min(contents.length, offset + (typeof contents === 'string' ? 2 : 4))).codePointAt(0) ?? 0;
  return cp >= 0x21 && cp <= 0x7e ? JSON.stringify(String.fromCodePoint(cp)) : `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * End offset of the JSON value that starts at `from` (an object or array), exactly: strings and
 * escapes are honoured. Throws {@link TelemetryParseError} on unbalanced input.
 */
function scanValue(contents: Contents, file: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < contents.length; i++) {
    const c = unitAt(contents, i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  throw new TelemetryParseError(file, ...lineCol(contents, from), TRUNCATED);
}

function parseAt(contents: Contents, file: string, start: number, end: number): unknown {
  try {
    return JSON.parse(textOf(contents, start, end));
  } catch {
    // The engine's message quotes the input, which may hold secrets: report the object's position only.
    throw new TelemetryParseError(file, ...lineCol(contents, start), 'invalid JSON in the object that starts here');
  }
}

/**
 * End offset of the top-level value that starts at `pos` (an object or array). Fast path: an SDK
 * outfile is pretty-printed with indentation, so the first raw newline followed by `}` at column 0
 * closes a top-level object (raw newlines never occur inside JSON strings, and nested closers are
 * indented). Anything else (OTLP JSON lines, compact or unindented JSON, CRLF) goes through the
 * exact scanner.
 */
function valueEnd(contents: Contents, file: string, pos: number): number {
  if (unitAt(contents, pos) === 123 && unitAt(contents, pos + 1) === 10 && unitAt(contents, pos + 2) === 32) {
    const close = contents.indexOf('\n}', pos);
    if (close !== -1) return close + 2;
  }
  return scanValue(contents, file, pos);
}

/** The parsed `[seconds, nanos]` pair itself (freshly parsed, owned by nobody else), when valid. */
function hr(v: unknown): HrTime | undefined {
  return Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && typeof v[1] === 'number' ? (v as HrTime) : undefined;
}

function ctx(v: unknown): SpanContext | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Json;
  if (typeof o.traceId !== 'string' || typeof o.spanId !== 'string') return undefined;
  // A parsed SDK span context already has this shape: use it as is.
  if (typeof o.traceFlags === 'number') return o as unknown as SpanContext;
  return { traceId: o.traceId, spanId: o.spanId, traceFlags: 1 };
}

function scopeName(o: Json): string {
  const s = o.instrumentationScope ?? o.instrumentationLibrary;
  return typeof s === 'object' && s !== null && typeof (s as Json).name === 'string' ? ((s as Json).name as string) : '';
}

type ResourceView = { attributes: Record<string, AnyValue> };

/**
 * The Resource last read from `resource._rawAttributes` pairs, and those pairs: a writer's objects
 * all carry the same Resource, so the next object's pairs are compared with these and, when equal,
 * its records share this Resource (frozen) instead of each building its own.
 */
interface ResourceMemo {
  raw: readonly unknown[] | undefined;
  resource: ResourceView | undefined;
}

/** Whether two `_rawAttributes` arrays hold the same pairs of the same primitive values (`-0` is not `0`). */
function samePairs(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const p = a[i];
    const q = b[i];
    if (!Array.isArray(p) || !Array.isArray(q) || p.length !== q.length || p[0] !== q[0] || !Object.is(p[1], q[1]) || typeof p[1] === 'object') return false;
  }
  return true;
}

/**
 * The Resource of an SDK-serialized object (`resource._rawAttributes` pairs or `resource.attributes`).
 * From pairs equal to the previous object's, the previous object's Resource (frozen).
 */
function resourceOf(o: Json, memo: ResourceMemo): ResourceView | undefined {
  const r = o.resource;
  if (typeof r !== 'object' || r === null) return undefined;
  const raw = (r as Json)._rawAttributes;
  if (Array.isArray(raw)) {
    if (memo.raw !== undefined && samePairs(raw, memo.raw)) return memo.resource;
    const attributes: Record<string, AnyValue> = {};
    for (const pair of raw) {
      if (Array.isArray(pair) && typeof pair[0] === 'string' && (typeof pair[1] === 'string' || typeof pair[1] === 'number' || typeof pair[1] === 'boolean')) {
        setAttribute(attributes, pair[0], pair[1]);
      }
    }
    const resource: ResourceView = Object.freeze({ attributes: Object.freeze(attributes) });
    memo.raw = raw;
    memo.resource = resource;
    return resource;
  }
  const attrs = (r as Json).attributes;
  return typeof attrs === 'object' && attrs !== null && !Array.isArray(attrs) ? { attributes: attrs as Record<string, AnyValue> } : undefined;
}

/**
 * Receives the records of a telemetry text one at a time, in file order, as
 * {@link readTelemetryText} reads them. Each record is fresh: nobody else holds it or its parts, but
 * for its Resource, which records of the same Resource may share (then frozen).
 */
export interface TelemetryRecordSink {
  /** A finished span. */
  span(span: RecordedSpan): void;
  /** A log record. */
  log(log: RecordedLog): void;
  /** `count` metric objects or OTLP `resourceMetrics` entries (not used by the guard). */
  metrics(count: number): void;
  /** An object that is neither a span, a log record, a metric export nor an OTLP request. */
  ignored(): void;
}

/** One SDK-serialized object (span, log record or metric export) into `sink`. */
function sdkObjectToRecords(o: Json, sink: TelemetryRecordSink, memo: ResourceMemo): boolean {
  const attrs = (typeof o.attributes === 'object' && o.attributes !== null ? o.attributes : {}) as Record<string, AnyValue>;
  const endTime = hr(o.endTime);
  if (typeof o.name === 'string' && endTime !== undefined) {
    const sc = ctx(o._spanContext ?? o.spanContext);
    if (sc === undefined) return false;
    let parent = ctx(o.parentSpanContext);
    if (parent === undefined && typeof o.parentSpanId === 'string' && o.parentSpanId !== '') {
      parent = { traceId: sc.traceId, spanId: o.parentSpanId, traceFlags: sc.traceFlags };
    }
    sink.span(
      new RecordedSpan({
        name: o.name,
        attributes: attrs,
        spanContext: sc,
        parentSpanContext: parent,
        startTime: hr(o.startTime) ?? endTime,
        endTime,
        scopeName: scopeName(o),
        resource: resourceOf(o, memo),
      }),
    );
    return true;
  }
  const time = hr(o._hrTime ?? o.hrTime);
  if (time !== undefined) {
    sink.log({
      hrTime: time,
      attributes: attrs,
      spanContext: ctx(o._spanContext ?? o.spanContext),
      eventName: typeof o.eventName === 'string' ? o.eventName : typeof o._eventName === 'string' ? o._eventName : undefined,
      instrumentationScope: { name: scopeName(o) },
      body: (o._body ?? o.body) as AnyValue,
      resource: resourceOf(o, memo),
    });
    return true;
  }
  if (Array.isArray(o.scopeMetrics)) {
    sink.metrics(1);
    return true;
  }
  return false;
}

/** One OTLP request object into `sink`. */
function otlpObjectToRecords(o: Json, sink: TelemetryRecordSink): void {
  const batch = otlpRequestToRecords(o);
  for (const s of batch.spans) sink.span(s);
  for (const l of batch.logs) sink.log(l);
  if (batch.metricCount > 0) sink.metrics(batch.metricCount);
}

/**
 * Read one telemetry file's contents record by record into `sink`: the same records, in the same
 * order, that {@link parseTelemetryText} appends to its batch. Each object is parsed and its
 * records handed over before the next object is read, so a sink that keeps only part of a record
 * lets the rest be collected young.
 *
 * @param contents - the file's contents, pretty SDK objects (qwen-code's outfile) or OTLP JSON
 *   lines: its text, or its bytes as read from disk (UTF-8). Bytes are the cheaper of the two for
 *   a large file: only one object at a time is decoded to a string, so no string of the whole file
 *   is built (for a file with any non-Latin-1 character that string takes two bytes a character).
 *   Decoding is as for reading the file as UTF-8 text: invalid sequences become U+FFFD. A byte
 *   order mark at the start is skipped (in text or bytes); anywhere else it is an error.
 * @param file - the name used in error messages
 * @param sink - receives every record
 * @param options - what to do with a cut last object (see {@link ReadTelemetryOptions})
 * @throws {@link TelemetryParseError} for malformed JSON or anything but whitespace between
 *   objects (a printable ASCII character is quoted, any other named by its code point, `U+FEFF`;
 *   with the line and column, in characters of the decoded text, where the offending
 *   object or character starts), or a file with no telemetry at all; the records of the objects
 *   before the error have been handed over
 */
export function readTelemetryText(contents: string | Uint8Array, file: string, sink: TelemetryRecordSink, options: ReadTelemetryOptions = {}): void {
  const units: Contents = typeof contents === 'string' || Buffer.isBuffer(contents) ? contents : Buffer.from(contents.buffer, contents.byteOffset, contents.byteLength);
  let objects = 0;
  let recognised = 0;
  const memo: ResourceMemo = { raw: undefined, resource: undefined };
  const n = units.length;
  let pos = byteOrderMarkLength(units);
  while (pos < n) {
    const c = unitAt(units, pos);
    if (c === 32 || c === 10 || c === 13 || c === 9) {
      pos++;
      continue;
    }
    if (c !== 123 && c !== 91) {
      throw new TelemetryParseError(file, ...lineCol(units, pos), `unexpected character ${characterAt(units, pos)} between JSON objects`);
    }
    let end: number;
    try {
      end = valueEnd(units, file, pos);
    } catch (err) {
      // The last object never closes: a cut file. Said, and what came before it is read.
      if (!(err instanceof TelemetryParseError && err.reason === TRUNCATED && options.onTruncatedEnd !== undefined && recognised > 0)) throw err;
      options.onTruncatedEnd({ file, line: err.line, column: err.column, length: n - pos });
      break;
    }
    const value = parseAt(units, file, pos, end);
    objects++;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new TelemetryParseError(file, ...lineCol(units, pos), 'expected a JSON object');
    }
    if (isOtlpRequest(value)) {
      otlpObjectToRecords(value, sink);
      recognised++;
    } else if (sdkObjectToRecords(value as Json, sink, memo)) {
      recognised++;
    } else {
      sink.ignored();
    }
    pos = end;
  }
  if (recognised === 0) {
    throw new TelemetryParseError(
      file,
      1,
      1,
      objects === 0
        ? 'empty file: no telemetry objects'
        : "no spans, log records or OTLP requests found (expected OTLP JSON lines, as a Collector's file exporter writes them, or a qwen-code or gemini-cli telemetry outfile)",
    );
  }
}

/**
 * Parse one telemetry file's text into whole records: every span and log record with all its
 * attributes, appended to `into`. (`replay` reads through {@link readTelemetryText} instead and
 * keeps only what the replay reads: see `parseReplayInput`.)
 *
 * @param contents - the file's contents: its text, or its UTF-8 bytes (see {@link readTelemetryText})
 * @param file - the name used in error messages
 * @param into - the batch to append to @defaultValue a new empty batch
 * @returns `into`
 * @throws {@link TelemetryParseError} for malformed JSON or a file with no telemetry at all
 */
export function parseTelemetryText(contents: string | Uint8Array, file: string, into: RecordBatch = emptyRecordBatch()): RecordBatch {
  readTelemetryText(contents, file, {
    span: (s) => {
      into.spans.push(s);
    },
    log: (l) => {
      into.logs.push(l);
    },
    metrics: (count) => {
      into.metricCount += count;
    },
    ignored: () => {
      into.ignoredCount += 1;
    },
  });
  return into;
}

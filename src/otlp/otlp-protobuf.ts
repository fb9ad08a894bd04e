/**
 * OTLP protobuf request bodies, decoded by static code that protobufjs-cli generates at build time
 * from the vendored official `opentelemetry-proto` definitions (see
 * `src/otlp/proto/opentelemetry-proto/ORIGIN.md` and `scripts/otlp-proto.mjs`).
 */
import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs/minimal.js';
import { opentelemetry } from './generated/otlp-proto.js';

/** OTLP signal of a request. */
export type OtlpSignal = 'traces' | 'logs' | 'metrics';

/** The conversion of a decoded message to its JSON-shaped object. */
const TO_OBJECT = { longs: String, bytes: Array, defaults: false, arrays: true } as const;

const collector = opentelemetry.proto.collector;

/**
 * The decoder's reader with string fields read natively: `Buffer#toString` instead of protobufjs's
 * JavaScript UTF-8 loop, and UTF-8 checked by `buffer.isUtf8` only when the text holds U+FFFD (what
 * an invalid sequence decodes to). Invalid UTF-8 is still rejected, as protobufjs rejects it; the
 * length is read by `Reader#size`, as protobufjs's own `stringVerify` and every other length-delimited
 * field read it (at most five bytes, below 2^31: an overlong length, or one past 32 bits that
 * `uint32` would truncate, is refused).
 */
class NativeStringReader extends protobuf.BufferReader {
  override stringVerify(): string {
    const length = this.size();
    const start = this.pos;
    const end = start + length;
    if (end > this.len) throw new RangeError(`index out of range: ${start} + ${length} > ${this.len}`);
    this.pos = end;
    const buf = this.buf as Buffer;
    const text = buf.toString('utf8', start, end);
    if (text.includes('\uFFFD') && !isUtf8(buf.subarray(start, end))) throw new TypeError('invalid UTF-8 in a string field');
    return text;
  }
}

/**
 * A reader over `body` for the generated decoders (which accept a reader in place of bytes).
 * @internal
 */
export function otlpReader(body: Uint8Array): protobuf.Reader {
  return new NativeStringReader(Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
}

/**
 * Decode an OTLP protobuf request body (`ExportTraceServiceRequest`, `ExportLogsServiceRequest` or
 * `ExportMetricsServiceRequest`, by `signal`) into its JSON-shaped object: field names in
 * lowerCamelCase as in OTLP/JSON, ids (`traceId`, `spanId`, …) and `bytesValue` as arrays of byte
 * values, 64-bit integers (`startTimeUnixNano`, `intValue`, …) as decimal strings, enums as
 * numbers, fields left at their default value absent, repeated fields always present as arrays.
 *
 * Fields are those of opentelemetry-proto v1.11.0 (so a log record's `event_name` arrives as
 * `eventName`); unknown fields are skipped.
 *
 * @param signal - Which export request the body holds (from the request path).
 * @param body - The request body, already decompressed.
 * @returns A fresh plain object; the caller may keep or change it.
 * @throws {Error} The decoder's error (`RangeError` "index out of range", "invalid wire type", …) when
 *   the body is not a valid message of that type.
 */
export function decodeOtlpProtobuf(signal: OtlpSignal, body: Uint8Array): Record<string, unknown> {
  switch (signal) {
    case 'traces': {
      const type = collector.trace.v1.ExportTraceServiceRequest;
      return type.toObject(type.decode(otlpReader(body)), TO_OBJECT);
    }
    case 'logs': {
      const type = collector.logs.v1.ExportLogsServiceRequest;
      return type.toObject(type.decode(otlpReader(body)), TO_OBJECT);
    }
    case 'metrics': {
      const type = collector.metrics.v1.ExportMetricsServiceRequest;
      return type.toObject(type.decode(otlpReader(body)), TO_OBJECT);
    }
    default: {
      const _exhaustive: never = signal;
      return _exhaustive;
    }
  }
}

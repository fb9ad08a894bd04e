/**
 * `OtlpProtobufRecordReader` (serve's protobuf reading, field by field) against the generated
 * decoders (`otlpProtobufToRecords`, then `RecordProjection#project`): the same records, or both
 * refuse the body. On real captures of every agent, on generated messages with what real exporters
 * rarely send (repeated and unknown fields, wrong wire types, nested values, out-of-order fields),
 * and on corrupted bodies.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { OtlpProtobufRecordReader } from '../src/otlp/otlp-protobuf-reader.js';
import { otlpProtobufToRecords } from '../src/otlp/otlp-protobuf-records.js';
import type { OtlpSignal } from '../src/otlp/otlp.js';
import { nanosToHrTime } from '../src/otlp/records.js';
import type { RecordBatch } from '../src/otlp/records.js';
import { batchSpanReads } from '../src/profiles/batch-span/batch-span-profile.js';
import { CLAUDE_CODE_READS } from '../src/profiles/claude-code/reads.js';
import { QWEN_CODE_READS } from '../src/profiles/qwen-code/reads.js';
import type { WireProfileReads } from '../src/profiles/wire-profile.js';
import { RecordProjection } from '../src/serve/projection.js';
import { loadFixture, toReadableLog, toReadableSpan } from './helpers/recorded.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PROTO_ROOT = join(ROOT, 'src/otlp/proto/opentelemetry-proto');

/** Every profile's reads, and none (whole records). */
const READS: ReadonlyArray<[string, WireProfileReads | undefined]> = [
  ['whole', undefined],
  ['qwen-code', QWEN_CODE_READS],
  ['claude-code', CLAUDE_CODE_READS],
  ['batch-span', batchSpanReads()],
];

/** The reference: the generated decoders, then serve's projection. */
function reference(signal: OtlpSignal, body: Uint8Array, reads: WireProfileReads | undefined): RecordBatch | 'refused' {
  let whole: RecordBatch;
  try {
    whole = otlpProtobufToRecords(signal, body);
  } catch {
    return 'refused';
  }
  return new RecordProjection(reads).project(whole);
}

function read(reader: OtlpProtobufRecordReader, signal: OtlpSignal, body: Uint8Array): RecordBatch | 'refused' {
  try {
    return reader.read(signal, body);
  } catch {
    return 'refused';
  }
}

function expectSame(signal: OtlpSignal, body: Uint8Array): void {
  for (const [name, reads] of READS) {
    const want = reference(signal, body, reads);
    const got = read(new OtlpProtobufRecordReader(reads), signal, body);
    expect(got, name).toStrictEqual(want);
  }
}

// The official schema, loaded at run time by protobufjs's full library (the encoders the static
// code leaves out), for encoding the collector's OTLP/JSON captures as an exporter would send them.
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(PROTO_ROOT, target);
root.loadSync(['opentelemetry/proto/collector/trace/v1/trace_service.proto', 'opentelemetry/proto/collector/logs/v1/logs_service.proto'], { keepCase: false });
const TracesRequest = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const LogsRequest = root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');

/** OTLP/JSON ids are hex; protobufjs's JSON form wants base64. */
function idsToBase64(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(idsToBase64);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] = (k === 'traceId' || k === 'spanId' || k === 'parentSpanId') && typeof x === 'string' ? Buffer.from(x, 'hex').toString('base64') : idsToBase64(x);
  }
  return out;
}

/** Each line of a collector `file` exporter capture, as the protobuf request an exporter sends. */
function protobufLines(path: string): Array<{ signal: OtlpSignal; body: Uint8Array }> {
  const out: Array<{ signal: OtlpSignal; body: Uint8Array }> = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const json = idsToBase64(JSON.parse(line)) as Record<string, unknown>;
    if ('resourceSpans' in json) out.push({ signal: 'traces', body: TracesRequest.encode(TracesRequest.fromObject(json)).finish() });
    if ('resourceLogs' in json) out.push({ signal: 'logs', body: LogsRequest.encode(LogsRequest.fromObject(json)).finish() });
  }
  return out;
}

const FIXTURES = join(ROOT, 'fixtures');
const jsonlCaptures = [
  ...readdirSync(join(FIXTURES, 'claude-code-2.1.328')).filter((f) => f.endsWith('.otlp.jsonl')).map((f) => join(FIXTURES, 'claude-code-2.1.328', f)),
  ...readdirSync(join(FIXTURES, 'genai'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.otlp.jsonl')).map((f) => join(FIXTURES, 'genai', f)),
];

describe('OtlpProtobufRecordReader: the records of the generated decoders, projected', () => {
  it.each(['acp-enforce', 'acp-shadow-drain', 'acp-shadow-nodrain', 'headless-yolo'])('qwen-code %s, as the SDK serializers encode it', (name) => {
    const records = loadFixture(name);
    const traces = ProtobufTraceSerializer.serializeRequest(records.spans.map(toReadableSpan))!;
    const logs = ProtobufLogsSerializer.serializeRequest(records.logs.map(toReadableLog))!;
    expectSame('traces', traces);
    expectSame('logs', logs);
    // and the projection is not trivial on this capture: bodies and unread attributes go
    const kept = new OtlpProtobufRecordReader(QWEN_CODE_READS).read('logs', logs);
    expect(kept.logs.length).toBeGreaterThan(0);
    expect(kept.logs.every((l) => l.body === undefined)).toBe(true);
    expect(otlpProtobufToRecords('logs', logs).logs.some((l) => l.body !== undefined)).toBe(true);
  });

  it('the shared qwen-code captures (/work/shared/fixtures copy in fixtures/) are the ones read above', () => {
    expect(readdirSync(join(FIXTURES, 'qwen-code-0.24.4')).filter((f) => f.endsWith('.outfile.json'))).toHaveLength(4);
  });

  it.each(jsonlCaptures.map((p) => [p.slice(FIXTURES.length + 1), p]))('%s, every line as its protobuf request', (_name, path) => {
    const lines = protobufLines(path);
    expect(lines.length).toBeGreaterThan(0);
    for (const { signal, body } of lines) expectSame(signal, body);
  });

  it('a body with records for several scopes and resources, the resource after the scopes', () => {
    // ResourceSpans { scope_spans = 2 …; resource = 1 } : fields in any order are one message
    const span = TracesRequest.fromObject({
      resourceSpans: [
        {
          scopeSpans: [{ scope: { name: 'a' }, spans: [{ name: 'qwen-code.tool', traceId: 'AAECAwQFBgcICQoLDA0ODw==', spanId: 'AAECAwQFBgc=', attributes: [{ key: 'call_id', value: { stringValue: 'c1' } }] }] }],
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'qwen-code' } }] },
        },
      ],
    });
    const body = TracesRequest.encode(span).finish();
    expectSame('traces', body);
    const got = new OtlpProtobufRecordReader().read('traces', body);
    expect(got.spans[0]?.resource?.attributes['service.name']).toBe('qwen-code');
  });
});

// ------------------------------------------------------------------------------------------------
// Generated messages, built field by field (so fields can repeat, come in any order, carry the
// wrong wire type or be unknown: what the generated decoders merge, skip or refuse).

type Field = Uint8Array;
const w = () => protobuf.Writer.create();
const len = (field: number, bytes: Uint8Array): Field => w().uint32((field << 3) | 2).bytes(bytes).finish();
const str = (field: number, s: string): Field => w().uint32((field << 3) | 2).string(s).finish();
const varint = (field: number, v: number): Field => w().uint32((field << 3) | 0).int32(v).finish();
const int64 = (field: number, v: bigint): Field => w().uint32((field << 3) | 0).int64(protobuf.util.LongBits.from(v.toString()).toLong() as unknown as number).finish();
const fixed64 = (field: number, v: bigint): Field => {
  const b = Buffer.alloc(9);
  b[0] = (field << 3) | 1;
  b.writeBigUInt64LE(v, 1);
  return b;
};
const fixed32 = (field: number, v: number): Field => w().uint32((field << 3) | 5).fixed32(v).finish();
const double = (field: number, v: number): Field => w().uint32((field << 3) | 1).double(v).finish();
const cat = (parts: readonly Uint8Array[]): Uint8Array => Buffer.concat(parts);

/** An unknown field, or a known field number with a wire type the schema does not give it. */
const stray = (fields: readonly number[]) =>
  fc.oneof(
    fc.tuple(fc.constantFrom(...fields, 99, 1000), fc.nat(300)).map(([f, v]) => varint(f, v)),
    fc.tuple(fc.constantFrom(...fields, 99), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })).map(([f, v]) => fixed64(f, v)),
    fc.tuple(fc.constantFrom(...fields, 99), fc.string({ maxLength: 4 })).map(([f, s]) => str(f, s)),
    fc.tuple(fc.constantFrom(...fields, 99), fc.nat()).map(([f, v]) => fixed32(f, v)),
  );

const KEYS = ['event.name', 'prompt_id', 'call_id', 'function_name', 'status', 'gen_ai.tool.name', 'qwen-code.prompt_id', 'session.id', 'tool.call_id', 'other', 'é', ''];
const text = fc.oneof(fc.constantFrom('qwen-code.tool_call', 'qwen-code.tool', 'read_file', 'error', 'success', ''), fc.string({ maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 4 }), fc.string({ minLength: 65, maxLength: 80 }));
/** Sometimes invalid UTF-8: a broken two-byte sequence. */
const badUtf8 = (field: number): Field => len(field, Uint8Array.from([0x61, 0xc3, 0x28]));

const anyValue: fc.Memo<Uint8Array> = fc.memo((n) => {
  const scalar = fc.oneof(
    text.map((s) => str(1, s)),
    fc.boolean().map((b) => varint(2, b ? 1 : 0)),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((v) => int64(3, v)),
    fc.constantFrom(0, 1.5, -2.25, Number.MAX_SAFE_INTEGER + 2, Number.NaN).map((d) => double(4, d)),
    fc.uint8Array({ maxLength: 4 }).map((b) => len(7, b)),
    fc.nat(5).map((i) => varint(8, i)),
  );
  const nested =
    n <= 1
      ? scalar
      : fc.oneof(
          fc.array(anyValue(n - 1), { maxLength: 3 }).map((vs) => len(5, cat(vs.map((v) => len(1, v))))),
          fc.array(fc.tuple(fc.constantFrom(...KEYS), anyValue(n - 1)), { maxLength: 3 }).map((kvs) => len(6, cat(kvs.map(([k, v]) => len(1, cat([str(1, k), len(2, v)])))))),
        );
  return fc.array(fc.oneof({ weight: 6, arbitrary: scalar }, { weight: 2, arbitrary: nested }, { weight: 1, arbitrary: stray([1, 2, 3, 4, 5, 6, 7, 8]) }), { maxLength: 3 }).map(cat);
});

const keyValue = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...KEYS).map((k) => str(1, k)) },
      { weight: 4, arbitrary: anyValue(3).map((v) => len(2, v)) },
      { weight: 1, arbitrary: fc.nat(9).map((i) => varint(3, i)) },
      { weight: 1, arbitrary: stray([1, 2, 3]) },
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map(cat);

const time = fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 1_700_000_000_000_000_000n, max: 1_900_000_000_000_000_000n }));
const id = (bytes: number) => fc.oneof(fc.uint8Array({ minLength: bytes, maxLength: bytes }), fc.constant(new Uint8Array()));
const SPAN_NAMES = ['qwen-code.tool', 'qwen-code.tool.execution', 'qwen-code.interaction', 'execute_tool read_file', 'http.request', ''];
const EVENTS = ['qwen-code.tool_call', 'qwen-code.api_request', 'tool_result', 'tool_decision', 'other', ''];

const span = fc
  .array(
    fc.oneof(
      id(16).map((b) => len(1, b)),
      id(8).map((b) => len(2, b)),
      text.map((s) => str(3, s)),
      id(8).map((b) => len(4, b)),
      fc.nat().map((v) => fixed32(16, v)),
      fc.constantFrom(...SPAN_NAMES).map((s) => str(5, s)),
      fc.nat(5).map((v) => varint(6, v)),
      time.map((t) => fixed64(7, t)),
      time.map((t) => fixed64(8, t)),
      { weight: 4, arbitrary: keyValue.map((kv) => len(9, kv)) },
      fc.nat(9).map((v) => varint(10, v)),
      fc.tuple(fc.constantFrom('exception', 'other'), fc.array(keyValue, { maxLength: 2 })).map(([name, kvs]) => len(11, cat([str(2, name), ...kvs.map((kv) => len(3, kv))]))),
      fc.array(keyValue, { maxLength: 2 }).map((kvs) => len(13, cat([len(1, new Uint8Array(16)), ...kvs.map((kv) => len(4, kv))]))),
      fc.array(fc.oneof(fc.nat(3).map((c) => varint(3, c)), text.map((s) => str(2, s))), { maxLength: 2 }).map((fs) => len(15, cat(fs))),
      stray([1, 2, 5, 7, 9, 15]),
    ),
    { maxLength: 12 },
  )
  .map(cat);

const logRecord = fc
  .array(
    fc.oneof(
      time.map((t) => fixed64(1, t)),
      time.map((t) => fixed64(11, t)),
      fc.nat(24).map((v) => varint(2, v)),
      text.map((s) => str(3, s)),
      anyValue(3).map((v) => len(5, v)),
      { weight: 4, arbitrary: fc.oneof({ weight: 3, arbitrary: keyValue }, { weight: 1, arbitrary: fc.constantFrom(...EVENTS).map((e) => cat([str(1, 'event.name'), len(2, str(1, e))])) }).map((kv) => len(6, kv)) },
      fc.nat(9).map((v) => varint(7, v)),
      fc.nat().map((v) => fixed32(8, v)),
      id(16).map((b) => len(9, b)),
      id(8).map((b) => len(10, b)),
      fc.constantFrom(...EVENTS).map((s) => str(12, s)),
      stray([1, 5, 6, 9, 12]),
    ),
    { maxLength: 12 },
  )
  .map(cat);

const scope = fc.array(fc.oneof(text.map((s) => str(1, s)), text.map((s) => str(2, s)), keyValue.map((kv) => len(3, kv))), { maxLength: 3 }).map(cat);
const resource = fc.array(fc.oneof(keyValue.map((kv) => len(1, kv)), fc.nat(3).map((v) => varint(2, v))), { maxLength: 3 }).map(cat);

/** A request of `record`s: resource entries of scope entries, each part possibly repeated or stray. */
const request = (record: fc.Arbitrary<Uint8Array>) => {
  const scopeEntry = fc
    .array(fc.oneof({ weight: 1, arbitrary: scope.map((s) => len(1, s)) }, { weight: 4, arbitrary: record.map((r) => len(2, r)) }, { weight: 1, arbitrary: text.map((s) => str(3, s)) }, { weight: 1, arbitrary: stray([1, 2]) }), { maxLength: 6 })
    .map(cat);
  const resourceEntry = fc
    .array(fc.oneof({ weight: 1, arbitrary: resource.map((r) => len(1, r)) }, { weight: 3, arbitrary: scopeEntry.map((s) => len(2, s)) }, { weight: 1, arbitrary: text.map((s) => str(3, s)) }, { weight: 1, arbitrary: stray([1, 2]) }), { maxLength: 4 })
    .map(cat);
  return fc.array(fc.oneof({ weight: 4, arbitrary: resourceEntry.map((r) => len(1, r)) }, { weight: 1, arbitrary: stray([1]) }), { maxLength: 3 }).map(cat);
};

/** A corruption: a byte changed, the body cut, or invalid UTF-8 spliced in. */
const corrupt = (body: Uint8Array) =>
  fc.oneof(
    fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, v]) => {
      const b = Uint8Array.from(body);
      if (b.length > 0) b[at % b.length] = v;
      return b;
    }),
    fc.nat().map((at) => body.subarray(0, body.length === 0 ? 0 : at % body.length)),
    fc.constant(cat([body, len(1, cat([len(2, cat([len(2, cat([badUtf8(5)]))]))]))])),
  );

describe('OtlpProtobufRecordReader on generated messages: the same records, or both refuse', () => {
  it('trace requests', () => {
    fc.assert(fc.property(request(span), (body) => expectSame('traces', body)), { numRuns: 400 });
  });

  it('logs requests (a repeated body is merged: the generated decoder reads that record)', () => {
    fc.assert(fc.property(request(logRecord), (body) => expectSame('logs', body)), { numRuns: 400 });
  });

  it('corrupted trace and logs requests', () => {
    fc.assert(fc.property(request(span).chain((b) => corrupt(b)), (body) => expectSame('traces', body)), { numRuns: 300 });
    fc.assert(fc.property(request(logRecord).chain((b) => corrupt(b)), (body) => expectSame('logs', body)), { numRuns: 300 });
  });

  it('invalid UTF-8 in a field no profile keeps is still refused (nothing is skipped unread)', () => {
    // a span whose only attribute has an unread key and a broken string value
    const body = len(1, len(2, len(2, cat([str(5, 'qwen-code.tool'), len(9, cat([str(1, 'unread.key'), len(2, badUtf8(1))]))]))));
    expect(() => otlpProtobufToRecords('traces', body)).toThrow();
    expect(() => new OtlpProtobufRecordReader(QWEN_CODE_READS).read('traces', body)).toThrow();
    // and in a log body, which serve drops
    const log = len(1, len(2, len(2, cat([len(5, badUtf8(1)), len(6, cat([str(1, 'event.name'), len(2, str(1, 'qwen-code.tool_call'))]))]))));
    expect(() => new OtlpProtobufRecordReader(QWEN_CODE_READS).read('logs', log)).toThrow();
  });

  it('a refused body appends nothing to the batch given', () => {
    const into = new OtlpProtobufRecordReader().read('traces', new Uint8Array());
    const good = len(1, len(2, len(2, str(5, 'qwen-code.tool'))));
    expect(() => new OtlpProtobufRecordReader().read('traces', cat([good, Uint8Array.from([0x0a, 0xff, 0xff, 0xff])]), into)).toThrow();
    expect(into.spans).toHaveLength(0);
  });

  it('timestamps: every 64-bit value gives the HrTime of its decimal text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 62n }), fc.constantFrom(0n, 1n, 999_999_999n, 1_000_000_000n, 2n ** 53n - 1n, 2n ** 53n + 1n, 2n ** 64n - 1n)), (nanos) => {
        const body = len(1, len(2, len(2, cat([str(5, 'x'), fixed64(7, nanos), fixed64(8, nanos)]))));
        const s = new OtlpProtobufRecordReader().read('traces', body).spans[0]!;
        expect(s.startTime).toStrictEqual(nanosToHrTime(nanos.toString()));
        expect(s.endTime).toStrictEqual(nanosToHrTime(nanos.toString()));
      }),
      { numRuns: 2000 },
    );
  });
});

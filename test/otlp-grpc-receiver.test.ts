/**
 * The OTLP/gRPC receiver on 127.0.0.1: real OTLP/gRPC exporters of the OpenTelemetry JS SDK, and a
 * raw grpc-js client (and raw HTTP/2) for the bad inputs the exporters never send. The answers
 * are the OTLP/gRPC specification's status codes; none quotes the input.
 */
import { connect, constants as h2 } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { credentials, makeGenericClientConstructor, Metadata, status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OtlpSignal } from '../src/otlp/otlp.js';
import type { RecordBatch } from '../src/otlp/records.js';
import { IngestBudget } from '../src/serve/ingest-budget.js';
import { startOtlpGrpcReceiver } from '../src/serve/otlp-grpc-receiver.js';
import type { OtlpGrpcReceiver } from '../src/serve/otlp-grpc-receiver.js';
import { loadFixture, toReadableLog, toReadableSpan } from './helpers/recorded.js';

const MAX = 1_000_000;
const TRACE_EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const LOGS_EXPORT = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';
const METRICS_EXPORT = '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export';
/** Marker in bad inputs: no answer may quote it. */
const MARKER = 'S3CR3T-/workspace/demo/secret.txt';

const received: Array<{ signal: OtlpSignal; records: RecordBatch }> = [];
let failNext = false;
let receiver: OtlpGrpcReceiver;

beforeAll(async () => {
  receiver = await startOtlpGrpcReceiver({
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: MAX,
    onRecords: (records, signal) => {
      if (failNext) {
        failNext = false;
        throw new Error(`listener failed on ${MARKER}`);
      }
      received.push({ signal, records });
    },
  });
});

afterAll(async () => {
  await receiver?.close();
});

afterEach(() => {
  received.length = 0;
  failNext = false;
});

const identity = (b: Buffer): Buffer => b;
const clients: Array<{ close(): void }> = [];
afterAll(() => {
  for (const c of clients) c.close();
});

/** A raw unary call of `path` with `body` as the request message bytes. */
function call(path: string, body: Uint8Array, options: { gzip?: boolean } = {}): Promise<{ error: ServiceError | null; response?: Buffer }> {
  const Client = makeGenericClientConstructor(
    { Export: { path, requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity } },
    'RawOtlp',
  );
  const client = new Client(receiver.address, credentials.createInsecure(), options.gzip === true ? { 'grpc.default_compression_algorithm': 2 } : {});
  clients.push(client);
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, identity, identity, Buffer.from(body), new Metadata(), { deadline: Date.now() + 5_000 }, (error: ServiceError | null, response?: Buffer) =>
      resolve({ error, response }),
    );
  });
}

function exportAll<T>(exporter: { export(items: T[], done: (r: ExportResult) => void): void }, items: T[]): Promise<ExportResult> {
  return new Promise((done) => exporter.export(items, done));
}

const validLogsBody = (): Uint8Array => {
  const logs = loadFixture('acp-enforce').logs.slice(0, 20).map(toReadableLog);
  const body = ProtobufLogsSerializer.serializeRequest(logs);
  if (body === undefined) throw new Error('serializer gave nothing');
  return body;
};

/** A length-delimited field 1 (resource_logs) whose content is not a ResourceLogs: the marker, then an invalid wire type. */
const malformed = (): Buffer => {
  const inner = Buffer.concat([Buffer.from([0x0a, MARKER.length]), Buffer.from(MARKER), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x07])]);
  return Buffer.concat([Buffer.from([0x0a, inner.length]), inner]);
};

describe('OTLP/gRPC receiver: real SDK exporters', () => {
  it('the SDK OTLP/gRPC trace and log exporters deliver a real capture whole', async () => {
    const capture = loadFixture('acp-enforce');
    const traces = new OTLPTraceExporter({ url: `http://${receiver.address}` });
    const logs = new OTLPLogExporter({ url: `http://${receiver.address}`, compression: 'gzip' as never });
    try {
      const [t, l] = await Promise.all([exportAll(traces, capture.spans.map(toReadableSpan)), exportAll(logs, capture.logs.map(toReadableLog))]);
      expect(t.code).toBe(ExportResultCode.SUCCESS);
      expect(l.code).toBe(ExportResultCode.SUCCESS);
    } finally {
      await Promise.all([traces.shutdown(), logs.shutdown()]);
    }
    const spans = received.filter((r) => r.signal === 'traces').flatMap((r) => r.records.spans);
    const logRecords = received.filter((r) => r.signal === 'logs').flatMap((r) => r.records.logs);
    expect(spans.map((s) => s.spanContext().spanId).sort()).toEqual(capture.spans.map((s) => s.spanContext().spanId).sort());
    expect(logRecords).toHaveLength(capture.logs.length);
    const toolCalls = logRecords.filter((l) => l.attributes['event.name'] === 'qwen-code.tool_call');
    expect(toolCalls.map((l) => l.attributes['call_id']).sort()).toEqual(
      capture.logs.filter((l) => l.attributes['event.name'] === 'qwen-code.tool_call').map((l) => l.attributes['call_id']).sort(),
    );
    const tool = spans.find((s) => s.name === 'qwen-code.tool.execution');
    expect(tool?.attributes['error_type']).toBe('file_not_found');
  });
});

describe('OTLP/gRPC receiver: answers (127.0.0.1)', () => {
  it('a valid request is OK with an empty ExportLogsServiceResponse (no partial_success)', async () => {
    const r = await call(LOGS_EXPORT, validLogsBody());
    expect(r.error).toBeNull();
    expect(r.response?.length).toBe(0);
    expect(received.map((x) => x.records.logs.length)).toEqual([20]);
  });

  it('a gzip-compressed request is OK', async () => {
    const r = await call(LOGS_EXPORT, validLogsBody(), { gzip: true });
    expect(r.error).toBeNull();
    expect(received).toHaveLength(1);
  });

  it('malformed protobuf is INVALID_ARGUMENT, naming the expected message and quoting nothing', async () => {
    const r = await call(LOGS_EXPORT, malformed());
    expect(r.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(r.error?.details).toBe('malformed protobuf: not a valid ExportLogsServiceRequest');
    expect(received).toEqual([]);
  });

  it('an OTLP/JSON body sent as a protobuf message is INVALID_ARGUMENT and quotes nothing', async () => {
    const json = Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: MARKER }] }] }] }));
    const r = await call(TRACE_EXPORT, json);
    expect(r.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(r.error?.details).not.toContain('S3CR3T');
    expect(r.error?.details).not.toContain('workspace');
  });

  it('a message larger than the limit is RESOURCE_EXHAUSTED, before it is decoded', async () => {
    const r = await call(LOGS_EXPORT, Buffer.alloc(MAX + 1, 0x0a));
    expect(r.error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(received).toEqual([]);
  });

  it('a gzip bomb (small on the wire, beyond the limit once inflated) is RESOURCE_EXHAUSTED', async () => {
    // a valid ExportLogsServiceRequest that is mostly one long string: it compresses ~1000:1
    const body = ProtobufLogsSerializer.serializeRequest([{ ...toReadableLog(loadFixture('acp-enforce').logs[0] as never), body: 'a'.repeat(2 * MAX) }]);
    expect(body).toBeDefined();
    expect(gzipSync(body as Uint8Array).length).toBeLessThan(MAX / 10);
    const r = await call(LOGS_EXPORT, body as Uint8Array, { gzip: true });
    expect(r.error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(received).toEqual([]);
  });

  it('a compressed message that does not inflate is INTERNAL (grpc-js) and quotes nothing', async () => {
    const reply = await rawHttp2(LOGS_EXPORT, 'gzip', Buffer.concat([Buffer.from([1]), u32(MARKER.length), Buffer.from(MARKER)]));
    expect(reply.grpcStatus).toBe(status.INTERNAL);
    expect(reply.grpcMessage).not.toContain('S3CR3T');
  });

  it('an unsupported compression is UNIMPLEMENTED', async () => {
    const reply = await rawHttp2(LOGS_EXPORT, 'snappy', Buffer.concat([Buffer.from([1]), u32(3), Buffer.from('abc')]));
    expect(reply.grpcStatus).toBe(status.UNIMPLEMENTED);
  });

  it('an unknown service or method is UNIMPLEMENTED', async () => {
    const r = await call('/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export', validLogsBody());
    expect(r.error?.code).toBe(status.UNIMPLEMENTED);
  });

  it('metrics are accepted and ignored, as on OTLP/HTTP', async () => {
    const r = await call(METRICS_EXPORT, Buffer.alloc(0));
    expect(r.error).toBeNull();
    expect(received).toEqual([]);
  });

  it('an empty request is OK and carries no records', async () => {
    const r = await call(TRACE_EXPORT, Buffer.alloc(0));
    expect(r.error).toBeNull();
    expect(received.map((x) => x.records.spans.length + x.records.logs.length)).toEqual([0]);
  });

  it('a listener that throws is INTERNAL without its message, and the next request is OK', async () => {
    failNext = true;
    const r = await call(LOGS_EXPORT, validLogsBody());
    expect(r.error?.code).toBe(status.INTERNAL);
    expect(r.error?.details).toBe('internal error');
    const again = await call(LOGS_EXPORT, validLogsBody());
    expect(again.error).toBeNull();
  });

  it('after all of that, 4 concurrent clients × 25 requests are all OK and every record arrives', async () => {
    const body = validLogsBody();
    const results = await Promise.all(Array.from({ length: 100 }, () => call(LOGS_EXPORT, body)));
    expect(results.filter((r) => r.error !== null)).toEqual([]);
    expect(received.reduce((n, r) => n + r.records.logs.length, 0)).toBe(100 * 20);
  });
});

describe('OTLP/gRPC receiver: the ingest budget shared with serve', () => {
  it('held records filling the budget: UNAVAILABLE (retryable), nothing decoded, the refusal reported; room again: OK', async () => {
    const budget = new IngestBudget({ maxBytes: 10_000 });
    const got: RecordBatch[] = [];
    const rejected: Array<{ signal: string; status: number; message: string }> = [];
    const small = await startOtlpGrpcReceiver({ host: '127.0.0.1', port: 0, maxMessageBytes: MAX, budget, onRecords: (r) => got.push(r), onRejected: (r) => rejected.push(r) });
    const saved = receiver;
    receiver = small;
    try {
      budget.hold(10_000); // the server holds a full budget of records waiting for their grace
      const refused = await call(LOGS_EXPORT, validLogsBody());
      expect(refused.error?.code).toBe(status.UNAVAILABLE);
      expect(got).toEqual([]);
      expect(rejected).toEqual([{ signal: 'logs', status: 503, grpcCode: status.UNAVAILABLE, message: refused.error?.details }]);
      budget.unhold(10_000); // judged and released
      const ok = await call(LOGS_EXPORT, validLogsBody());
      expect(ok.error).toBeNull();
      expect(got).toHaveLength(1);
      expect(budget.inFlightBytes).toBe(0);
    } finally {
      receiver = saved;
      await small.close();
    }
  });
});

describe('OTLP/gRPC receiver: lifecycle', () => {
  it('binding a port in use rejects; close is idempotent', async () => {
    await expect(startOtlpGrpcReceiver({ host: '127.0.0.1', port: receiver.port, maxMessageBytes: MAX, onRecords: () => undefined })).rejects.toThrow();
    const other = await startOtlpGrpcReceiver({ host: '127.0.0.1', port: 0, maxMessageBytes: MAX, onRecords: () => undefined });
    await other.close();
    await other.close();
  });
});

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** One gRPC call over raw HTTP/2, for framings a grpc-js client never sends. */
function rawHttp2(path: string, encoding: string, frame: Buffer): Promise<{ grpcStatus: number; grpcMessage: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://${receiver.address}`);
    session.on('error', reject);
    const req = session.request({
      [h2.HTTP2_HEADER_METHOD]: 'POST',
      [h2.HTTP2_HEADER_PATH]: path,
      [h2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      te: 'trailers',
      'grpc-encoding': encoding,
    });
    let headers: Record<string, unknown> = {};
    req.on('response', (h) => {
      headers = { ...headers, ...h };
    });
    req.on('trailers', (t) => {
      headers = { ...headers, ...t };
    });
    req.on('data', () => undefined);
    req.on('end', () => {
      session.close();
      resolve({ grpcStatus: Number(headers['grpc-status']), grpcMessage: decodeURIComponent(String(headers['grpc-message'] ?? '')) });
    });
    req.on('error', reject);
    req.end(frame);
  });
}

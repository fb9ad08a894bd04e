/**
 * `serve` against expansion bombs and budget bypasses (issue 34 items 1 and 2), at small scale: what
 * decoding builds is charged to the budget (decompressed bytes, decoded values and records), one
 * request's work is bounded (413 / RESOURCE_EXHAUSTED with a message saying what to send instead),
 * gRPC calls reserve their message before grpc-js reads it, and other clients are served meanwhile.
 */
import { connect, constants as h2 } from 'node:http2';
import { request as httpRequest } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Client, credentials, Metadata, status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { startGuardServer } from '../src/serve/guard-server.js';
import type { GuardServer } from '../src/serve/guard-server.js';
import { IngestBudget } from '../src/serve/ingest-budget.js';
import type { IngestTicket } from '../src/serve/ingest-budget.js';
import { startOtlpGrpcReceiver } from '../src/serve/otlp-grpc-receiver.js';
import type { OtlpGrpcReceiver } from '../src/serve/otlp-grpc-receiver.js';
import { countJsonValues } from '../src/otlp/request-limit.js';
import { otlpLogsBatchRequest } from './helpers/generators.js';

const MiB = 1024 * 1024;

let server: GuardServer | undefined;
let grpcReceiver: OtlpGrpcReceiver | undefined;
afterEach(async () => {
  await server?.close();
  await grpcReceiver?.close();
  server = undefined;
  grpcReceiver = undefined;
});

/** Largest reservation any one request reached, and the largest total charged at once. */
interface Peaks {
  perRequest: number;
  total: number;
}

/** Watch a budget: every ticket's largest reservation and the largest in-flight plus held total. */
function watch(budget: IngestBudget): Peaks {
  const peaks: Peaks = { perRequest: 0, total: 0 };
  const admit = budget.admit.bind(budget);
  const note = (t: IngestTicket): void => {
    peaks.perRequest = Math.max(peaks.perRequest, t.reserved);
    peaks.total = Math.max(peaks.total, budget.inFlightBytes + budget.heldBytes);
  };
  budget.admit = (declared: number) => {
    const t = admit(declared);
    if (IngestBudget.isRefusal(t)) return t;
    note(t);
    return {
      grow: (n: number) => {
        const ok = t.grow(n);
        note(t);
        return ok;
      },
      resize: (n: number) => {
        const ok = t.resize(n);
        note(t);
        return ok;
      },
      get reserved() {
        return t.reserved;
      },
      release: () => t.release(),
    };
  };
  return peaks;
}

interface Reply {
  readonly status: number;
  readonly body: string;
}

function post(url: string, path: string, headers: OutgoingHttpHeaders, body: Buffer | string): Promise<Reply> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: 'POST', path, headers, agent: false, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** An honest client: one logs-only prompt, retried on the budget's retryable answers as exporters do. */
async function honest(url: string, promptId: string): Promise<number> {
  const body = JSON.stringify(otlpLogsBatchRequest(promptId, Date.now()));
  for (let attempt = 0; attempt < 40; attempt++) {
    const r = await post(url, '/v1/logs', { 'content-type': 'application/json' }, body);
    if (r.status !== 429 && r.status !== 503) return r.status;
    await new Promise((done) => setTimeout(done, 100));
  }
  return 0;
}

// --- protobuf by hand (field numbers of opentelemetry-proto) ---
function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}
const field = (n: number, bytes: Buffer): Buffer => Buffer.concat([varint((n << 3) | 2), varint(bytes.length), bytes]);

/** `ExportTraceServiceRequest` of one ResourceSpans, one ScopeSpans holding `spans` (each an encoded `Span`). */
function traceRequest(spans: Buffer[]): Buffer {
  return field(1, field(2, Buffer.concat(spans.map((s) => field(2, s)))));
}

/** The protobuf bomb: `count` spans named `qwen-code.tool` and nothing else (18 bytes each). */
function spanBomb(count: number): Buffer {
  const one = field(2, field(5, Buffer.from('qwen-code.tool')));
  return field(1, field(2, Buffer.alloc(one.length * count, one)));
}

/** A span carrying one string attribute of `bytes` characters (which no profile reads). */
function paddedTraceRequest(bytes: number): Buffer {
  const keyValue = Buffer.concat([field(1, Buffer.from('padding')), field(2, field(1, Buffer.alloc(bytes, 'x')))]);
  return traceRequest([Buffer.concat([field(5, Buffer.from('unread')), field(9, keyValue)])]);
}

/** The JSON bomb: a traces request of empty spans, `bytes` long. */
function emptySpansJson(bytes: number): string {
  const head = '{"resourceSpans":[{"scopeSpans":[{"spans":[{}';
  const tail = ']}]}]}';
  return head + ',{}'.repeat(Math.floor((bytes - head.length - tail.length) / 3)) + tail;
}

describe('HTTP: what a request decodes into is charged and bounded (issue 34.1, 34.2)', () => {
  it('a 16 KB gzip body of 16 MiB of empty JSON spans is 413 before it is parsed; a client sending meanwhile is judged', async () => {
    server = await startGuardServer({ port: 0, graceMillis: 50, print: () => undefined, log: () => undefined });
    const peaks = watch(server.budget);
    const bomb = gzipSync(emptySpansJson(16 * MiB - 64));
    expect(bomb.length).toBeLessThan(48 * 1024);
    const [refused, other] = await Promise.all([
      post(server.url, '/v1/traces', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, bomb),
      honest(server.url, 'honest-json########1'),
    ]);
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.body)).toEqual({ code: 8, message: 'JSON body holds more than 1048576 values; send fewer records per request' });
    // charged what it inflated to, not the 16 KB received
    expect(peaks.perRequest).toBeGreaterThanOrEqual(16 * MiB - 64);
    expect(other).toBe(200);
    server.drain();
    expect(server.decisions.some((d) => d.promptId === 'honest-json########1')).toBe(true);
    expect(server.budget.inFlightBytes).toBe(0);
  });

  it('20 gzip bodies of 30 KB inflating to 1 MiB each against a 4 MiB budget: refused with 429 past the budget, never charged beyond it', async () => {
    server = await startGuardServer({ port: 0, graceMillis: 50, ingestBudgetBytes: 4 * MiB, print: () => undefined, log: () => undefined });
    const peaks = watch(server.budget);
    const request = otlpLogsBatchRequest('padded#1', Date.now()) as { resourceLogs: Array<{ scopeLogs: Array<{ logRecords: Array<{ body: unknown }> }> }> };
    const first = request.resourceLogs[0]?.scopeLogs[0]?.logRecords[0];
    if (first === undefined) throw new Error('generator shape');
    first.body = { stringValue: 'y'.repeat(MiB) };
    const body = gzipSync(JSON.stringify(request));
    expect(body.length).toBeLessThan(32 * 1024);
    const replies = await Promise.all(Array.from({ length: 20 }, () => post(server?.url ?? '', '/v1/logs', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body)));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(peaks.perRequest).toBeGreaterThan(MiB);
    expect(peaks.total).toBeLessThanOrEqual(4 * MiB);
  });

  it('a 16 MiB protobuf of 932,065 qwen-code.tool spans is 413 once its 65,537th span is read; a client sending meanwhile is judged', async () => {
    server = await startGuardServer({ port: 0, graceMillis: 50, print: () => undefined, log: () => undefined });
    const bomb = spanBomb(932_065);
    expect(bomb.length).toBeLessThanOrEqual(16 * MiB);
    const [refused, other] = await Promise.all([post(server.url, '/v1/traces', { 'content-type': 'application/x-protobuf' }, bomb), honest(server.url, 'honest-pb########1')]);
    expect(refused.status).toBe(413);
    expect(other).toBe(200);
    server.drain();
    expect(server.ingestStats().held).toBe(0);
    expect(server.decisions.some((d) => d.promptId === 'honest-pb########1')).toBe(true);
  });

  it('--max-records-per-request is the bound: a request at it is accepted, one over it is 413', async () => {
    server = await startGuardServer({ port: 0, graceMillis: 50, maxRecordsPerRequest: 100, print: () => undefined, log: () => undefined });
    const at = await post(server.url, '/v1/traces', { 'content-type': 'application/x-protobuf' }, spanBomb(100));
    const over = await post(server.url, '/v1/traces', { 'content-type': 'application/x-protobuf' }, spanBomb(101));
    expect([at.status, over.status]).toEqual([200, 413]);
  });
});

describe('countJsonValues', () => {
  it.each([
    { text: '{}', values: 2 },
    { text: '{"a":[1,2,3]}', values: 5 },
    { text: '{"a":"{[,,,]}"}', values: 2 },
    { text: '{"a":"\\"{,"}', values: 2 },
    { text: '[{},{},{}]', values: 7 },
  ])('$text → $values (every container and separator outside strings, plus one)', ({ text, values }) => {
    expect(countJsonValues(Buffer.from(text), 100)).toBe(values);
  });
  it('stops past the limit', () => {
    expect(countJsonValues(Buffer.from('[' + '0,'.repeat(1000) + '0]'), 10)).toBe(11);
  });
});

// --- gRPC ---
const TRACE_EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const identity = (b: Buffer): Buffer => b;

function grpcCall(client: Client, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(TRACE_EXPORT, identity, identity, body, new Metadata(), { deadline: Date.now() + 20_000 }, (err: ServiceError | null) => resolve(err === null ? status.OK : err.code));
  });
}

describe('gRPC: a call reserves its message in the budget before grpc-js reads it (issue 34.2)', () => {
  it.each([
    { desc: '12 calls of 1.5 MiB', gzip: false, message: () => paddedTraceRequest(1.5 * MiB) },
    { desc: '12 gzip calls of a few KB inflating to 1.9 MiB', gzip: true, message: () => paddedTraceRequest(1.9 * MiB) },
  ])('$desc against a 4 MiB budget (2 MiB messages): RESOURCE_EXHAUSTED past the budget, never charged beyond it', async ({ gzip, message }) => {
    const budget = new IngestBudget({ maxBytes: 4 * MiB });
    const peaks = watch(budget);
    let accepted = 0;
    grpcReceiver = await startOtlpGrpcReceiver({ host: '127.0.0.1', port: 0, maxMessageBytes: 2 * MiB, budget, onRecords: () => (accepted += 1) });
    // one connection per call, as many exporters would open
    const clients = Array.from({ length: 12 }, () => new Client(grpcReceiver?.address ?? '', credentials.createInsecure(), gzip ? { 'grpc.default_compression_algorithm': 2 } : {}));
    try {
      const body = message();
      const codes = await Promise.all(clients.map((c) => grpcCall(c, body)));
      expect(codes.filter((c) => c === status.RESOURCE_EXHAUSTED).length).toBeGreaterThan(0);
      expect(codes.every((c) => c === status.OK || c === status.RESOURCE_EXHAUSTED)).toBe(true);
      expect(accepted).toBe(codes.filter((c) => c === status.OK).length);
      expect(peaks.total).toBeLessThanOrEqual(4 * MiB);
      expect(budget.inFlightBytes).toBe(0);
      // and once they are done, a call is accepted again
      expect(await grpcCall(clients[0] as Client, paddedTraceRequest(16))).toBe(status.OK);
    } finally {
      for (const c of clients) c.close();
    }
  });

  it('the protobuf span bomb over gRPC is RESOURCE_EXHAUSTED, saying why', async () => {
    const messages: string[] = [];
    grpcReceiver = await startOtlpGrpcReceiver({ host: '127.0.0.1', port: 0, maxMessageBytes: 16 * MiB, onRecords: () => undefined, onRejected: (r) => messages.push(r.message) });
    const client = new Client(grpcReceiver.address, credentials.createInsecure());
    try {
      expect(await grpcCall(client, spanBomb(932_065))).toBe(status.RESOURCE_EXHAUSTED);
      expect(messages).toEqual(['request holds more than 65536 records; send fewer per request']);
    } finally {
      client.close();
    }
  });

  it('a call that never sends its message ends with DEADLINE_EXCEEDED at the call timeout, and its reservation is given back', async () => {
    const budget = new IngestBudget({ maxBytes: 4 * MiB });
    grpcReceiver = await startOtlpGrpcReceiver({ host: '127.0.0.1', port: 0, maxMessageBytes: 2 * MiB, budget, callTimeoutMillis: 300, onRecords: () => undefined });
    const session = connect(`http://${grpcReceiver.address}`);
    try {
      const stream = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: TRACE_EXPORT, 'content-type': 'application/grpc', te: 'trailers' }, { endStream: false });
      const started = Date.now();
      const grpcStatus = await new Promise<string | undefined>((resolve) => {
        stream.on('trailers', (t) => resolve(String(t['grpc-status'])));
        stream.on('response', (h) => {
          if (h['grpc-status'] !== undefined) resolve(String(h['grpc-status']));
        });
        stream.on('close', () => resolve(undefined));
      });
      expect(grpcStatus).toBe(String(status.DEADLINE_EXCEEDED));
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(budget.inFlightBytes).toBe(0);
    } finally {
      session.destroy();
    }
  });
});

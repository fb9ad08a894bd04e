/**
 * `serve` ingest (issue 13 items 1 and 6, issue 12 item 8): the compact projection, the byte
 * budget and its retryable answers, refusals the client can read (a 40 MiB chunked body gets its
 * 413), error bodies that say what is wrong without quoting input (JSON and protobuf), and refused
 * requests logged on stderr, rate-limited.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startGuardServer } from '../src/serve/guard-server.js';
import type { GuardServer } from '../src/serve/guard-server.js';
import { IngestBudget } from '../src/serve/ingest-budget.js';
import { RecordProjection } from '../src/serve/projection.js';
import { RejectionLog } from '../src/serve/rejection-log.js';
import { otlpRequestToRecords } from '../src/otlp/otlp.js';
import { WIRE_PROFILES } from '../src/profiles/registry.js';
import type { WireProfileDefinition } from '../src/profiles/registry.js';
import { QWEN_CODE_READS } from '../src/profiles/qwen-code/reads.js';
import { CLAUDE_CODE_READS } from '../src/profiles/claude-code/reads.js';
import { replayRecords } from '../src/replay/replay.js';
import { loadFixture } from './helpers/recorded.js';
import { otlpLogsBatchRequest } from './helpers/generators.js';

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

let server: GuardServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: Parameters<typeof startGuardServer>[0] = {}): Promise<{ s: GuardServer; errors: string[]; url: URL }> {
  const errors: string[] = [];
  server = await startGuardServer({ port: 0, graceMillis: 50, print: () => undefined, log: (l) => errors.push(l), ...options });
  return { s: server, errors, url: new URL(server.url) };
}

function send(url: URL, method: string, path: string, headers: OutgoingHttpHeaders, body?: Buffer | string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers, agent: false, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Decode a `google.rpc.Status` protobuf: field 1 varint code, field 2 string message. */
function decodeStatus(buf: Buffer): { code: number; message: string } {
  let i = 0;
  let code = 0;
  let message = '';
  const varint = (): number => {
    let n = 0;
    let shift = 0;
    for (;;) {
      const b = buf[i++] as number;
      n |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return n;
      shift += 7;
    }
  };
  while (i < buf.length) {
    const tag = varint();
    if (tag === 0x08) code = varint();
    else if (tag === 0x12) {
      const len = varint();
      message = buf.subarray(i, i + len).toString('utf8');
      i += len;
    } else throw new Error(`unexpected tag ${tag}`);
  }
  return { code, message };
}

describe('refusals the client can read', () => {
  it('a 40 MiB chunked body is answered 413 while the client is still sending, and the client reads it', async () => {
    const { url } = await start();
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const result = await new Promise<{ status: number; body: string; sentWhenAnswered: number }>((resolve, reject) => {
      let sent = 0;
      const req = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/v1/traces', headers: { 'content-type': 'application/json' }, agent: false });
      req.on('response', (res) => {
        const answeredAt = sent;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), sentWhenAnswered: answeredAt }));
      });
      req.on('error', reject);
      const pump = (): void => {
        while (sent < 40 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body)).toEqual({ code: 8, message: 'body larger than 16777216 bytes' });
    expect(result.sentWhenAnswered).toBeLessThan(40 * 1024 * 1024);
  });

  it.each([
    { desc: 'malformed JSON', path: '/v1/logs', headers: { 'content-type': 'application/json' }, body: '{"resourceLogs": [CANARY-1234', status: 400, message: /^malformed JSON/ },
    { desc: 'JSON of the wrong shape', path: '/v1/logs', headers: { 'content-type': 'application/json' }, body: '{"CANARY-1234": 1}', status: 400, message: /^not an OTLP export request/ },
    { desc: 'a wrong type inside', path: '/v1/logs', headers: { 'content-type': 'application/json' }, body: '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"CANARY-1234"}]}]}]}', status: [200, 400], message: /.*/ },
    { desc: 'an unknown path', path: '/v1/CANARY-1234', headers: { 'content-type': 'application/json' }, body: '{}', status: 404, message: /^unknown path; use \/v1\/traces/ },
    { desc: 'an unknown content-type', path: '/v1/logs', headers: { 'content-type': 'text/CANARY-1234' }, body: '{}', status: 415, message: /^unsupported content-type/ },
    { desc: 'an unknown content-encoding', path: '/v1/logs', headers: { 'content-type': 'application/json', 'content-encoding': 'CANARY-1234' }, body: '{}', status: 415, message: /^unsupported content-encoding/ },
  ])('$desc: says what is wrong, quotes no input, and is logged once on stderr without it', async ({ path, headers, body, status, message }) => {
    const { url, errors } = await start();
    const r = await send(url, 'POST', path, headers, body);
    if (Array.isArray(status)) expect(status).toContain(r.status);
    else expect(r.status).toBe(status);
    expect(r.body.toString('utf8')).not.toContain('CANARY');
    if (r.status !== 200) {
      expect((JSON.parse(r.body.toString('utf8')) as { message: string }).message).toMatch(message);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(new RegExp(`^serve: refused .*: ${r.status} `));
    }
    for (const e of errors) expect(e).not.toContain('CANARY');
  });

  it('malformed protobuf gets a 400 with a google.rpc.Status body (INVALID_ARGUMENT and a message)', async () => {
    const { url, errors } = await start();
    const body = Buffer.concat([Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), Buffer.from('CANARY-1234')]);
    const r = await send(url, 'POST', '/v1/traces', { 'content-type': 'application/x-protobuf' }, body);
    expect(r.status).toBe(400);
    expect(r.headers['content-type']).toBe('application/x-protobuf');
    expect(decodeStatus(r.body)).toEqual({ code: 3, message: 'malformed protobuf: not a valid OTLP traces export request' });
    expect(errors).toEqual(['serve: refused a /v1/traces request: 400 malformed protobuf: not a valid OTLP traces export request']);
  });
});

describe('the byte budget', () => {
  it('held telemetry at the budget: 503 with Retry-After before the body is read; accepted again once it is judged', async () => {
    const { s, url, errors } = await start({ ingestBudgetBytes: 4096, graceMillis: 300 });
    const body = JSON.stringify(otlpLogsBatchRequest('budget-1########1', Date.now()));
    const first = await send(url, 'POST', '/v1/logs', { 'content-type': 'application/json' }, body);
    expect(first.status).toBe(200);
    expect(s.budget.heldBytes).toBeGreaterThan(0);
    const refused = await send(url, 'POST', '/v1/logs', { 'content-type': 'application/json' }, JSON.stringify(otlpLogsBatchRequest('budget-2########1', Date.now())));
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body.toString('utf8'))).toEqual({ code: 14, message: 'guard memory budget reached by held telemetry; retry later' });
    expect(errors.some((e) => e.includes('503 guard memory budget reached'))).toBe(true);
    // the held records are released after the grace window; the retry is accepted
    await new Promise((r) => setTimeout(r, 600));
    expect(s.budget.heldBytes).toBe(0);
    const retried = await send(url, 'POST', '/v1/logs', { 'content-type': 'application/json' }, JSON.stringify(otlpLogsBatchRequest('budget-2########1', Date.now())));
    expect(retried.status).toBe(200);
    s.drain();
    expect(s.decisions.map((d) => d.promptId).sort()).toEqual(['budget-1########1', 'budget-2########1']);
  });

  it.each([
    { desc: 'nothing held: a lone body is let in whatever its size', held: 0, inFlight: 0, declared: 10_000, expected: 'ticket' },
    { desc: 'held at the budget → 503 / UNAVAILABLE', held: 1000, inFlight: 0, declared: 10, expected: { httpStatus: 503, grpcStatus: 'UNAVAILABLE', reason: 'held' } },
    { desc: 'bodies in flight fill it → 429 / RESOURCE_EXHAUSTED', held: 0, inFlight: 800, declared: 300, expected: { httpStatus: 429, grpcStatus: 'RESOURCE_EXHAUSTED', reason: 'in_flight' } },
    { desc: 'room left', held: 300, inFlight: 300, declared: 300, expected: 'ticket' },
  ])('IngestBudget: $desc', ({ held, inFlight, declared, expected }) => {
    const b = new IngestBudget({ maxBytes: 1000 });
    b.hold(held);
    if (inFlight > 0) {
      const t = b.admit(inFlight);
      expect(IngestBudget.isRefusal(t)).toBe(false);
    }
    const r = b.admit(declared);
    if (expected === 'ticket') expect(IngestBudget.isRefusal(r)).toBe(false);
    else expect(r).toMatchObject({ ...(expected as object), retryAfterSeconds: 1 });
  });

  it('a ticket gives its bytes back once, and a chunked body grows it until the budget refuses', () => {
    const b = new IngestBudget({ maxBytes: 1000 });
    const t = b.admit(0);
    if (IngestBudget.isRefusal(t)) throw new Error('refused');
    expect(t.grow(600)).toBe(true);
    const other = b.admit(300);
    if (IngestBudget.isRefusal(other)) throw new Error('refused');
    expect(t.grow(200)).toBe(false);
    expect(b.inFlightBytes).toBe(900);
    t.release();
    t.release();
    other.release();
    expect(b.inFlightBytes).toBe(0);
  });
});

describe('the compact projection', () => {
  it('keeps only what the qwen-code profile reads, and a replay of the projected capture decides the same', async () => {
    const records = loadFixture('acp-enforce');
    const projected = new RecordProjection(QWEN_CODE_READS).project(records);
    expect(projected.spans.length).toBeLessThanOrEqual(records.spans.length);
    expect(projected.spans.length).toBeGreaterThan(0);
    const readSpanKeys = new Set(QWEN_CODE_READS.spanAttributes);
    for (const sp of projected.spans) for (const k of Object.keys(sp.attributes)) expect(readSpanKeys.has(k)).toBe(true);
    for (const l of projected.logs) expect(l.body).toBeUndefined();
    // (serve labels decisions with one mode; the in-tree guard's events, which replay reads for the mode, are not read by the profile)
    const whole = await replayRecords(records, { mode: 'enforce' });
    const slim = await replayRecords(projected, { mode: 'enforce' });
    const view = (r: typeof whole) => r.decisions.map((d) => [d.promptId, d.batch, d.outcome.decision, d.outcome.resetReason]);
    expect(view(slim)).toEqual(view(whole));
    expect(view(whole).length).toBeGreaterThan(0);
  });

  it('drops unread spans and attributes on arrival in serve', async () => {
    const { s, url } = await start();
    const junk = 'J'.repeat(10_000);
    const request = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              scope: { name: 'qwen-code' },
              spans: [
                { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'qwen-code.api_response', startTimeUnixNano: '1', endTimeUnixNano: '2', attributes: [{ key: 'big', value: { stringValue: junk } }] },
                {
                  traceId: '0af7651916cd43dd8448eb211c80319c',
                  spanId: 'b7ad6b7169203332',
                  name: 'qwen-code.interaction',
                  startTimeUnixNano: '1',
                  endTimeUnixNano: '2',
                  attributes: [
                    { key: 'qwen-code.prompt_id', value: { stringValue: 'p########1' } },
                    { key: 'gen_ai.input.messages', value: { stringValue: junk } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    expect(otlpRequestToRecords(request).spans).toHaveLength(2);
    const r = await send(url, 'POST', '/v1/traces', { 'content-type': 'application/json' }, JSON.stringify(request));
    expect(r.status).toBe(200);
    expect(s.ingestStats().spansKept).toBe(1);
    expect(s.budget.heldBytes).toBeLessThan(2_000);
  });

  it("the qwen-code reads name every span, event and attribute constant the profile's code uses", () => {
    const names = (file: string) =>
      new Set(readFileSync(new URL(`../src/profiles/qwen-code/${file}`, import.meta.url), 'utf8').match(/\b(?:ATTR|SPAN|EVENT)_[A-Z_]+\b/g) ?? []);
    const used = [...names('qwen-code-profile.ts')].filter((n) => n !== 'LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE');
    const declared = names('reads.ts');
    expect(used.filter((n) => !declared.has(n))).toEqual([]);
  });

  it('every real Claude Code capture decides the same after the claude-code projection', async () => {
    const dir = new URL('../fixtures/claude-code-2.1.328/', import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith('.otlp.jsonl'));
    expect(files.length).toBeGreaterThanOrEqual(11);
    let decided = 0;
    for (const f of files) {
      const records = parseTelemetryText(readFileSync(new URL(f, dir), 'utf8'), f);
      const projected = new RecordProjection(CLAUDE_CODE_READS).project(records);
      const view = (r: Awaited<ReturnType<typeof replayRecords>>) => r.decisions.map((d) => [d.promptId, d.batch, d.outcome.decision, d.outcome.resetReason]);
      const whole = view(await replayRecords(records, { mode: 'enforce', profile: 'claude-code' }));
      expect(view(await replayRecords(projected, { mode: 'enforce', profile: 'claude-code' })), f).toEqual(whole);
      decided += whole.length;
    }
    expect(decided).toBeGreaterThan(0);
  });

  it("the claude-code reads hold every attribute key the profile's code names", () => {
    const code = readFileSync(new URL('../src/profiles/claude-code/claude-code-profile.ts', import.meta.url), 'utf8');
    const keys = [...code.matchAll(/const ATTR_[A-Z_]+ = '([^']+)'/g)].map((m) => m[1]);
    expect(keys.length).toBeGreaterThan(5);
    const declared = new Set([...CLAUDE_CODE_READS.spanAttributes, ...CLAUDE_CODE_READS.logAttributes]);
    expect(keys.filter((k) => !declared.has(k as string))).toEqual([]);
  });

  it('every built-in profile with fixed span names declares its reads (genai span names carry model and tool names)', () => {
    for (const [name, def] of Object.entries(WIRE_PROFILES) as [string, WireProfileDefinition][]) {
      if (name === 'genai') expect(def.reads).toBeUndefined();
      else expect(def.reads?.({})).toBeDefined();
    }
  });
});

describe('RejectionLog', () => {
  it('logs the first refusal of a kind at once, counts the rest for 10 s, then sums them up', () => {
    let now = 0;
    const lines: string[] = [];
    const log = new RejectionLog((l) => lines.push(l), 10_000, () => now);
    for (let i = 0; i < 50; i++) log.note('traces', 400, 'malformed protobuf: not a valid OTLP traces export request');
    log.note('logs', 503, 'guard memory budget reached by held telemetry; retry later');
    expect(lines).toEqual([
      'serve: refused a /v1/traces request: 400 malformed protobuf: not a valid OTLP traces export request',
      'serve: refused a /v1/logs request: 503 guard memory budget reached by held telemetry; retry later',
    ]);
    now = 10_001;
    log.note('traces', 400, 'malformed protobuf: not a valid OTLP traces export request');
    expect(lines[2]).toBe('serve: refused a /v1/traces request: 400 malformed protobuf: not a valid OTLP traces export request (and 49 more like it since the last line)');
    log.note(undefined, 404, 'unknown path; use /v1/traces, /v1/logs or /v1/metrics');
    log.note(undefined, 404, 'unknown path; use /v1/traces, /v1/logs or /v1/metrics');
    log.flush();
    expect(lines.slice(3)).toEqual([
      'serve: refused a request to an unknown path: 404 unknown path; use /v1/traces, /v1/logs or /v1/metrics',
      'serve: refused a request to an unknown path: 404 unknown path; use /v1/traces, /v1/logs or /v1/metrics (and 1 more like it since the last line)',
    ]);
  });

  it('names an OTLP/gRPC refusal by its service and gRPC status, not by an HTTP path', () => {
    const lines: string[] = [];
    const log = new RejectionLog((l) => lines.push(l), 10_000, () => 0);
    log.note('traces', 400, 'malformed protobuf: not a valid ExportTraceServiceRequest', 3);
    log.note('logs', 503, 'guard memory budget reached by held telemetry; retry later', 14);
    expect(lines).toEqual([
      'serve: refused an OTLP/gRPC TraceService call: INVALID_ARGUMENT malformed protobuf: not a valid ExportTraceServiceRequest',
      'serve: refused an OTLP/gRPC LogsService call: UNAVAILABLE guard memory budget reached by held telemetry; retry later',
    ]);
  });
});

describe('serve options', () => {
  it.each([
    { name: 'graceMillis', value: -5 },
    { name: 'maxBodyBytes', value: 'big' },
    { name: 'ingestBudgetBytes', value: 0 },
    { name: 'tickMillis', value: Number.NaN },
    { name: 'metricExportIntervalMillis', value: null },
  ])('$name = $value: the default and one note, no throw', async ({ name, value }) => {
    const notes: string[] = [];
    server = await startGuardServer({ port: 0, print: () => undefined, log: (l: string) => notes.push(l), [name]: value } as never);
    expect(notes).toEqual([expect.stringMatching(new RegExp(`^serve: ${name} must be an integer >= \\d+; using \\d+$`))]);
    const r = await send(new URL(server.url), 'POST', '/v1/logs', { 'content-type': 'application/json' }, '{}');
    expect(r.status).toBe(200);
  });
});

describe('what a held record is charged and keeps (ids, exception events, Resource)', () => {
  const MIB = 1024 * 1024;
  const big = 'x'.repeat(MIB);
  const hexId = (bytes: number) => 'ab'.repeat(bytes);
  const spanRequest = (o: { traceId?: string; resourceValue?: string; stack?: string }) => ({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'qwen-code' } }, { key: 'host.blob', value: { stringValue: o.resourceValue ?? 'small' } }] },
        scopeSpans: [
          {
            scope: { name: 'qwen-code' },
            spans: [
              {
                traceId: o.traceId ?? hexId(16),
                spanId: hexId(8),
                name: 'qwen-code.tool',
                startTimeUnixNano: '1764460800000000000',
                endTimeUnixNano: '1764460800001000000',
                attributes: [{ key: 'tool.call_id', value: { stringValue: 'c1' } }],
                events: o.stack === undefined ? [] : [{ name: 'exception', timeUnixNano: '1764460800001000000', attributes: [{ key: 'exception.stacktrace', value: { stringValue: o.stack } }] }],
                status: { code: 2 },
              },
            ],
          },
        ],
      },
    ],
  });
  const held = (req: unknown) => {
    const projection = new RecordProjection(QWEN_CODE_READS);
    const records = projection.project(otlpRequestToRecords(req as Parameters<typeof otlpRequestToRecords>[0]));
    expect(records.spans).toHaveLength(1);
    return records.spans[0] as NonNullable<(typeof records.spans)[number]>;
  };

  it('a projected record keeps only the Resource attributes anything reads (service.name stays, a 1 MiB blob does not)', () => {
    const span = held(spanRequest({ resourceValue: big }));
    expect(span.resource?.attributes).toEqual({ 'service.name': 'qwen-code' });
  });

  it('the estimate charges ids beyond their valid lengths and kept exception events by their size', async () => {
    const { estimateSpanBytes } = await import('../src/serve/projection.js');
    const plain = estimateSpanBytes(held(spanRequest({})));
    expect(estimateSpanBytes(held(spanRequest({ traceId: hexId(16 + MIB) })))).toBeGreaterThanOrEqual(plain + 2 * MIB);
    expect(estimateSpanBytes(held(spanRequest({ stack: big })))).toBeGreaterThanOrEqual(plain + MIB);
    // a valid record is charged what it was before (the fixed overheads hold ids of the valid lengths)
    expect(plain).toBeLessThan(1024);
  });
});

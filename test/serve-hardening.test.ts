/**
 * `serve` under hostile and heavy loopback traffic: malformed bodies, wrong types, oversized and
 * compressed-bomb bodies, wrong paths and methods, a stalled client, then a bounded load whose
 * records must all reach the guard. Everything runs on 127.0.0.1 and ends by itself.
 */
import { request as httpRequest, Agent } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuardServer } from '../src/serve/guard-server.js';
import type { GuardServer } from '../src/serve/guard-server.js';
import { otlpLogsBatchRequest } from './helpers/generators.js';

const MAX = 1_000_000;
let server: GuardServer;
let host: string;
let port: number;

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

function send(method: string, path: string, headers: OutgoingHttpHeaders, body?: Buffer | string, agent?: Agent): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port, method, path, headers, agent: agent ?? false, timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** A raw connection: write what we like, collect the reply until the server closes or `ms` pass. */
function raw(write: (socket: Socket) => void, ms = 3_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let data = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(data);
    };
    const timer = setTimeout(done, ms);
    socket.on('data', (c: Buffer) => {
      data += c.toString('latin1');
    });
    socket.on('error', () => undefined); // EPIPE / ECONNRESET once the server gave up on us
    socket.on('close', done);
    socket.on('connect', () => write(socket));
  });
}

const statusOf = (rawReply: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(rawReply)?.[1] ?? 0);
const validLogs = (promptId: string) => JSON.stringify(otlpLogsBatchRequest(promptId, Date.now()));

beforeAll(async () => {
  server = await startGuardServer({ port: 0, graceMillis: 50, maxBodyBytes: MAX, print: () => {}, log: () => undefined });
  const u = new URL(server.url);
  host = u.hostname;
  port = Number(u.port);
});

afterAll(async () => {
  await server?.close();
});

describe('serve hardening (127.0.0.1)', () => {
  it('malformed JSON is 400', async () => {
    const r = await send('POST', '/v1/logs', { 'content-type': 'application/json' }, '{"resourceLogs": [');
    expect(r.status).toBe(400);
  });

  it('JSON that is not an OTLP request is 400', async () => {
    expect((await send('POST', '/v1/logs', { 'content-type': 'application/json' }, '[1,2]')).status).toBe(400);
    expect((await send('POST', '/v1/logs', { 'content-type': 'application/json' }, '{"hello":1}')).status).toBe(400);
  });

  it('malformed protobuf is 400', async () => {
    // field 1, length-delimited, with a length far beyond the body
    const body = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02]);
    const r = await send('POST', '/v1/logs', { 'content-type': 'application/x-protobuf' }, body);
    expect(r.status).toBe(400);
  });

  it('a wrong content-type is 415', async () => {
    expect((await send('POST', '/v1/logs', { 'content-type': 'text/plain' }, validLogs('ct-1'))).status).toBe(415);
    expect((await send('POST', '/v1/traces', {}, validLogs('ct-2'))).status).toBe(415);
  });

  it('an unsupported content-encoding is 415 and a corrupt gzip body is 400', async () => {
    expect((await send('POST', '/v1/logs', { 'content-type': 'application/json', 'content-encoding': 'br' }, validLogs('ce-1'))).status).toBe(415);
    expect((await send('POST', '/v1/logs', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, 'not gzip')).status).toBe(400);
  });

  it('a declared oversized body is 413 before it is sent', async () => {
    const reply = await raw((s) => s.write(`POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${MAX + 1}\r\n\r\n{"resourceLogs":[`));
    expect(statusOf(reply)).toBe(413);
  });

  it('an undeclared (chunked) oversized body is 413', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const reply = await raw((s) => {
      s.write('POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
      let sent = 0;
      const pump = () => {
        while (sent <= MAX + chunk.length && !s.destroyed) {
          sent += chunk.length;
          if (!s.write(`${chunk.length.toString(16)}\r\n`) || !s.write(chunk) || !s.write('\r\n')) {
            s.once('drain', pump);
            return;
          }
        }
        if (!s.destroyed) s.write('0\r\n\r\n');
      };
      pump();
    });
    expect(statusOf(reply)).toBe(413);
  });

  it('a gzip bomb (small body, inflates beyond the limit) is 413', async () => {
    const bomb = gzipSync(Buffer.alloc(20 * MAX, 0x20));
    expect(bomb.length).toBeLessThan(MAX / 10);
    const r = await send('POST', '/v1/logs', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, bomb);
    expect(r.status).toBe(413);
  });

  it('an unknown path is 404 and GET is 405', async () => {
    expect((await send('POST', '/v1/nope', { 'content-type': 'application/json' }, '{}')).status).toBe(404);
    expect((await send('GET', '/', {})).status).toBe(404);
    expect((await send('GET', '/v1/logs', {})).status).toBe(405);
    expect((await send('PUT', '/v1/traces', { 'content-type': 'application/json' }, '{}')).status).toBe(405);
  });

  it('a valid gzip-compressed request is accepted', async () => {
    const r = await send('POST', '/v1/logs', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(validLogs('gz-1')));
    expect(r.status).toBe(200);
  });

  // A deeply nested AnyValue once overflowed the stack (500); nesting is now cut at a fixed depth.
  it('a deeply nested AnyValue is accepted with the nesting cut, never a 500', async () => {
    const depth = 20_000;
    const value = '{"arrayValue":{"values":['.repeat(depth) + '{"stringValue":"x"}' + ']}}'.repeat(depth);
    const body = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1","attributes":[{"key":"a","value":${value}}]}]}]}]}`;
    expect(body.length).toBeLessThan(MAX);
    const r = await send('POST', '/v1/logs', { 'content-type': 'application/json' }, body);
    expect(r.status).toBe(200);
  });

  it('a client that stalls mid-body does not block others', async () => {
    const stalled = connect({ host, port });
    stalled.on('error', () => undefined);
    await new Promise<void>((resolve) => stalled.on('connect', () => resolve()));
    stalled.write('POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"resourceLogs":[');
    try {
      const started = Date.now();
      const results = await Promise.all([0, 1, 2].map((i) => send('POST', '/v1/logs', { 'content-type': 'application/json' }, validLogs(`stall-${i}`))));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      stalled.destroy(); // we bound the test ourselves; the server's own timeout is 30 s
    }
  });

  it('after all of that, 200 requests from 4 concurrent keep-alive clients all get 200 and every record reaches the guard', async () => {
    const before = server.decisions.length;
    const lateBefore = server.lateRecords();
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const ids = Array.from({ length: 200 }, (_, i) => `load-${i}########1`);
    const statuses: number[] = [];
    let next = 0;
    const client = async () => {
      while (next < ids.length) {
        const id = ids[next++] as string;
        const r = await send('POST', '/v1/logs', { 'content-type': 'application/json' }, validLogs(id), agent);
        statuses.push(r.status);
      }
    };
    try {
      await Promise.all([client(), client(), client(), client()]);
    } finally {
      agent.destroy();
    }
    expect(statuses).toHaveLength(200);
    expect(statuses.every((s) => s === 200)).toBe(true);

    server.drain();
    const mine = server.decisions.slice(before).filter((d) => d.promptId.startsWith('load-'));
    expect(new Set(mine.map((d) => d.promptId)).size).toBe(200);
    for (const d of mine) {
      expect(d.receipt.complete).toBe(true);
      expect(d.receipt.observations.map((o) => o.callId).sort()).toEqual([`${d.promptId}-call-0`, `${d.promptId}-call-1`]);
      expect(d.outcome.decision).toBe('tracked');
    }
    expect(mine).toHaveLength(200);
    expect(server.lateRecords()).toBe(lateBefore);
  }, 15_000);
});

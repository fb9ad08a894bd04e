/**
 * `serve`'s OTLP/HTTP connections under slow and silent clients (issue 34 item 7): a connection that
 * sends nothing, slow headers and slow bodies are closed at the configured timeouts (Node checked
 * them only every 30 s: 10 s and 30 s timeouts fired at 32 s and 60 s), and the number of open
 * connections is bounded, said once while the limit holds.
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startOtlpHttpReceiver } from '../src/serve/otlp-http-receiver.js';
import type { OtlpHttpReceiver } from '../src/serve/otlp-http-receiver.js';

const HEADERS_TIMEOUT = 400;
const REQUEST_TIMEOUT = 800;
/** Closing may lag the timeout by the checking interval and a loaded machine's scheduling. */
const SLACK = 1_500;

let receiver: OtlpHttpReceiver | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await receiver?.close();
  receiver = undefined;
});

async function start(notices: string[] = [], maxConnections?: number): Promise<number> {
  receiver = await startOtlpHttpReceiver({
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 1024 * 1024,
    onRecords: () => undefined,
    headersTimeoutMillis: HEADERS_TIMEOUT,
    requestTimeoutMillis: REQUEST_TIMEOUT,
    maxConnections,
    onNotice: (l) => notices.push(l),
  });
  return Number(new URL(receiver.url).port);
}

/** Open a connection, run `drip` on it, and resolve with what it read and when it closed (ms after opening). */
function client(port: number, drip: (s: Socket) => void): Promise<{ closedAfter: number; read: string }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let read = '';
    const s = connect(port, '127.0.0.1', () => drip(s));
    sockets.push(s);
    s.on('data', (d: Buffer) => (read += d.toString('latin1')));
    s.on('error', () => undefined);
    s.on('close', () => resolve({ closedAfter: Date.now() - t0, read }));
  });
}

/** Write `text` every 100 ms until the socket closes. */
function every100(s: Socket, text: string): void {
  const timer = setInterval(() => {
    if (s.destroyed || !s.writable) clearInterval(timer);
    else s.write(text);
  }, 100);
  s.on('close', () => clearInterval(timer));
}

describe('serve OTLP/HTTP: slow and silent clients are closed at the configured timeouts', () => {
  it.each([
    { desc: 'a connection that sends nothing', limit: HEADERS_TIMEOUT, status: undefined, drip: () => undefined },
    {
      desc: 'headers sent one line every 100 ms',
      limit: HEADERS_TIMEOUT,
      status: '408',
      drip: (s: Socket) => {
        s.write('POST /v1/logs HTTP/1.1\r\nHost: x\r\n');
        every100(s, 'X-Slow: 1\r\n');
      },
    },
    {
      desc: 'a body sent one byte every 100 ms',
      limit: REQUEST_TIMEOUT,
      status: '408',
      drip: (s: Socket) => {
        s.write('POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n');
        every100(s, ' ');
      },
    },
  ])('$desc: closed after its timeout ($limit ms), not later', async ({ limit, status, drip }) => {
    const port = await start();
    const { closedAfter, read } = await client(port, drip);
    expect(closedAfter).toBeGreaterThanOrEqual(limit - 50);
    expect(closedAfter).toBeLessThan(limit + SLACK);
    if (status !== undefined) expect(read.startsWith(`HTTP/1.1 ${status}`)).toBe(true);
  });

  it('connections beyond the limit are closed as they arrive, said once; a request is served again once idle ones closed', async () => {
    const notices: string[] = [];
    const port = await start(notices, 4);
    const silent = Array.from({ length: 4 }, () => client(port, () => undefined));
    await new Promise((r) => setTimeout(r, 100));
    const beyond = await Promise.all(Array.from({ length: 3 }, () => client(port, (s) => s.write('POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}'))));
    for (const b of beyond) expect(b.read).toBe('');
    expect(notices).toEqual(['serve: 4 connections open (the limit): new connections are closed until some end (idle ones close after 400 ms)']);
    await Promise.all(silent);
    const r = await fetch(`${receiver?.url ?? ''}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(200);
  });
});

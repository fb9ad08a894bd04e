/* global process, console, URL, setTimeout, setInterval, clearInterval, Buffer */
// Reliability figures of docs/reliability.md ("A request's work is bounded"): a real `serve`
// process (the CLI) under one attack at a time while an honest client posts a small request every
// 20 ms. Prints, per attack: the answers the attacker got, the longest the honest client waited
// for an answer (how long serve was blocked for everyone else), the honest requests that failed,
// serve's peak RSS (VmHWM) and whether it survived.
// Usage: npm run build && node bench/serve-bombs.mjs [dist dir] [attack ...]
//   attacks: json-gzip-bomb, protobuf-bomb, gzip-x100, grpc-64x15MiB, grpc-gzip-x100
//   SERVE_HEAP_MIB=1024 runs serve with --max-old-space-size=1024 (what a 2 GiB container gives).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';

const MiB = 1024 * 1024;
const args = process.argv.slice(2);
const dist = args[0] !== undefined && args[0].includes('/') ? args.shift() : fileURLToPath(new URL('../dist', import.meta.url));
const selected = args.length > 0 ? args : ['json-gzip-bomb', 'protobuf-bomb', 'gzip-x100', 'grpc-64x15MiB', 'grpc-gzip-x100'];
const { Client, credentials, Metadata } = await import('@grpc/grpc-js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// --- bodies ---
function varint(n) {
  const out = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}
const field = (n, bytes) => Buffer.concat([varint((n << 3) | 2), varint(bytes.length), bytes]);
const spanBomb = (count) => {
  const one = field(2, field(5, Buffer.from('qwen-code.tool')));
  return field(1, field(2, Buffer.alloc(one.length * count, one)));
};
const padded = (bytes) => {
  const kv = Buffer.concat([field(1, Buffer.from('padding')), field(2, field(1, Buffer.alloc(bytes, 'x')))]);
  return field(1, field(2, field(2, Buffer.concat([field(5, Buffer.from('unread')), field(9, kv)]))));
};
const emptySpansJson = (bytes) => {
  const head = '{"resourceSpans":[{"scopeSpans":[{"spans":[{}';
  const tail = ']}]}]}';
  return head + ',{}'.repeat(Math.floor((bytes - head.length - tail.length) / 3)) + tail;
};

function post(port, path, headers, body, timeout = 120_000) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers, agent: false, timeout }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve(e.code ?? 'error'));
    req.end(body);
  });
}

const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const id = (b) => b;
function grpcCalls(address, body, count, gzip) {
  return Promise.all(
    Array.from({ length: count }, () => {
      const c = new Client(address, credentials.createInsecure(), gzip ? { 'grpc.default_compression_algorithm': 2 } : {});
      return new Promise((resolve) =>
        c.makeUnaryRequest(EXPORT, id, id, body, new Metadata(), { deadline: Date.now() + 120_000 }, (err) => {
          c.close();
          resolve(err === null ? 'OK' : String(err.code));
        }),
      );
    }),
  );
}

/** The honest client: a small request every 20 ms, one at a time, until told to stop. */
const HONEST = `
const { parentPort, workerData } = require('node:worker_threads');
const { request } = require('node:http');
let stop = false, longest = 0, honestFailed = 0, honestSent = 0;
parentPort.on('message', () => (stop = true));
const post = () => new Promise((resolve) => {
  const req = request({ host: '127.0.0.1', port: workerData.port, method: 'POST', path: '/v1/logs', headers: { 'content-type': 'application/json' }, agent: false, timeout: 60000 }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (e) => resolve(e.code || 'error'));
  req.end('{}');
});
(async () => {
  while (!stop) {
    const t0 = Date.now();
    const s = await post();
    honestSent += 1;
    if (s !== 200 && s !== 429 && s !== 503) honestFailed += 1;
    longest = Math.max(longest, Date.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  parentPort.postMessage({ longest, honestFailed, honestSent });
})();
`;

const ATTACKS = {
  'json-gzip-bomb': { budget: undefined, run: (p) => post(p.http, '/v1/traces', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(emptySpansJson(16 * MiB - 64))).then((s) => [s]) },
  'protobuf-bomb': { budget: undefined, run: (p) => post(p.http, '/v1/traces', { 'content-type': 'application/x-protobuf' }, spanBomb(932_065)).then((s) => [s]) },
  'gzip-x100': {
    budget: undefined,
    run: (p) => {
      const body = gzipSync(emptySpansJson(16 * MiB - 64));
      return Promise.all(Array.from({ length: 100 }, () => post(p.http, '/v1/traces', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body)));
    },
  },
  'grpc-64x15MiB': { budget: 32 * MiB, run: (p) => grpcCalls(`127.0.0.1:${p.grpc}`, padded(15 * MiB), 64, false) },
  'grpc-gzip-x100': { budget: 32 * MiB, run: (p) => grpcCalls(`127.0.0.1:${p.grpc}`, padded(15 * MiB), 100, true) },
};

async function measure(name) {
  const attack = ATTACKS[name];
  const [http, grpc] = [await freePort(), await freePort()];
  const heap = process.env.SERVE_HEAP_MIB;
  const child = spawn(
    process.execPath,
    [
      ...(heap === undefined ? [] : [`--max-old-space-size=${heap}`]),
      `${dist}/bin/repeated-tool-failure-guard.js`,
      'serve',
      '--port',
      String(http),
      '--grpc-port',
      String(grpc),
      ...(attack.budget === undefined ? [] : ['--ingest-budget-bytes', String(attack.budget)]),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let exited;
  child.on('exit', (code, signal) => (exited = signal ?? code));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  while (!stderr.includes('receiving OTLP/gRPC') && exited === undefined) await sleep(50);
  let hwm = 0;
  const sample = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) hwm = Math.max(hwm, Number(m[1]) * 1024);
    } catch {
      // exited
    }
  };
  const rss = setInterval(sample, 100);
  // The honest client runs on its own thread, so building the attack here never delays it.
  const honest = new Worker(HONEST, { eval: true, workerData: { port: http } });
  const honestResult = new Promise((resolve) => honest.once('message', resolve));
  await sleep(300);
  const t0 = Date.now();
  const answers = await attack.run({ http, grpc });
  const took = Date.now() - t0;
  await sleep(500);
  honest.postMessage('stop');
  const { longest, honestFailed, honestSent } = await honestResult;
  await honest.terminate();
  sample();
  clearInterval(rss);
  const alive = exited === undefined;
  child.kill('SIGTERM');
  await new Promise((r) => (exited === undefined ? child.on('exit', r) : r()));
  const tally = {};
  for (const a of answers) tally[a] = (tally[a] ?? 0) + 1;
  console.log(
    `${name.padEnd(16)} answers ${JSON.stringify(tally)} in ${took} ms; honest client: longest wait ${longest} ms, ${honestFailed}/${honestSent} failed; peak RSS ${Math.round(hwm / MiB)} MiB; ${alive ? 'survived' : `died (${exited})`}`,
  );
}

console.log(`serve from ${dist}${process.env.SERVE_HEAP_MIB === undefined ? '' : `, heap ${process.env.SERVE_HEAP_MIB} MiB`} (node ${process.version})`);
for (const name of selected) await measure(name);

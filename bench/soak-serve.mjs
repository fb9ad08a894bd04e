/* global process, console, URL, setTimeout, setInterval, clearInterval */
// Soak (issue 34, "Done when"): `serve` under the mixed attack (expansion bombs, clock skew, junk
// prompt ids, slowloris and silent connections) alongside honest traffic; no honest prompt may
// lose its decisions. Honest traffic: copies of a real qwen-code capture (the split OTLP/HTTP JSON
// requests of fixtures/cases/turn2/t2-18*: one prompt, 9 judged batches), each with its own
// session, prompt, trace and span ids, stamped now, posted over OTLP/HTTP and retried on 429/503
// as OTLP exporters retry. A prompt is lost when serve's decisions for it differ from replay's on
// the same records. The attackers run on their own threads; serve runs here (the library,
// `startGuardServer`, so its decisions can be read).
// Usage: npm run build && node bench/soak-serve.mjs [seconds=60] [honest sessions=30] [attacks=bombs,skew,junk,slowloris|none]
// Exit code 1 when an honest prompt lost its decisions.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const seconds = Number(process.argv[2] ?? 60);
const honestCount = Number(process.argv[3] ?? 30);
const attackKinds = (process.argv[4] ?? 'bombs,skew,junk,slowloris').split(',').filter((k) => k !== 'none' && k !== '');
const dist = fileURLToPath(new URL('../dist', import.meta.url));
const { startGuardServer } = await import(`${dist}/serve/guard-server.js`);
const { parseTelemetryText } = await import(`${dist}/otlp/telemetry-file.js`);
const { replayRecords } = await import(`${dist}/replay/replay.js`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MiB = 1024 * 1024;
const GRACE = 2_000;

const CASES = new URL('../fixtures/cases/turn2/', import.meta.url);
const LINES = ['t2-18b-split-logs-only.otlp.jsonl', 't2-18a-split-traces-only.otlp.jsonl'].flatMap((f) =>
  readFileSync(new URL(f, CASES), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((text) => ({ path: f.includes('traces') ? '/v1/traces' : '/v1/logs', text })),
);
const FIRST_NANOS = [...LINES.map((l) => l.text).join('\n').matchAll(/UnixNano":"(\d+)"/g)].reduce((m, x) => (BigInt(x[1]) < m ? BigInt(x[1]) : m), 10n ** 30n);

/** Copy `k` of the capture: its own ids, stamped `offsetMillis` from now. */
function copy(k, offsetMillis) {
  const shift = (BigInt(Date.now() + offsetMillis) * 1_000_000n) - FIRST_NANOS;
  const hex12 = k.toString(16).padStart(12, '0');
  const hex8 = k.toString(16).padStart(8, '0');
  return LINES.map(({ path, text }) => ({
    path,
    text: text
      .replace(/\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{12}\b/g, `$1${hex12}`)
      .replace(/("traceId":")([0-9a-f]{8})/g, `$1${hex8}`)
      .replace(/("(?:parentS|s)panId":")([0-9a-f]{8})/g, `$1${hex8}`)
      .replace(/\b(call_r[0-9]+_[0-9]+_[0-9a-f]+)\b/g, `$1_k${k}`)
      .replace(/(UnixNano":")(\d+)"/g, (_m, p, n) => `${p}${BigInt(n) + shift}"`),
  }));
}

function post(url, path, body) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const req = request({ host: u.hostname, port: u.port, method: 'POST', path, headers: { 'content-type': 'application/json' }, agent: false, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve(e.code ?? 'error'));
    req.end(body);
  });
}

/** An honest exporter: each request retried on 429/503 (and network errors) for up to 30 s. */
async function sendHonest(url, requests, stats) {
  for (const r of requests) {
    const deadline = Date.now() + 30_000;
    for (let wait = 200; ; wait = Math.min(2 * wait, 2_000)) {
      const t0 = Date.now();
      const s = await post(url, r.path, r.text);
      stats.longest = Math.max(stats.longest, Date.now() - t0);
      stats.sent += 1;
      if (s === 200) break;
      stats.retried += 1;
      if (Date.now() > deadline) {
        stats.failed += 1;
        break;
      }
      await sleep(wait);
    }
  }
}

// --- attackers, each on its own thread ---
const ATTACKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { request } = require('node:http');
const { connect } = require('node:net');
const { gzipSync } = require('node:zlib');
const u = new URL(workerData.url);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let stop = false;
const tally = {};
parentPort.on('message', () => (stop = true));
const post = (path, headers, body) => new Promise((resolve) => {
  const req = request({ host: u.hostname, port: u.port, method: 'POST', path, headers, agent: false, timeout: 60000 }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (e) => resolve(e.code || 'error'));
  req.end(body);
});
const count = (k) => (tally[k] = (tally[k] || 0) + 1);
const varint = (n) => { const o = []; while (n > 0x7f) { o.push((n & 0x7f) | 0x80); n = Math.floor(n / 128); } o.push(n); return Buffer.from(o); };
const field = (n, b) => Buffer.concat([varint((n << 3) | 2), varint(b.length), b]);
const nowNanos = (offsetMillis) => String(BigInt(Date.now() + offsetMillis) * 1000000n);
const logs = (records) => JSON.stringify({ resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'qwen-code' } }] }, scopeLogs: [{ scope: { name: 'qwen-code' }, logRecords: records }] }] });
const log = (offsetMillis, attrs) => ({ timeUnixNano: nowNanos(offsetMillis), attributes: Object.entries(attrs).map(([key, v]) => ({ key, value: { stringValue: v } })) });
const kinds = {
  async bombs() {
    const head = '{"resourceSpans":[{"scopeSpans":[{"spans":[{}';
    const json = gzipSync(head + ',{}'.repeat(Math.floor((16 * 1024 * 1024 - 64) / 3)) + ']}]}]}');
    const one = field(2, field(5, Buffer.from('qwen-code.tool')));
    const pb = field(1, field(2, Buffer.alloc(one.length * 932065, one)));
    while (!stop) {
      count('json-bomb ' + (await post('/v1/traces', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, json)));
      count('protobuf-bomb ' + (await post('/v1/traces', { 'content-type': 'application/x-protobuf' }, pb)));
      await Promise.all(Array.from({ length: 20 }, () => post('/v1/traces', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, json).then((s) => count('gzip-burst ' + s))));
      await sleep(1000);
    }
  },
  async skew() {
    let i = 0;
    while (!stop) {
      // a session a day ahead, one two days behind, one at 1e300 ns: each its own producer
      for (const [name, offset] of [['ahead', 86400000], ['behind', -172800000]]) {
        const s = 'skew-' + name + '-' + i;
        count(name + ' ' + (await post('/v1/logs', { 'content-type': 'application/json' }, logs([log(offset, { 'event.name': 'qwen-code.user_prompt', 'session.id': s, prompt_id: s + '########1' }), log(offset + 1, { 'event.name': 'qwen-code.api_request', 'session.id': s, prompt_id: s + '########1' })]))));
      }
      count('1e300 ' + (await post('/v1/logs', { 'content-type': 'application/json' }, logs([{ timeUnixNano: '1' + '0'.repeat(300), attributes: [{ key: 'event.name', value: { stringValue: 'qwen-code.api_request' } }] }]))));
      i += 1;
      await sleep(500);
    }
  },
  async junk() {
    let i = 0;
    while (!stop) {
      const records = Array.from({ length: 500 }, () => { i += 1; return log(0, { 'event.name': 'qwen-code.user_prompt', 'session.id': 'junk-' + i, prompt_id: 'junk-' + i + '########1' }); });
      count('junk ' + (await post('/v1/logs', { 'content-type': 'application/json' }, logs(records))));
    }
    tally['junk prompt ids'] = i;
  },
  async slowloris() {
    const open = new Set();
    while (!stop) {
      while (open.size < 300 && !stop) {
        const s = connect(Number(u.port), u.hostname);
        open.add(s);
        s.on('error', () => undefined);
        s.on('close', () => { open.delete(s); count('closed by serve'); });
        const kind = open.size % 3;
        if (kind === 1) s.on('connect', () => { s.write('POST /v1/logs HTTP/1.1\\r\\nHost: x\\r\\n'); const t = setInterval(() => (s.writable ? s.write('X-Slow: 1\\r\\n') : clearInterval(t)), 1000); s.on('close', () => clearInterval(t)); });
        if (kind === 2) s.on('connect', () => { s.write('POST /v1/logs HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: 100000\\r\\n\\r\\n{'); const t = setInterval(() => (s.writable ? s.write(' ') : clearInterval(t)), 1000); s.on('close', () => clearInterval(t)); });
        count('opened');
      }
      await sleep(200);
    }
    for (const s of open) s.destroy();
  },
};
kinds[workerData.kind]().then(() => parentPort.postMessage(tally));
`;

const server = await startGuardServer({
  port: 0,
  graceMillis: GRACE,
  ingestBudgetBytes: 128 * MiB,
  maxKeptDecisions: Number.POSITIVE_INFINITY,
  print: () => undefined,
  log: (l) => logLines.push(l),
  metricExportIntervalMillis: 3_600_000,
});
const logLines = [];
const started = Date.now();
console.log(`soak: serve on ${server.url}, grace ${GRACE} ms, budget 128 MiB; ${seconds} s of ${attackKinds.join(', ') || 'no attack'}; ${honestCount} honest sessions`);
const attackers = attackKinds.map((kind) => {
  const w = new Worker(ATTACKER, { eval: true, workerData: { url: server.url, kind } });
  return { kind, w, done: new Promise((resolve) => w.once('message', resolve)) };
});
let peakRss = 0;
const rss = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 200);
await sleep(2_000);
// Honest sessions start spread over the run, while the attack goes on.
const stats = { sent: 0, retried: 0, failed: 0, longest: 0 };
const honest = [];
const spacing = Math.max(0, (seconds * 1000 - 8_000) / honestCount);
const sends = [];
for (let k = 1; k <= honestCount; k++) {
  const requests = copy(k, 0);
  honest.push(requests);
  sends.push(sendHonest(server.url, requests, stats));
  await sleep(spacing);
}
await Promise.all(sends);
while (Date.now() - started < seconds * 1000) await sleep(200);
for (const a of attackers) a.w.postMessage('stop');
const tallies = await Promise.all(attackers.map((a) => Promise.race([a.done, sleep(90_000).then(() => ({ 'did not stop': 1 }))])));
for (const a of attackers) await a.w.terminate();
await sleep(4 * GRACE);
clearInterval(rss);
server.drain();
let lost = 0;
for (const requests of honest) {
  const records = parseTelemetryText(requests.map((r) => r.text).join('\n'), 'honest');
  const want = await replayRecords(records, { mode: 'shadow' });
  const ids = new Set(want.decisions.map((d) => d.promptId));
  const sig = (ds) => ds.map((d) => `${d.batch}:${d.outcome.decision}`).join(',');
  if (want.decisions.length === 0 || sig(server.decisions.filter((d) => ids.has(d.promptId))) !== sig(want.decisions)) lost += 1;
}
const budget = server.budget;
await server.close();
attackers.forEach((a, i) => console.log(`  ${a.kind.padEnd(10)} ${JSON.stringify(tallies[i])}`));
console.log(
  `  honest: ${honest.length} sessions, ${stats.sent} requests (${stats.retried} retried on 429/503, ${stats.failed} given up), longest answer ${stats.longest} ms`,
);
console.log(
  `  serve: peak RSS ${Math.round(peakRss / MiB)} MiB (this process: serve and the honest clients), ${budget.refusedCount} requests refused by the budget, ${server.clockSkewedRecords()} records refused for clock skew, ${server.guard.engine.openPromptCount} prompts open, evicted-filter false-positive estimate ${server.guard.engine.evictedFilterFalsePositiveRate.toExponential(2)}`,
);
for (const l of [...new Set(logLines.map((l) => l.replace(/\d+/g, 'N')))].slice(0, 12)) console.log(`  log: ${l}`);
console.log(`soak: ${lost}/${honest.length} honest prompts lost their decisions ${lost === 0 ? 'PASS' : 'FAIL'}`);
process.exitCode = lost === 0 ? 0 : 1;

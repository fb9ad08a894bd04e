#!/usr/bin/env node
/* global process, console, Buffer, URL, setTimeout, clearTimeout */
// Scale-out throughput (issue #16): records a second through the front tier
// (collector-config/front-tier.yaml, load_balancing on session.id) into 1 and into 3 `serve`
// replicas (OTLP/gRPC), on this machine, as a RATIO measured in the same run. Also the CPU time
// each process spent per record, from which the ratio with cores to spare is derived.
//
//   npm run bench:scale-out            (= bash collector/build.sh && npm run build && node bench/scale-out.mjs)
//   node bench/scale-out.mjs --sessions 1500 --rounds 2 --grace-millis 90000
//
// The load: `--sessions` re-identified copies of the real capture acp-shadow-drain (one ACP prompt
// of 6 failing batches each: 5 decisions), one after another in event time, pre-serialised as
// OTLP protobuf (20 sessions a request) and sent by 4 concurrent raw gRPC clients as fast as the
// front tier takes them. A run ends when the replicas have printed every decision that replay
// finds in the same records; its duration is from the first send to the last decision, less the
// replicas' reorder grace (each decision is made one grace after its records arrived).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { credentials, makeGenericClientConstructor, Metadata, Server, ServerCredentials } from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { hrTimeDuration } from '@opentelemetry/core';
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { parseTelemetryText, replayRecords } from '../dist/replay.js';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : args[i + 1];
};
const SESSIONS = Number(arg('sessions', '1200'));
const ROUNDS = Number(arg('rounds', '2'));
const PER_REQUEST = 20;
const CLIENTS = 4;
// Longer than a run takes to deliver, so nothing is late: requests and the front tier's exporters
// run concurrently, and a saturated replica is fed from the front tier's queue, so records reach a
// replica out of order by up to the whole run.
const GRACE_MILLIS = Number(arg('grace-millis', '90000'));
const REPO = fileURLToPath(new URL('..', import.meta.url));
const COLLECTOR = `${REPO}collector/build/otelcol-guard`;
const CLI = `${REPO}dist/bin/repeated-tool-failure-guard.js`;
const TICKS_PER_SECOND = 100; // /proc/<pid>/stat clock ticks (USER_HZ)

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const identity = (b) => b;

// ------------------------------------------------------------------------------------------------
// The load

function generateCopies(copies) {
  const fixture = readFileSync(`${REPO}fixtures/qwen-code-0.24.4/acp-shadow-drain.outfile.json`, 'utf8');
  const objects = fixture.split(/(?<=\n})\n/).filter((s) => s.trim() !== '');
  const batches = [];
  for (let k = 0; k < copies; k++) {
    const hex12 = k.toString(16).padStart(12, '0');
    const hex8 = k.toString(16).padStart(8, '0');
    const shift = k * 60; // seconds: sessions one after another in event time
    const text = objects
      .map((o) =>
        o
          .replace(/\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{12}\b/g, `$1${hex12}`)
          .replace(/("traceId": ")([0-9a-f]{24})[0-9a-f]{8}"/g, `$1$2${hex8}"`)
          .replace(/\[(\s+)(1[0-9]{9}),/g, (_m, ws, sec) => `[${ws}${Number(sec) + shift},`),
      )
      .join('\n');
    batches.push(parseTelemetryText(text, `copy-${k}`));
  }
  return batches;
}

const resource = resourceFromAttributes({ 'service.name': 'qwen-code', 'service.version': '0.24.4' });
const scopes = new Map();
const scope = (name) => {
  const key = name || 'qwen-code';
  if (!scopes.has(key)) scopes.set(key, { name: key });
  return scopes.get(key);
};
const readableSpan = (s) => ({
  name: s.name,
  kind: SpanKind.INTERNAL,
  spanContext: () => s.spanContext(),
  parentSpanContext: s.parentSpanContext,
  startTime: s.startTime,
  endTime: s.endTime,
  status: { code: SpanStatusCode.UNSET },
  attributes: s.attributes,
  links: [],
  events: [],
  duration: hrTimeDuration(s.startTime, s.endTime),
  ended: true,
  resource,
  instrumentationScope: scope(s.scopeName),
  droppedAttributesCount: 0,
  droppedEventsCount: 0,
  droppedLinksCount: 0,
});
const readableLog = (l) => ({
  hrTime: l.hrTime,
  hrTimeObserved: l.hrTime,
  spanContext: l.spanContext,
  body: l.body,
  attributes: l.attributes,
  resource,
  instrumentationScope: scope(l.instrumentationScope.name),
  droppedAttributesCount: 0,
  eventName: l.eventName,
});

/** Requests in send order: per group of sessions, its logs then its spans. */
function serialise(copies) {
  const requests = [];
  let records = 0;
  for (let i = 0; i < copies.length; i += PER_REQUEST) {
    const group = copies.slice(i, i + PER_REQUEST);
    const logs = group.flatMap((c) => c.logs);
    const spans = group.flatMap((c) => c.spans);
    records += logs.length + spans.length;
    requests.push({ path: '/opentelemetry.proto.collector.logs.v1.LogsService/Export', body: Buffer.from(ProtobufLogsSerializer.serializeRequest(logs.map(readableLog))) });
    requests.push({ path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export', body: Buffer.from(ProtobufTraceSerializer.serializeRequest(spans.map(readableSpan))) });
  }
  return { requests, records };
}

// ------------------------------------------------------------------------------------------------
// Processes

async function freePort() {
  const server = createServer();
  await new Promise((done, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', done);
  });
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return port;
}

async function waitForPort(port, child) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited early (${child.exitCode})`);
    const ok = await new Promise((done) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        done(true);
      });
      socket.once('error', () => done(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`port ${port} not ready`);
}

function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime, stime
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

async function startReplica() {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', '--grpc-port', String(port), '--grace-millis', String(GRACE_MILLIS)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const replica = { child, endpoint: `127.0.0.1:${port}`, decisions: 0, lastDecisionMillis: 0, stderr: '' };
  let pending = '';
  child.stdout.on('data', (chunk) => {
    pending += chunk.toString('utf8');
    let nl;
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (!line.includes('"eventName":"qwen-code.repeated_tool_failure_guard"')) continue;
      replica.decisions += 1;
      const at = Date.parse(JSON.parse(line).attributes['event.timestamp']);
      if (at > replica.lastDecisionMillis) replica.lastDecisionMillis = at;
    }
  });
  child.stderr.on('data', (c) => {
    replica.stderr += c.toString('utf8');
  });
  await waitForPort(port, child);
  return replica;
}

/** The ops backend's stand-in: takes every OTLP/gRPC export and drops it undecoded. */
async function startOpsSink() {
  const server = new Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  for (const name of ['trace.v1.TraceService', 'logs.v1.LogsService', 'metrics.v1.MetricsService']) {
    const path = `/opentelemetry.proto.collector.${name}/Export`;
    const method = { path, requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity };
    server.addService({ Export: method }, { Export: (_call, callback) => callback(null, Buffer.alloc(0)) });
  }
  const port = await new Promise((done, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : done(p))));
  return { endpoint: `127.0.0.1:${port}`, close: () => new Promise((done) => server.tryShutdown(() => done())) };
}

async function startFront(replicas, opsEndpoint) {
  const httpPort = await freePort();
  const grpcPort = await freePort();
  const child = spawn(COLLECTOR, ['--config', `${REPO}collector-config/front-tier.yaml`], {
    env: {
      ...process.env,
      GUARD_OTLP_HTTP_ENDPOINT: `127.0.0.1:${httpPort}`,
      GUARD_OTLP_GRPC_ENDPOINT: `127.0.0.1:${grpcPort}`,
      GUARD_REPLICAS: `[${replicas.map((r) => r.endpoint).join(', ')}]`,
      GUARD_OPS_OTLP_GRPC_ENDPOINT: opsEndpoint,
      // a starved replica may take longer than the default 5 s to take a large request; a timeout
      // would retry it (late, and counted twice)
      GUARD_FRONT_EXPORT_TIMEOUT: '60s',
      // a burst of the whole load at once: room for it, so memory_limiter does not refuse it
      GUARD_MEMORY_LIMIT_MIB: '1500',
      GUARD_MEMORY_SPIKE_LIMIT_MIB: '400',
      GUARD_COLLECTOR_LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForPort(grpcPort, child);
  return { child, endpoint: `127.0.0.1:${grpcPort}` };
}

// ------------------------------------------------------------------------------------------------
// One run

async function send(endpoint, requests) {
  const Client = makeGenericClientConstructor({}, 'Raw');
  const clients = Array.from({ length: CLIENTS }, () => new Client(endpoint, credentials.createInsecure()));
  let next = 0;
  let failures = 0;
  await Promise.all(
    clients.map(async (client) => {
      while (next < requests.length) {
        const r = requests[next++];
        await new Promise((done) =>
          client.makeUnaryRequest(r.path, identity, identity, r.body, new Metadata(), { deadline: Date.now() + 60_000 }, (err) => {
            if (err) {
              failures += 1;
              console.error(`request failed: ${err.code} ${err.details}`);
            }
            done();
          }),
        );
      }
    }),
  );
  for (const c of clients) c.close();
  return failures;
}

async function run(replicaCount, load, expectedDecisions) {
  const replicas = [];
  for (let i = 0; i < replicaCount; i++) replicas.push(await startReplica());
  const ops = await startOpsSink();
  const front = await startFront(replicas, ops.endpoint);
  try {
    await sleep(500);
    const cpuBefore = { front: cpuSeconds(front.child.pid), replicas: replicas.map((r) => cpuSeconds(r.child.pid)) };
    const t0 = Date.now();
    const failures = await send(front.endpoint, load.requests);
    const sentMillis = Date.now() - t0;
    const deadline = Date.now() + GRACE_MILLIS + 120_000;
    const decided = () => replicas.reduce((n, r) => n + r.decisions, 0);
    while (decided() < expectedDecisions && Date.now() < deadline) await sleep(50);
    const last = Math.max(...replicas.map((r) => r.lastDecisionMillis));
    const seconds = (last - GRACE_MILLIS - t0) / 1000;
    const cpu = {
      front: cpuSeconds(front.child.pid) - cpuBefore.front,
      replicas: replicas.map((r, i) => cpuSeconds(r.child.pid) - cpuBefore.replicas[i]),
    };
    return {
      replicaCount,
      failures,
      decided: decided(),
      perReplica: replicas.map((r) => r.decisions),
      seconds,
      sentSeconds: sentMillis / 1000,
      recordsPerSecond: load.records / seconds,
      cpu,
    };
  } finally {
    await stopChild(front.child);
    await Promise.all(replicas.map((r) => stopChild(r.child)));
    await ops.close();
  }
}

// ------------------------------------------------------------------------------------------------

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x, d = 2) => x.toFixed(d);

console.error(`scale-out bench: ${SESSIONS} sessions, ${ROUNDS} round(s), node ${process.version}, ${(await import('node:os')).cpus().length} CPUs`);
const copies = generateCopies(SESSIONS);
const merged = { spans: copies.flatMap((c) => c.spans), logs: copies.flatMap((c) => c.logs), metricCount: 0, ignoredCount: 0 };
const replayed = await replayRecords(merged, { mode: 'shadow' });
const expected = replayed.decisions.filter((d) => d.outcome.decision !== 'none').length;
const load = serialise(copies);
console.error(`load: ${load.records} records in ${load.requests.length} requests; replay makes ${expected} decisions`);

const results = { 1: [], 3: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const n of round % 2 === 0 ? [1, 3] : [3, 1]) {
    const r = await run(n, load, expected);
    results[n].push(r);
    console.error(
      `round ${round + 1}, ${n} replica(s): ${fmt(r.recordsPerSecond, 0)} records/s (${fmt(r.seconds)} s; sent in ${fmt(r.sentSeconds)} s); decisions ${r.decided}/${expected} ${JSON.stringify(r.perReplica)}; ` +
        `CPU s: front ${fmt(r.cpu.front)}, replicas ${r.cpu.replicas.map((c) => fmt(c)).join(' ')}; failed requests ${r.failures}`,
    );
  }
}

const one = median(results[1].map((r) => r.recordsPerSecond));
const three = median(results[3].map((r) => r.recordsPerSecond));
const complete = [...results[1], ...results[3]].every((r) => r.decided === expected && r.failures === 0);
// CPU seconds per 1,000 records, from the 3-replica runs (replicas summed) and the 1-replica runs.
const perK = (s) => (s / load.records) * 1000;
const replicaCpu = median(results[1].map((r) => perK(r.cpu.replicas[0])));
const frontCpu = median([...results[1], ...results[3]].map((r) => perK(r.cpu.front)));
// With a core for each replica and enough for the front tier, each replica runs at its own
// single-thread speed: 3 replicas give min(3, what the front tier can feed) times one.
const frontCores = Number(arg('front-cores', '2'));
const projected = Math.min(3 / replicaCpu, frontCores / frontCpu) / Math.min(1 / replicaCpu, frontCores / frontCpu);
console.log(`| S1 | front tier + 3 serve replicas vs + 1 replica, records/s (${load.records} records, ${SESSIONS} sessions), this machine | ${fmt(one, 0)} | ${fmt(three, 0)} | ${fmt(three / one)}x | ${complete ? 'complete' : 'INCOMPLETE'} |`);
console.log(`| S1c | CPU s per 1,000 records: one replica ${fmt(replicaCpu, 3)}, front collector ${fmt(frontCpu, 3)}; projected 3-vs-1 ratio with a core per replica and ${frontCores} for the front tier | | | ${fmt(projected)}x | info |`);
process.exitCode = complete ? 0 : 1;

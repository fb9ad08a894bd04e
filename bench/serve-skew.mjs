/* global process, console, URL, setTimeout */
// Reliability figures of docs/reliability.md ("One producer's clock or lag never makes another's
// records late"): 40 sessions copied from a real qwen-code capture (unique session, prompt, trace,
// span, call and response ids) through startGuardServer().ingest, grace 300 ms. A prompt is lost
// when its decisions differ from replay's on its own records.
// Usage: npm run build && node bench/serve-skew.mjs [dist dir]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = process.argv[2] ?? fileURLToPath(new URL('../dist', import.meta.url));
const { startGuardServer } = await import(`${dist}/serve/guard-server.js`);
const { parseTelemetryText } = await import(`${dist}/otlp/telemetry-file.js`);
const { replayRecords } = await import(`${dist}/replay/replay.js`);
const text = readFileSync(new URL('../fixtures/qwen-code-0.24.4/acp-shadow-drain.outfile.json', import.meta.url), 'utf8');
const objects = text.split(/(?<=\n})\n/).filter((s) => s.trim() !== '');
const first = Math.min(...[...text.matchAll(/\[\s+(1[0-9]{9}),/g)].map((m) => Number(m[1])));

function recapture(o, k, shift) {
  const hex12 = k.toString(16).padStart(12, '0');
  const hex8 = k.toString(16).padStart(8, '0');
  return o
    .replace(/\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{12}\b/g, `$1${hex12}`)
    .replace(/("traceId": ")([0-9a-f]{24})[0-9a-f]{8}"/g, `$1$2${hex8}"`)
    .replace(/("spanId": ")([0-9a-f]{8})[0-9a-f]{8}"/g, `$1$2${hex8}"`)
    .replace(/\bcall_r(\d+)_(\d+)\b/g, `call_k${k}_r$1_$2`)
    .replace(/\bchatcmpl-(\d+)\b/g, `chatcmpl-k${k}-$1`)
    .replace(/\[(\s+)(1[0-9]{9}),/g, (_m, ws, sec) => `[${ws}${Number(sec) + shift},`);
}
const session = (k, offsetSeconds) =>
  parseTelemetryText(objects.map((o) => recapture(o, k, Math.floor(Date.now() / 1000) - first + offsetSeconds)).join('\n'), `session-${k}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sig = (ds) => ds.map((d) => `${d.batch}:${d.outcome.decision}`).join(',');
const batch = (spans, logs) => ({ spans, logs, metricCount: 0, ignoredCount: 0 });

/** Steps: records to ingest, then a pause. Honest records are compared with replay. */
async function scenario(name, steps) {
  const server = await startGuardServer({ port: 0, graceMillis: 300, print: () => undefined, log: () => undefined, metricExportIntervalMillis: 3_600_000 });
  const honest = [];
  for (const step of steps) {
    for (const r of step.records) server.ingest(r);
    honest.push(...(step.honest ?? []));
    await sleep(step.pauseAfter ?? 0);
  }
  await sleep(1500);
  await server.close();
  let lost = 0;
  for (const records of honest) {
    const want = await replayRecords(records, { mode: 'shadow' });
    const ids = new Set(want.decisions.map((d) => d.promptId));
    if (sig(server.decisions.filter((d) => ids.has(d.promptId))) !== sig(want.decisions)) lost += 1;
  }
  const apart = server.afterJudgedRecords === undefined ? '' : `, ${server.afterJudgedRecords()} span record(s) of calls already judged`;
  const refused = server.clockSkewedRecords === undefined ? '' : `, ${server.clockSkewedRecords()} refused for clock skew`;
  const unjudged = Object.entries(server.unjudgedBatches()).map(([k, v]) => `${v} ${k}`).join(', ') || 'none';
  console.log(`${name}: ${lost}/${honest.length} prompts lost their decisions; ${server.lateRecords()} late record(s)${apart}${refused}; unjudged: ${unjudged}`);
}

/** One llm_request span of another session, stamped at `nanos`. */
function forgedSpan(nanos) {
  const span = session(99, 0).spans.find((s) => s.name === 'qwen-code.llm_request');
  const t = [Number(nanos / 1_000_000_000n), Number(nanos % 1_000_000_000n)];
  return batch([Object.assign(Object.create(Object.getPrototypeOf(span)), span, { startTime: t, endTime: t })], []);
}
const sessions = (n, from, offsetSeconds) => Array.from({ length: n }, (_, i) => session(from + i, offsetSeconds));

let forty = sessions(40, 1, 0);
await scenario('one span stamped a day ahead, then 40 sessions', [
  { records: [forgedSpan((BigInt(Date.now()) + 86_400_000n) * 1_000_000n)], pauseAfter: 1200 },
  { records: forty, honest: forty },
]);
forty = sessions(40, 1, 0);
await scenario('one span stamped 1e300 ns, then 40 sessions', [
  { records: [forgedSpan(10n ** 300n)], pauseAfter: 1200 },
  { records: forty, honest: forty },
]);
const ahead = sessions(20, 101, 15);
const paused = sessions(20, 201, -12);
await scenario('20 sessions 15 s ahead, then 20 sessions whose records arrive 12 s after their time', [
  { records: ahead, honest: ahead, pauseAfter: 1200 },
  { records: paused, honest: paused },
]);
const one = session(1, 0);
const half = Math.ceil(one.logs.length / 2);
await scenario("one session whose second half of logs arrives 600 ms after its spans", [
  { records: [batch([], one.logs.slice(0, half)), batch(one.spans, [])], honest: [one], pauseAfter: 600 },
  { records: [batch([], one.logs.slice(half))] },
]);
for (let run = 1; run <= 3; run++) {
  const spread = sessions(40, 1, 0);
  await scenario(`40 sessions delivered 40 ms apart (run ${run})`, spread.map((r, i) => ({ records: [r], honest: [r], pauseAfter: i < spread.length - 1 ? 40 : 0 })));
}

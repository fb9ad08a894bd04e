#!/usr/bin/env node
/* global process, console, Buffer, URL, setImmediate, performance */
// Benchmarks of the repeated tool-failure guard (issue #4). Every result is a RATIO measured in the
// same run against a baseline, printed beside its goal with PASS/FAIL; absolute numbers are shown
// for context only.
//
//   npm run bench                      (= npm run build --silent && node --expose-gc bench/run.mjs)
//   node --expose-gc bench/run.mjs --only P1,P3 --mb 20 --prompts 100000 --rounds 5 --strict
//
// --strict exits 1 when any goal FAILs (for CI); by default the exit code only reports crashes.
//
// P1  create+end of non-tool spans, guard registered vs not (SimpleSpanProcessor, no-op exporter)
// P2  a realistic qwen-code tool batch, guard + BatchSpanProcessor vs BatchSpanProcessor alone
// P3  replay (parseTelemetryText + replayRecords) bytes/s vs JSON.parse bytes/s, same bytes
// P4  heap above baseline with 100k open prompts (one open batch of 2 calls each), then after expiry
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Bench } from 'tinybench';
import { createRepeatedToolFailureGuard } from '../dist/index.js';
import { parseTelemetryText, replayRecords } from '../dist/replay.js';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : args[i + 1];
};
const ONLY = new Set(String(arg('only', 'P1,P2,P3,P4')).split(','));
const TARGET_MB = Number(arg('mb', '30'));
const OPEN_PROMPTS = Number(arg('prompts', '100000'));
const ROUNDS = Number(arg('rounds', '5'));

if (typeof globalThis.gc !== 'function') {
  console.error('bench/run.mjs needs --expose-gc (use `npm run bench`)');
  process.exit(2);
}

// ------------------------------------------------------------------------------------------------
// helpers

const SUCCESS = { code: 0 };
const noopSpanExporter = () => ({ export: (_s, done) => done(SUCCESS), shutdown: async () => {}, forceFlush: async () => {} });
const noopLogExporter = () => ({ export: (_l, done) => done(SUCCESS), shutdown: async () => {}, forceFlush: async () => {} });
const noopMetricExporter = () => ({ export: (_m, done) => done(SUCCESS), shutdown: async () => {}, forceFlush: async () => {} });
const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));
const mb = (bytes) => bytes / (1024 * 1024);

/** The guard's own output goes to real providers with no-op exporters, as in production. */
function guardOutputProviders() {
  const loggerProvider = new LoggerProvider({ processors: [new BatchLogRecordProcessor({ exporter: noopLogExporter() })] });
  const reader = new PeriodicExportingMetricReader({ exporter: noopMetricExporter(), exportIntervalMillis: 2_147_483_647 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    loggerProvider,
    meterProvider,
    shutdown: async () => {
      await meterProvider.shutdown();
      await loggerProvider.shutdown();
    },
  };
}

/**
 * Run `baseline` and `subject` in alternating order for `rounds` rounds of tinybench; the result is
 * the median over rounds of mean(subject) / mean(baseline).
 */
async function pairedRatio({ rounds, time, baseline, subject }) {
  const ratios = [];
  const base = [];
  const subj = [];
  for (let r = 0; r < rounds; r++) {
    const bench = new Bench({ time, warmupTime: Math.min(200, time), throws: true });
    if (r % 2 === 0) bench.add('baseline', baseline).add('subject', subject);
    else bench.add('subject', subject).add('baseline', baseline);
    await bench.run();
    const b = bench.getTask('baseline').result.latency.mean;
    const s = bench.getTask('subject').result.latency.mean;
    base.push(b);
    subj.push(s);
    ratios.push(s / b);
  }
  return { ratio: median(ratios), baseline: median(base), subject: median(subj), ratios };
}

const rows = [];
function report(row) {
  rows.push(row);
  const verdict = row.pass === undefined ? 'info' : row.pass ? 'PASS' : 'FAIL';
  console.error(`  ${row.id}: ${row.result} (goal ${row.goal}) ${verdict}`);
}

// ------------------------------------------------------------------------------------------------
// P1: non-tool spans

async function p1() {
  console.error('P1: create+end of non-tool spans (http.request), guard registered vs not ...');
  const SPANS_PER_SAMPLE = 1_000;
  const out = guardOutputProviders();
  const guard = createRepeatedToolFailureGuard({ mode: 'shadow', sweepIntervalMillis: 0, ...out });
  const plain = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(noopSpanExporter())] });
  const guarded = new BasicTracerProvider({ spanProcessors: [guard.spanProcessor, new SimpleSpanProcessor(noopSpanExporter())] });
  const attrs = { 'http.request.method': 'POST', 'url.full': 'https://dashscope.example/v1/chat/completions', 'server.address': 'dashscope.example', 'server.port': 443 };
  const task = (tracer) => async () => {
    for (let i = 0; i < SPANS_PER_SAMPLE; i++) {
      const span = tracer.startSpan('http.request', { attributes: attrs });
      span.setAttribute('http.response.status_code', 200);
      span.end();
    }
    await yieldToLoop();
  };
  const r = await pairedRatio({ rounds: ROUNDS + 2, time: 400, baseline: task(plain.getTracer('bench')), subject: task(guarded.getTracer('bench')) });
  await plain.shutdown();
  await guarded.shutdown();
  await out.shutdown();
  const perSpan = (ms) => (ms * 1e6) / SPANS_PER_SAMPLE;
  report({
    id: 'P1',
    what: 'non-tool span create+end, guard vs none (SimpleSpanProcessor, no-op exporter)',
    baseline: `${fmt(perSpan(r.baseline), 0)} ns/span`,
    subject: `${fmt(perSpan(r.subject), 0)} ns/span`,
    result: `${fmt(r.ratio, 3)}x`,
    goal: '<= 1.05x',
    pass: r.ratio <= 1.05,
    detail: `rounds ${r.ratios.map((x) => fmt(x, 3)).join(' ')}`,
  });
}

// ------------------------------------------------------------------------------------------------
// P2: a realistic tool batch

let promptSeq = 0;

/**
 * One prompt of BATCHES_PER_PROMPT model rounds: interaction, then per round an llm_request and 2 tool
 * calls (tool + execution span + tool_call log), then the closing llm_request, end. `failing`: every
 * call fails with file_not_found (the guard decides and emits on every batch: tracked, tracked,
 * tracked, would_warn); otherwise every call succeeds with distinct arguments (normal traffic:
 * nothing to decide or emit). The unit of the result is one batch.
 */
const BATCHES_PER_PROMPT = 4;
function toolBatchPrompt(tracer, logger, failing) {
  const promptId = `0f5c1e7a-1c51-4f7e-9d2b-6a3e2c8d9b10########${++promptSeq}`;
  const interaction = tracer.startSpan('qwen-code.interaction', {
    root: true,
    attributes: { 'session.id': '0f5c1e7a-1c51-4f7e-9d2b-6a3e2c8d9b10', 'qwen-code.prompt_id': promptId, 'qwen-code.message_type': 'acp_prompt' },
  });
  const ictx = trace.setSpan(ROOT_CONTEXT, interaction);
  const request = () => {
    const llm = tracer.startSpan('qwen-code.llm_request', { attributes: { 'qwen-code.prompt_id': promptId, 'llm_request.context': 'interaction', 'gen_ai.request.model': 'qwen3-coder' } }, ictx);
    logger.emit({ attributes: { 'event.name': 'qwen-code.api_request', prompt_id: promptId, model: 'qwen3-coder' }, body: 'API request.', context: trace.setSpan(ROOT_CONTEXT, llm) });
    llm.end();
  };
  for (let b = 0; b < BATCHES_PER_PROMPT; b++) {
  request();
  for (let c = 0; c < 2; c++) {
    const callId = `call_${promptSeq}_${b}_${c}`;
    const tool = tracer.startSpan('qwen-code.tool', { attributes: { 'tool.call_id': callId, call_id: callId, 'gen_ai.tool.name': 'read_file', 'gen_ai.operation.name': 'execute_tool' } }, ictx);
    const tctx = trace.setSpan(ROOT_CONTEXT, tool);
    const exec = tracer.startSpan('qwen-code.tool.execution', { attributes: { 'gen_ai.tool.name': 'read_file', 'tool.call_id': callId } }, tctx);
    if (failing) {
      exec.setAttributes({ execution_status: 'error', error_type: 'file_not_found', 'error.type': 'file_not_found', error: 'tool_error', success: false });
      exec.setStatus({ code: SpanStatusCode.ERROR, message: 'tool_error' });
    } else {
      exec.setAttributes({ execution_status: 'success', success: true });
    }
    exec.end();
    logger.emit({
      body: 'Tool call: read_file. Success: false. Duration: 38ms.',
      attributes: failing
        ? {
            'event.name': 'qwen-code.tool_call',
            'session.id': '0f5c1e7a-1c51-4f7e-9d2b-6a3e2c8d9b10',
            call_id: callId,
            function_name: 'read_file',
            function_args: `{\n  "file_path": "/workspace/demo/missing-${b}-${c}.txt"\n}`,
            duration_ms: 38,
            status: 'error',
            execution_status: 'error',
            success: false,
            error: `File not found: /workspace/demo/missing-${b}-${c}.txt`,
            error_type: 'file_not_found',
            prompt_id: promptId,
            tool_type: 'native',
          }
        : {
            'event.name': 'qwen-code.tool_call',
            'session.id': '0f5c1e7a-1c51-4f7e-9d2b-6a3e2c8d9b10',
            call_id: callId,
            function_name: 'read_file',
            function_args: `{\n  "file_path": "/workspace/demo/src/file-${b}-${c}.ts"\n}`,
            duration_ms: 38,
            status: 'success',
            execution_status: 'success',
            success: true,
            prompt_id: promptId,
            tool_type: 'native',
          },
      context: tctx,
    });
    if (failing) {
      tool.setAttributes({ success: false, error: `File not found: /workspace/demo/missing-${b}-${c}.txt`, 'error.type': 'tool_error' });
      tool.setStatus({ code: SpanStatusCode.ERROR, message: `File not found: /workspace/demo/missing-${b}-${c}.txt` });
    } else {
      tool.setAttribute('success', true);
    }
    tool.end();
  }
  }
  request(); // the closing model request: the last batch's boundary
  interaction.setAttribute('qwen-code.turn_status', 'ok');
  interaction.end();
}

async function p2(failing, repetition = true) {
  const id = failing ? 'P2f' : repetition ? 'P2' : 'P2r';
  console.error(`${id}: ${failing ? 'failing-loop' : 'normal'} tool batches${repetition ? '' : ' (repetition breaker off)'}, guard + BatchSpanProcessor vs BatchSpanProcessor alone ...`);
  const PROMPTS_PER_SAMPLE = 15;
  const bspConfig = { maxQueueSize: 65_536, maxExportBatchSize: 512, scheduledDelayMillis: 200 };
  const blrpConfig = { maxQueueSize: 65_536, maxExportBatchSize: 512, scheduledDelayMillis: 200 };
  const host = (withGuard) => {
    const out = guardOutputProviders();
    const guard = withGuard
      ? createRepeatedToolFailureGuard({ mode: 'shadow', sweepIntervalMillis: 0, repetition: { enabled: repetition }, ...out })
      : undefined;
    let decisions = 0;
    guard?.addListener({ onDecision: (d) => void (d.outcome.decision !== 'none' && decisions++) });
    const tp = new BasicTracerProvider({
      spanProcessors: [...(guard ? [guard.spanProcessor] : []), new BatchSpanProcessor(noopSpanExporter(), bspConfig)],
    });
    const lp = new LoggerProvider({
      processors: [...(guard ? [guard.logRecordProcessor] : []), new BatchLogRecordProcessor({ exporter: noopLogExporter(), ...blrpConfig })],
    });
    return {
      tracer: tp.getTracer('qwen-code', '1.0.0'),
      logger: lp.getLogger('qwen-code'),
      guard,
      decisions: () => decisions,
      shutdown: async () => {
        await tp.shutdown();
        await lp.shutdown();
        await out.shutdown();
      },
    };
  };
  const task = (h) => async () => {
    for (let i = 0; i < PROMPTS_PER_SAMPLE; i++) toolBatchPrompt(h.tracer, h.logger, failing);
    await yieldToLoop();
  };
  // A fresh guard, for context: short rounds, fewer prompts than any of the guard's bounded maps hold.
  const freshPlain = host(false);
  const freshGuarded = host(true);
  const fresh = await pairedRatio({ rounds: 3, time: 100, baseline: task(freshPlain), subject: task(freshGuarded) });
  await freshPlain.shutdown();
  await freshGuarded.shutdown();
  // The result: steady state of a long-running agent. The guarded host first sees WARM prompts, so
  // every bounded structure of the guard (trace map 65,536, finished prompts = maxOpenPrompts) is full.
  const WARM = 20_000;
  const plain = host(false);
  const guarded = host(true);
  for (let i = 0; i < WARM; i += 500) {
    for (let j = 0; j < 500; j++) toolBatchPrompt(guarded.tracer, guarded.logger, failing);
    for (let j = 0; j < 25; j++) toolBatchPrompt(plain.tracer, plain.logger, failing);
    await yieldToLoop();
  }
  const r = await pairedRatio({ rounds: ROUNDS, time: 500, baseline: task(plain), subject: task(guarded) });
  const open = guarded.guard.engine.openPromptCount;
  const decided = guarded.decisions();
  await plain.shutdown();
  await guarded.shutdown();
  const perPrompt = (ms) => (ms * 1e3) / (PROMPTS_PER_SAMPLE * BATCHES_PER_PROMPT);
  report({
    id,
    what: failing
      ? 'failing-loop tool batch (llm_request, 2 failing tool+execution spans, 2 tool_call logs): a guard decision, log and counter every batch; guard+BSP vs BSP'
      : repetition
        ? 'tool batch (llm_request, 2 tool+execution spans, 2 tool_call logs, next llm_request), normal traffic; guard (both guards) +BSP vs BSP'
        : 'the same batch, repetition breaker off (no SHA-256 of arguments): the failure guard alone +BSP vs BSP',
    baseline: `${fmt(perPrompt(r.baseline), 1)} us/batch`,
    subject: `${fmt(perPrompt(r.subject), 1)} us/batch`,
    result: `${fmt(r.ratio, 3)}x`,
    goal: failing || !repetition ? '(info)' : '<= 1.5x',
    pass: failing || !repetition ? undefined : r.ratio <= 1.5 && open === 0,
    detail:
      `rounds ${r.ratios.map((x) => fmt(x, 3)).join(' ')} after ${WARM} warm-up prompts; ${decided} guard decisions emitted; ${open} prompts left open; ` +
      `a fresh guard (< 10k prompts seen): ${fmt(fresh.ratio, 3)}x (${fmt(perPrompt(fresh.baseline), 1)} vs ${fmt(perPrompt(fresh.subject), 1)} us/batch)`,
  });
}

// ------------------------------------------------------------------------------------------------
// P3: replay throughput

/** A qwen-code outfile of `copies` sessions, each a copy of the real capture with fresh ids and shifted times. */
function generateCapture(targetBytes) {
  const fixture = readFileSync(fileURLToPath(new URL('../fixtures/qwen-code-0.24.4/acp-shadow-drain.outfile.json', import.meta.url)), 'utf8');
  const objects = fixture.split(/(?<=\n})\n/).filter((s) => s.trim() !== '');
  for (const o of objects) JSON.parse(o); // the template is what it claims to be
  const templateBytes = Buffer.byteLength(objects.join('\n')) + 1;
  const copies = Math.max(1, Math.round(targetBytes / templateBytes));
  const pieces = [];
  for (let k = 0; k < copies; k++) {
    const hex12 = k.toString(16).padStart(12, '0');
    const hex8 = k.toString(16).padStart(8, '0');
    const shift = k * 120; // seconds: sessions one after another
    for (const o of objects) {
      pieces.push(
        o
          .replace(/\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{12}\b/g, `$1${hex12}`)
          .replace(/("traceId": ")([0-9a-f]{24})[0-9a-f]{8}"/g, `$1$2${hex8}"`)
          .replace(/\[(\s+)(1[0-9]{9}),/g, (_m, ws, sec) => `[${ws}${Number(sec) + shift},`),
      );
    }
  }
  return { pieces, text: `${pieces.join('\n')}\n`, copies, objectsPerCopy: objects.length };
}

async function p3() {
  console.error(`P3: generating a ~${TARGET_MB} MB qwen-code capture ...`);
  const gen = generateCapture(TARGET_MB * 1024 * 1024);
  const dir = mkdtempSync(join(tmpdir(), 'rtfg-bench-'));
  const file = join(dir, 'qwen-code-large.outfile.json');
  let text;
  try {
    writeFileSync(file, gen.text);
    text = readFileSync(file, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  gen.text = undefined;
  const bytes = Buffer.byteLength(text);
  const pieces = gen.pieces;
  let last;
  const replay = async () => {
    const records = parseTelemetryText(text, file);
    last = await replayRecords(records); // as the CLI: each prompt's mode from its in-tree events

  };
  const parseOnly = () => {
    if (parseTelemetryText(text, file).spans.length === 0) throw new Error('parse');
  };
  const jsonParse = () => {
    let n = 0;
    for (const p of pieces) n += JSON.parse(p) === null ? 0 : 1;
    if (n !== pieces.length) throw new Error('parse');
  };
  console.error(`P3: replay vs JSON.parse on ${fmt(mb(bytes), 1)} MB (${pieces.length} objects, ${gen.copies} sessions) ...`);
  const ratios = [];
  const rs = [];
  const js = [];
  const ps = [];
  // a full GC before every iteration, so no iteration pays for the previous one's garbage
  const gcFirst = { beforeEach: () => globalThis.gc() };
  for (let r = 0; r < 5; r++) {
    const bench = new Bench({ time: 1, iterations: 2, warmup: r === 0, warmupIterations: 1, warmupTime: 1, throws: true });
    if (r % 2 === 0) bench.add('json', jsonParse, gcFirst).add('replay', replay, gcFirst);
    else bench.add('replay', replay, gcFirst).add('json', jsonParse, gcFirst);
    if (r < 2) bench.add('parseTelemetryText only', parseOnly, gcFirst);
    await bench.run();
    if (r < 2) ps.push(bench.getTask('parseTelemetryText only').result.latency.mean);
    const replayMs = bench.getTask('replay').result.latency.mean;
    const jsonMs = bench.getTask('json').result.latency.mean;
    rs.push(replayMs);
    js.push(jsonMs);
    ratios.push(jsonMs / replayMs); // (bytes/replayMs) / (bytes/jsonMs)
  }
  const ratio = median(ratios);
  const bps = (ms) => mb(bytes) / (ms / 1000);
  const decided = last.decisions.filter((d) => d.outcome.decision !== 'none').length;
  const wouldStop = last.decisions.filter((d) => d.outcome.decision === 'would_stop').length;
  report({
    id: 'P3',
    what: `replay (parseTelemetryText + replayRecords) vs JSON.parse of the same ${fmt(mb(bytes), 1)} MB`,
    baseline: `${fmt(bps(median(js)), 1)} MB/s`,
    subject: `${fmt(bps(median(rs)), 1)} MB/s`,
    result: `${fmt(ratio, 3)}x`,
    goal: '>= 0.5x',
    pass: ratio >= 0.5 && wouldStop === gen.copies,
    detail: `rounds ${ratios.map((x) => fmt(x, 3)).join(' ')}; parseTelemetryText alone ${fmt(bps(median(ps)), 1)} MB/s; ${last.spanCount} spans, ${last.logCount} logs, ${last.decisions.length} batches, ${decided} decisions, ${wouldStop} would_stop (expected ${gen.copies})`,
  });
}

// ------------------------------------------------------------------------------------------------
// P4: heap with many open prompts, and after they expire

function heapNow() {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

async function p4(repetition = true) {
  const tag = repetition ? '' : 'r';
  console.error(`P4${tag}: heap with ${OPEN_PROMPTS} open prompts (one open batch of 2 calls each)${repetition ? '' : ', repetition breaker off'} ...`);
  let now = Date.UTC(2026, 10, 29);
  const IDLE = 60_000;
  const out = guardOutputProviders();
  const guard = createRepeatedToolFailureGuard({
    mode: 'shadow',
    maxOpenPrompts: OPEN_PROMPTS,
    promptIdleMillis: IDLE,
    sweepIntervalMillis: 0,
    repetition: { enabled: repetition },
    clock: () => now,
    ...out,
  });
  let evicted = 0;
  guard.addListener({ onEviction: () => void evicted++ });
  // The host has only the guard's processors: the heap measured is the guard's.
  const tp = new BasicTracerProvider({ spanProcessors: [guard.spanProcessor] });
  const lp = new LoggerProvider({ processors: [guard.logRecordProcessor] });
  const tracer = tp.getTracer('qwen-code', '1.0.0');
  const logger = lp.getLogger('qwen-code');
  const openPrompt = (i, tag) => {
    const promptId = `6c1f2a9e-3b7d-4e21-8f0a-${tag}${i.toString(16).padStart(8, '0')}########1`;
    const interaction = tracer.startSpan('qwen-code.interaction', {
      root: true,
      attributes: { 'session.id': `6c1f2a9e-3b7d-4e21-8f0a-${tag}${i}`, 'qwen-code.prompt_id': promptId, 'qwen-code.message_type': 'acp_prompt' },
    });
    const ictx = trace.setSpan(ROOT_CONTEXT, interaction);
    const llm = tracer.startSpan('qwen-code.llm_request', { attributes: { 'qwen-code.prompt_id': promptId, 'llm_request.context': 'interaction' } }, ictx);
    llm.end();
    for (let c = 0; c < 2; c++) {
      const callId = `call_${tag}${i}_${c}`;
      const tool = tracer.startSpan('qwen-code.tool', { attributes: { 'tool.call_id': callId, call_id: callId, 'gen_ai.tool.name': 'read_file' } }, ictx);
      const tctx = trace.setSpan(ROOT_CONTEXT, tool);
      const exec = tracer.startSpan('qwen-code.tool.execution', { attributes: { 'gen_ai.tool.name': 'read_file', 'tool.call_id': callId } }, tctx);
      exec.setAttributes({ execution_status: 'error', error_type: 'file_not_found' });
      exec.end();
      logger.emit({
        attributes: { 'event.name': 'qwen-code.tool_call', call_id: callId, function_name: 'read_file', status: 'error', execution_status: 'error', error_type: 'file_not_found', prompt_id: promptId, tool_type: 'native', function_args: '{"file_path":"/workspace/demo/missing.txt"}' },
        context: tctx,
      });
      tool.end();
    }
    // the interaction span stays open (and unreferenced): the prompt is still running
  };
  // warm every code path, then let those prompts expire, before the baseline
  for (let i = 0; i < 2_000; i++) openPrompt(i, 'w');
  now += IDLE + 1;
  guard.sweep();
  evicted = 0;
  const baseline = heapNow();
  const t0 = performance.now();
  for (let i = 0; i < OPEN_PROMPTS; i++) openPrompt(i, 'a');
  const fillMs = performance.now() - t0;
  const open = guard.engine.openPromptCount;
  const full = heapNow();
  now += IDLE + 1;
  guard.sweep();
  const afterOpen = guard.engine.openPromptCount;
  const expired = heapNow();
  const grow = mb(full - baseline);
  const rest = mb(expired - baseline);
  report({
    id: `P4a${tag}`,
    what: repetition
      ? `heap above baseline with ${open} open prompts (one open batch of 2 calls each), both guards`
      : `the same, repetition breaker off (the failure guard alone)`,
    baseline: `${fmt(mb(baseline), 1)} MB`,
    subject: `${fmt(mb(full), 1)} MB`,
    result: `+${fmt(grow, 1)} MB`,
    goal: repetition ? '<= +100 MB' : '(info)',
    pass: repetition ? grow <= 100 && open === OPEN_PROMPTS : undefined,
    detail: `${fmt((grow * 1024 * 1024) / OPEN_PROMPTS, 0)} bytes/prompt; filled in ${fmt(fillMs / 1000, 1)} s`,
  });
  if (!repetition) {
    await tp.shutdown();
    await lp.shutdown();
    await out.shutdown();
    return;
  }
  report({
    id: 'P4b',
    what: 'heap above baseline after they all expired (sweep on a virtual clock)',
    baseline: `${fmt(mb(baseline), 1)} MB`,
    subject: `${fmt(mb(expired), 1)} MB`,
    result: `${rest >= 0 ? '+' : ''}${fmt(rest, 1)} MB`,
    goal: '<= +10 MB',
    pass: rest <= 10 && afterOpen === 0 && evicted === OPEN_PROMPTS,
    detail: `${evicted} evicted (idle), ${afterOpen} left open`,
  });
  await tp.shutdown();
  await lp.shutdown();
  await out.shutdown();
}

// ------------------------------------------------------------------------------------------------

console.error(`repeated-tool-failure-guard bench: node ${process.version}, ${process.platform}/${process.arch}`);
if (ONLY.has('P1')) await p1();
if (ONLY.has('P2')) await p2(false);
if (ONLY.has('P2')) await p2(false, false);
if (ONLY.has('P2')) await p2(true);
if (ONLY.has('P3')) await p3();
if (ONLY.has('P4')) await p4();
if (ONLY.has('P4')) await p4(false);

const header = ['id', 'measure', 'baseline', 'with guard', 'RESULT (ratio)', 'goal', 'verdict'];
const table = rows.map((r) => [r.id, r.what, r.baseline, r.subject, r.result, r.goal, r.pass === undefined ? 'info' : r.pass ? 'PASS' : 'FAIL']);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
console.log('');
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const t of table) console.log(line(t));
console.log('');
for (const r of rows) console.log(`${r.id}: ${r.detail}`);
const goals = rows.filter((r) => r.pass !== undefined);
console.log(`\nRESULT: ${goals.filter((r) => r.pass).length}/${goals.length} PASS`);
if (args.includes('--strict') && !goals.every((r) => r.pass)) process.exitCode = 1;

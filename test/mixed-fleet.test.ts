/**
 * A mixed fleet in one pipeline (issue 30): every agent's captures under `fixtures/` (qwen-code,
 * Claude Code, gemini-cli, Codex, GenAI conventions, and each agent added since) together, in one replay input,
 * interleaved through one `serve` over OTLP/HTTP and over OTLP/gRPC, and through one in-process
 * guard, give for every prompt exactly the decisions each capture gives alone, and each agent's
 * telemetry keeps its own names (namespace) and error-type vocabulary. The expected values are
 * each capture replayed alone, which the per-agent suites check against the design and the
 * in-tree guard (replay.test.ts, claude-code-fixtures.test.ts, genai-captures.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Span } from '@opentelemetry/api';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter as HttpLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPTraceExporter as HttpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import type { ReadWriteLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRepeatedToolFailureGuard } from '../src/index.js';
import type { BatchDecision } from '../src/engine/failure-types.js';
import type { RecordBatch } from '../src/otlp/records.js';
import { hrTimeToMillis } from '../src/profiles/wire-profile.js';
import { WIRE_PROFILES } from '../src/profiles/registry.js';
import { auditInvariants } from '../src/replay/audit.js';
import { parseReplayInput } from '../src/replay/replay-input.js';
import type { TelemetrySource } from '../src/replay/replay-input.js';
import { replayRecords } from '../src/replay/replay.js';
import type { EmittedGuardRecord, ReplayResult } from '../src/replay/replay.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { startGuardServer } from '../src/serve/guard-server.js';
import { toReadableLogAsProduced, toReadableSpanAsProduced } from './helpers/recorded.js';
import { firstMillis, shifted } from './scale-out/player.js';

const FIXTURES = new URL('../fixtures/', import.meta.url);

/** Every telemetry capture in the repository, by agent folder. */
function captures(): { agent: string; path: string }[] {
  const out: { agent: string; path: string }[] = [];
  const walk = (dir: URL, agent: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(new URL(`${e.name}/`, dir), agent);
      else if ((e.name.endsWith('.outfile.json') || e.name.endsWith('.otlp.jsonl'))) out.push({ agent, path: new URL(e.name, dir).pathname });
    }
  };
  for (const e of readdirSync(FIXTURES, { withFileTypes: true })) if (e.isDirectory() && e.name !== 'cases') walk(new URL(`${e.name}/`, FIXTURES), e.name);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

const source = (path: string): TelemetrySource => ({ text: readFileSync(path), file: path });

const add = (out: Map<string, string[]>, id: string, line: string): void => {
  const list = out.get(id) ?? [];
  list.push(line);
  out.set(id, list);
};

const decisionLine = (d: BatchDecision): string => `batch ${d.batch} ${d.mode} ${d.outcome.decision} ${d.outcome.resetReason ?? ''} ${d.receipt.observations.length} call(s)`;

/** Per prompt: its batch decisions, unjudged batches and repetition decisions, in order. */
function byPrompt(r: ReplayResult): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of r.decisions) add(out, d.promptId, decisionLine(d));
  for (const u of r.unjudgedBatches) add(out, u.promptId, `unjudged ${u.batch} ${u.reason}`);
  for (const x of r.repetition) add(out, x.promptId, `repetition ${x.sessionKey} ${x.outcome.decision}`);
  return out;
}

/** Per prompt: its batch decisions only (what `serve` and an in-process listener list). */
function decisionsByPrompt(ds: readonly BatchDecision[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of ds) add(out, d.promptId, decisionLine(d));
  return out;
}

/** A guard log record or metric point: its name and closed-vocabulary attributes. */
interface GuardRecord {
  readonly kind: 'log' | 'metric';
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
}

/**
 * Per prompt: its guard log records (event name, decision, execution error type), sorted; and per
 * metric name, the attribute sets of its points. The names carry the agent's namespace.
 */
function telemetryOf(records: readonly GuardRecord[]): { logs: Map<string, string[]>; metrics: Map<string, Set<string>> } {
  const logs = new Map<string, string[]>();
  const metrics = new Map<string, Set<string>>();
  for (const r of records) {
    if (r.kind === 'log') {
      const a = r.attributes;
      if (typeof a.prompt_id === 'string') add(logs, a.prompt_id, `${r.name} ${String(a.decision ?? a['loop.type'] ?? '')} ${String(a.execution_error_type ?? '')}`);
    } else {
      const set = metrics.get(r.name) ?? new Set<string>();
      set.add(JSON.stringify(Object.entries(r.attributes).sort(([x], [y]) => (x < y ? -1 : 1))));
      metrics.set(r.name, set);
    }
  }
  for (const list of logs.values()) list.sort();
  return { logs, metrics };
}

const fromEmitted = (e: readonly EmittedGuardRecord[]): GuardRecord[] => e.map((x) => ({ kind: x.kind === 'metric' ? 'metric' : 'log', name: x.name, attributes: x.attributes ?? {} }));

/** Each capture replayed alone in shadow mode: the expected values of the serve and in-process runs. */
interface Alone {
  readonly all: { agent: string; path: string }[];
  /** Per prompt, from the replays alone. */
  readonly decisions: Map<string, string[]>;
  readonly logs: Map<string, string[]>;
  /** Metric name → attribute sets, over every capture alone (each agent under its own namespace). */
  readonly metrics: Map<string, Set<string>>;
  readonly unjudged: Record<string, number>;
}

let alone: Alone;

beforeAll(async () => {
  const all = captures();
  const decisions = new Map<string, string[]>();
  const logs = new Map<string, string[]>();
  const metrics = new Map<string, Set<string>>();
  const unjudged: Record<string, number> = {};
  for (const c of all) {
    // serve and an in-process guard judge in one mode (here shadow): replay is told so, instead of
    // taking each prompt's mode from the in-tree guard's records.
    const r = await replayRecords(parseReplayInput([source(c.path)]), { mode: 'shadow' });
    for (const [id, lines] of decisionsByPrompt(r.decisions)) decisions.set(id, lines);
    for (const u of r.unjudgedBatches) unjudged[u.reason] = (unjudged[u.reason] ?? 0) + 1;
    const t = telemetryOf(fromEmitted(r.emitted));
    for (const [id, lines] of t.logs) logs.set(id, lines);
    for (const [name, sets] of t.metrics) for (const x of sets) metrics.set(name, (metrics.get(name) ?? new Set()).add(x));
  }
  alone = { all, decisions, logs, metrics, unjudged };
});

/**
 * Every capture, each moved to start at the same moment (`startMillis`): the fleet's agents run
 * at once, their records interleaved in time.
 */
function fleet(startMillis: number): RecordBatch[] {
  return alone.all.map((c) => {
    const records = parseTelemetryText(readFileSync(c.path, 'utf8'), c.path);
    return shifted(records, startMillis - firstMillis(records));
  });
}

describe('mixed fleet: one replay input holding every agent', () => {
  it('every prompt gets exactly the decisions its capture gives alone', async () => {
    const all = captures();
    const agents = new Set(all.map((c) => c.agent));
    for (const a of ['qwen-code-0.24.4', 'claude-code-2.1.328', 'gemini-cli-0.61.0', 'codex-0.169.0', 'genai']) expect(agents).toContain(a);
    const expected = new Map<string, string[]>();
    const profilesAlone = new Set<string>();
    for (const c of all) {
      const alone = await replayRecords(parseReplayInput([source(c.path)]));
      profilesAlone.add(alone.profile);
      for (const [id, lines] of byPrompt(alone)) {
        // Captures do not share prompts: a prompt judged in two captures would merge when together.
        expect(expected.has(id), `${id} in two captures`).toBe(false);
        expected.set(id, lines);
      }
    }
    for (const p of ['qwen-code', 'claude-code', 'gemini-cli', 'codex', 'genai']) expect(profilesAlone).toContain(p);
    const input = parseReplayInput(all.map((c) => source(c.path)));
    const together = await replayRecords(input);
    expect(new Set(together.profiles)).toEqual(profilesAlone);
    // Each agent's telemetry under its own namespace passes the privacy audit, as alone.
    const invariants = auditInvariants(together.decisions, together.emitted, input.whole.identifiers, together.namespaces ?? together.namespace, together.notCheckable);
    expect(invariants.filter((i) => !i.held).map((i) => i.id)).toEqual([]);
    expect(together.unread).toEqual([]);
    const got = byPrompt(together);
    expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
    // Captures recorded hours apart share one virtual clock: a prompt left open (its final batch
    // awaiting the next request) longer than promptIdleMillis (2 h) before a later capture's
    // records is evicted as idle, as it would be live, and the summary says so. It keeps every
    // decision it had before the eviction.
    const idle = new Set(together.evictions.filter((e) => e.reason === 'idle').map((e) => e.promptId));
    for (const [id, lines] of expected) {
      if (idle.has(id)) expect(lines.slice(0, got.get(id)?.length ?? 0), id).toEqual(got.get(id));
      else expect(got.get(id), id).toEqual(lines);
    }
  });
});

describe('many Claude Code sessions in one input, one profile forced', () => {
  // Claude Code's request_id and tool_use_id come from the model provider: the conformance fake
  // provider numbers them per session (every capture here has req_p1r1, toolu_p1r1_0, ...). The
  // profile keys them per session.id, so sessions never share a response or a call.
  it('each session gets exactly the decisions it gets alone (--profile claude-code)', async () => {
    const cc = captures().filter((c) => c.agent.startsWith('claude-code-'));
    expect(cc.length).toBeGreaterThanOrEqual(18);
    const expected = new Map<string, string[]>();
    for (const c of cc) for (const [id, lines] of byPrompt(await replayRecords(parseReplayInput([source(c.path)], { profile: 'claude-code' })))) expected.set(id, lines);
    const got = byPrompt(await replayRecords(parseReplayInput(cc.map((c) => source(c.path)), { profile: 'claude-code' })));
    expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [id, lines] of expected) expect(got.get(id), id).toEqual(lines);
  });
});

/** Records per export request from each capture (a request carries several producers). */
const CHUNK = 16;

function exportAll<T>(exporter: { export(items: T[], done: (r: ExportResult) => void): void }, items: T[]): Promise<void> {
  return new Promise((resolve, reject) => {
    exporter.export(items, (r) => (r.code === ExportResultCode.SUCCESS ? resolve() : reject(r.error ?? new Error('export failed'))));
  });
}

describe.each(['OTLP/HTTP', 'OTLP/gRPC'] as const)('mixed fleet: every agent interleaved through one serve over %s (auto)', (transport) => {
  it('every prompt gets exactly the decisions its capture gives alone, under its own agent\'s names', async () => {
    const lines: string[] = [];
    const notes: string[] = [];
    // Nothing is released before drain(): the order of release is the buffer's, not the sender's.
    const server = await startGuardServer({
      port: 0,
      ...(transport === 'OTLP/gRPC' ? { grpcPort: 0 } : {}),
      graceMillis: 120_000,
      print: (l) => lines.push(l),
      log: (l) => notes.push(l),
      metricExportIntervalMillis: 600_000,
    });
    try {
      const grpc = `http://${server.grpcAddress ?? ''}`;
      const traces = transport === 'OTLP/HTTP' ? new HttpTraceExporter({ url: `${server.url}/v1/traces` }) : new GrpcTraceExporter({ url: grpc });
      const logs = transport === 'OTLP/HTTP' ? new HttpLogExporter({ url: `${server.url}/v1/logs` }) : new GrpcLogExporter({ url: grpc });
      const captures = fleet(Date.now() - 15 * 60_000);
      const rounds = Math.max(...captures.map((c) => Math.ceil(Math.max(c.spans.length, c.logs.length) / CHUNK)));
      // Round i: the i-th chunk of every capture's logs in one request, then of its spans in another.
      for (let i = 0; i < rounds; i++) {
        const l = captures.flatMap((c) => c.logs.slice(i * CHUNK, (i + 1) * CHUNK));
        const s = captures.flatMap((c) => c.spans.slice(i * CHUNK, (i + 1) * CHUNK));
        if (l.length > 0) await exportAll(logs, l.map(toReadableLogAsProduced));
        if (s.length > 0) await exportAll(traces, s.map(toReadableSpanAsProduced) as ReadableSpan[]);
      }
      await Promise.all([traces.shutdown(), logs.shutdown()]);
      server.drain();
    } finally {
      await server.close();
    }
    expect(server.lateRecords()).toBe(0);
    const got = decisionsByPrompt(server.decisions);
    expect([...got.keys()].sort()).toEqual([...alone.decisions.keys()].sort());
    for (const [id, expected] of alone.decisions) expect(got.get(id), id).toEqual(expected);
    expect(server.unjudgedBatches()).toEqual(alone.unjudged);
    // Every agent's guard telemetry under its own namespace and with its own error types.
    const printed = lines.map((l) => JSON.parse(l) as { signal: string; eventName?: string; name?: string; attributes: Record<string, unknown> });
    const t = telemetryOf(
      printed.map((p) => (p.signal === 'metric' ? { kind: 'metric', name: p.name ?? '', attributes: p.attributes } : { kind: 'log', name: p.eventName ?? '', attributes: p.attributes })),
    );
    for (const [id, expected] of alone.logs) expect(t.logs.get(id), id).toEqual(expected);
    const counts = [...t.metrics.keys()].filter((n) => n.endsWith('.repeated_tool_failure_guard.count'));
    expect(counts.sort()).toEqual([...alone.metrics.keys()].filter((n) => n.endsWith('.repeated_tool_failure_guard.count')).sort());
    for (const name of counts) expect(t.metrics.get(name), name).toEqual(alone.metrics.get(name));
    // Issue 34 item 7: under auto, error types were all emitted as `other`. Each agent's own
    // vocabulary holds (qwen-code's file_not_found, Claude Code's failure classes, the GenAI ones).
    const errorTypes = new Set(printed.filter((p) => p.signal === 'log' && p.attributes.execution_error_type !== undefined).map((p) => `${p.eventName ?? ''} ${String(p.attributes.execution_error_type)}`));
    expect(errorTypes).toContain('qwen-code.repeated_tool_failure_guard file_not_found');
    expect(errorTypes).toContain('claude-code.repeated_tool_failure_guard tool_error');
    expect(errorTypes).toContain('gemini-cli.repeated_tool_failure_guard file_not_found');
    expect([...errorTypes].filter((e) => e.startsWith('qwen-code.') && !e.endsWith(' other')).length).toBeGreaterThan(0);
    // Nothing unread in this fleet: no line says so.
    expect(notes.filter((n) => n.includes('no profile reads'))).toEqual([]);
  });
});

describe('mixed fleet: every agent through one in-process guard (auto, the default)', () => {
  it('every prompt gets exactly the decisions its capture gives alone, under its own agent\'s names', async () => {
    const logExporter = new InMemoryLogRecordExporter();
    const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: logExporter })] });
    const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    let now = 0;
    const guard = createRepeatedToolFailureGuard({ mode: 'shadow', loggerProvider, meterProvider, clock: () => now, controlHookRequired: false });
    const decisions: BatchDecision[] = [];
    guard.addListener({ onDecision: (d) => decisions.push(d) });
    // Every event of the fleet in time order (at equal times: logs, span starts, span ends), as an SDK delivers them.
    const events: { t: number; order: number; go: () => void }[] = [];
    for (const c of fleet(1_800_000_000_000)) {
      for (const l of c.logs) events.push({ t: hrTimeToMillis(l.hrTime), order: 0, go: () => guard.logRecordProcessor.onEmit(l as unknown as ReadWriteLogRecord) });
      for (const s of c.spans) {
        events.push({ t: hrTimeToMillis(s.startTime), order: 1, go: () => guard.spanProcessor.onStart(s as unknown as Span as never, ROOT_CONTEXT) });
        events.push({ t: hrTimeToMillis(s.endTime), order: 2, go: () => guard.spanProcessor.onEnd(s as unknown as ReadableSpan) });
      }
    }
    events.sort((a, b) => a.t - b.t || a.order - b.order);
    for (const e of events) {
      now = Math.max(now, e.t);
      e.go();
    }
    guard.finishAll();
    await guard.shutdown();
    await reader.forceFlush();
    const got = decisionsByPrompt(decisions);
    expect([...got.keys()].sort()).toEqual([...alone.decisions.keys()].sort());
    for (const [id, expected] of alone.decisions) expect(got.get(id), id).toEqual(expected);
    const records: GuardRecord[] = logExporter.getFinishedLogRecords().map((r) => ({ kind: 'log', name: r.eventName ?? '', attributes: r.attributes }));
    for (const rm of metricExporter.getMetrics())
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) for (const dp of m.dataPoints) records.push({ kind: 'metric', name: m.descriptor.name, attributes: dp.attributes });
    const t = telemetryOf(records);
    for (const [id, expected] of alone.logs) expect(t.logs.get(id), id).toEqual(expected);
    const counts = [...t.metrics.keys()].filter((n) => n.endsWith('.repeated_tool_failure_guard.count'));
    expect(counts.sort()).toEqual([...alone.metrics.keys()].filter((n) => n.endsWith('.repeated_tool_failure_guard.count')).sort());
    for (const name of counts) expect(t.metrics.get(name), name).toEqual(alone.metrics.get(name));
    // Each agent's namespace is its registry entry's (qwen-code's prefix only on qwen-code's prompts).
    const namespaces = new Set(counts.map((n) => n.slice(0, -'.repeated_tool_failure_guard.count'.length)));
    expect([...namespaces].every((ns) => Object.values(WIRE_PROFILES).some((d) => d.defaultNamespace === ns))).toBe(true);
    expect(namespaces.size).toBeGreaterThanOrEqual(3);
  });
});

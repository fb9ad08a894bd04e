/**
 * End-to-end check of the design's telemetry promises with the guard's REAL processors: an
 * agent-like program in this process (real SDK providers, the guard's span and log-record
 * processors next to OTLP/HTTP batch exporters) drives the issue #10887 loop in `enforce` against
 * the shipped collector-config/otelcol.yaml, and the collector's operator and RUM files are read
 * back.
 *
 * Runs under vitest.e2e.config.ts (`npm run test:e2e`).
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { TracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace';
import type { Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepeatedToolFailureGuard } from '../../src/otel/repeated-tool-failure-guard.js';
import type { FailureAction } from '../../src/core/failure/types.js';
import { FakeQwenAgent } from '../helpers/setup.js';
import type { ToolCallSpec } from '../helpers/setup.js';
import { ensureCollectorBuilt, startCollector } from './collector-process.js';
import type { RunningCollector } from './collector-process.js';
import { readOutputFiles } from './otlp-files.js';
import type { Item, OutputFiles } from './otlp-files.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONFIG_PATH = join(REPO_ROOT, 'collector-config', 'otelcol.yaml');

const GUARD_SCOPE = 'repeated-tool-failure-guard';
const GUARD_EVENT = 'qwen-code.repeated_tool_failure_guard';
const GUARD_METRIC = 'qwen-code.repeated_tool_failure_guard.count';
const RUM_EXCLUDE = 'qwen-code.rum.exclude';
const PROMPT_ID = 'sess-1########1';
/** A raw tool error as qwen-code reports it for issue #10887. */
const GIT_ERROR = 'fatal: not a git repository (or any of the parent directories): .git';
/** Distinctive marker inside the tool arguments: it must never reach RUM. */
const SECRET_MARKER = 'GUARD-E2E-S3CR3T-7c1d';
const SECRET_PATH = `/home/alice/projects/${SECRET_MARKER}/repo`;
const EXPORT_TIMEOUT_MILLIS = 10_000;
/** Keys the RUM copy must never hold on a span, log or data point. */
const SENSITIVE_KEYS = ['function_args', 'error', 'error.message', 'gen_ai.tool.call.arguments', 'exception.message', 'exception.stacktrace'];
/** Labels no guard metric may carry (design "Telemetry and privacy"): they are per prompt or per candidate. */
const FORBIDDEN_METRIC_LABELS = ['prompt_id', 'qwen-code.prompt_id', 'candidate_ordinal', 'execution_error_type', 'session.id', 'call_id'];

/** The issue #10887 call: `git` outside a repository, a shell execution error. */
const gitCall = (): ToolCallSpec => ({
  name: 'run_shell_command',
  errorType: 'shell_execute_error',
  errorText: GIT_ERROR,
  args: JSON.stringify({ command: 'git status', directory: SECRET_PATH, description: 'Show the working tree status' }, null, 2),
});

/**
 * What qwen-code's ACP `qwen-code.tool` span does and the fake agent does not: it puts the raw
 * error message in the span status. Patches each tool span's `end()` to set that status first.
 */
const acpToolSpanStatus: SpanProcessor = {
  onStart(span: Span): void {
    if (span.name !== 'qwen-code.tool') return;
    const end = span.end.bind(span);
    span.end = (endTime) => {
      const error = span.attributes['error'];
      if (typeof error === 'string') span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      end(endTime);
    };
  },
  onEnd: () => undefined,
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

describe('the guard\'s real processors through collector-config/otelcol.yaml', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'guard-pipeline-e2e-'));
  const operatorDir = join(workDir, 'operator');
  const rumDir = join(workDir, 'rum');
  let collector: RunningCollector | undefined;
  let actions: FailureAction[] = [];
  let operator = { text: '', items: [], bySignal: { traces: [], logs: [], metrics: [] } } as OutputFiles;
  let rum = operator;

  beforeAll(async () => {
    await ensureCollectorBuilt();
    collector = await startCollector({
      configPath: CONFIG_PATH,
      env: { GUARD_OPERATOR_DIR: operatorDir, GUARD_RUM_DIR: rumDir },
      readyTimeoutMillis: 30_000,
    });
    try {
      actions = await runAgent(`http://${collector.httpEndpoint}`);
    } finally {
      await collector.stop();
    }
    operator = readOutputFiles(operatorDir);
    rum = readOutputFiles(rumDir);
  }, 600_000);

  afterAll(async () => {
    await collector?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('runs the loop in enforce: the control hook reminds once, then stops', () => {
    expect(actions.map((a) => a.type)).toEqual(['none', 'remind', 'stop']);
  });

  it('the collector shut down cleanly', () => {
    expect(collector?.exitCode(), collector?.output()).toBe(0);
    expect(collector?.output()).not.toMatch(/panic|"level":"error"|\terror\t/);
  });

  describe('(a) operator output keeps the guard telemetry', () => {
    it('has the guard counter with the exact label sets, one transition each', () => {
      const points = latestPerSeries(operator.bySignal.metrics.filter((i) => i.name === GUARD_METRIC));
      expect(points.every((p) => p.scope === GUARD_SCOPE)).toBe(true);
      const common = { route: 'acp_foreground', mode: 'enforce', terminal_status: 'error', execution_status: 'error', tool_type: 'native' };
      expect(sortByDecision(points).map((p) => [p.attributes, p.value])).toEqual(
        sortByDecision([
          { attributes: { ...common, phase_before: 'idle', phase_after: 'tracking', decision: 'tracked', failure_count_bucket: '3-4', batch_count_bucket: '1' } },
          { attributes: { ...common, phase_before: 'tracking', phase_after: 'warned', decision: 'warned', failure_count_bucket: '8+', batch_count_bucket: '2' } },
          { attributes: { ...common, phase_before: 'warned', phase_after: 'latched', decision: 'stopped', failure_count_bucket: '8+', batch_count_bucket: '3+' } },
        ]).map((p) => [p.attributes, 1]),
      );
    });

    it('has the guard diagnostic log records, decisions in order', () => {
      const logs = operator.bySignal.logs.filter((i) => i.name === GUARD_EVENT);
      expect(logs.map((l) => l.attributes['decision'])).toEqual(['tracked', 'warned', 'stopped']);
      expect(logs.every((l) => l.scope === GUARD_SCOPE && l.eventName === GUARD_EVENT)).toBe(true);
      expect(logs.map((l) => l.body)).toEqual([
        'Repeated tool failure guard decision: tracked.',
        'Repeated tool failure guard decision: warned.',
        'Repeated tool failure guard decision: stopped.',
      ]);
      expect(logs[2]?.attributes).toMatchObject({
        'event.name': GUARD_EVENT,
        prompt_id: PROMPT_ID,
        route: 'acp_foreground',
        mode: 'enforce',
        phase_before: 'warned',
        phase_after: 'latched',
        failure_count_bucket: '8+',
        batch_count_bucket: '3+',
        candidate_ordinal: 1,
        terminal_status: 'error',
        execution_status: 'error',
        execution_error_type: 'shell_execute_error',
        tool_type: 'native',
      });
    });

    it('keeps the host telemetry unredacted (authorized local review)', () => {
      expect(operator.text).toContain(SECRET_MARKER);
      expect(operator.text).toContain(GIT_ERROR);
      const toolLogs = operator.bySignal.logs.filter((i) => i.name === 'qwen-code.tool_call');
      expect(toolLogs).toHaveLength(9);
      expect(toolLogs[0]?.attributes).toMatchObject({ function_args: gitCall().args, error: GIT_ERROR, 'error.message': GIT_ERROR });
      const toolSpans = operator.bySignal.traces.filter((i) => i.kind === 'span' && i.name === 'qwen-code.tool');
      expect(toolSpans).toHaveLength(9);
      expect(toolSpans.map((s) => [s.statusCode, s.statusMessage])).toEqual(Array.from({ length: 9 }, () => [SpanStatusCode.ERROR, GIT_ERROR]));
    });
  });

  describe('(b) RUM output drops the guard telemetry', () => {
    it('has no guard counter and no guard diagnostic log', () => {
      expect(rum.items.filter((i) => i.scope === GUARD_SCOPE)).toEqual([]);
      expect(rum.items.filter((i) => i.name === GUARD_EVENT || i.name === GUARD_METRIC)).toEqual([]);
      expect(rum.text).not.toContain('repeated_tool_failure_guard');
      expect(rum.bySignal.metrics).toEqual([]);
    });
  });

  describe('(c) the guard stop', () => {
    it('reaches the operator output once, marked for RUM exclusion', () => {
      const loops = operator.bySignal.logs.filter((i) => i.name === 'loop_detected' && i.attributes['loop_type'] === 'repeated_tool_execution_failure');
      expect(loops).toHaveLength(1);
      expect(loops[0]?.scope).toBe(GUARD_SCOPE);
      expect(loops[0]?.attributes).toMatchObject({
        'event.name': 'loop_detected',
        loop_type: 'repeated_tool_execution_failure',
        prompt_id: PROMPT_ID,
        'session.id': 'sess-1',
        [RUM_EXCLUDE]: true,
      });
    });

    it('never reaches the RUM output', () => {
      expect(rum.items.filter((i) => i.attributes['loop_type'] === 'repeated_tool_execution_failure')).toEqual([]);
      // FakeQwenAgent emits no loop event of its own, so every loop event here is the guard's.
      expect(rum.items.filter((i) => i.name === 'loop_detected')).toEqual([]);
      expect(rum.text).not.toContain('repeated_tool_execution_failure');
      expect(rum.text).not.toContain(RUM_EXCLUDE);
    });
  });

  describe('(d) RUM output keeps the host telemetry, redacted', () => {
    it('keeps the qwen-code.tool_call logs without arguments or raw error text', () => {
      const toolLogs = rum.bySignal.logs.filter((i) => i.name === 'qwen-code.tool_call');
      expect(toolLogs).toHaveLength(9);
      for (const log of toolLogs) {
        expect(log.attributes).toMatchObject({
          function_name: 'run_shell_command',
          status: 'error',
          execution_status: 'error',
          error_type: 'shell_execute_error',
          'error.type': 'shell_execute_error',
          prompt_id: PROMPT_ID,
          tool_type: 'native',
        });
        expect(log.body).toBe('Tool call: run_shell_command. Success: false.');
      }
      expect(rum.bySignal.logs.filter((i) => i.name === 'qwen-code.api_request')).toHaveLength(3);
    });

    it('keeps the qwen-code.tool spans with their status code and no status message', () => {
      const toolSpans = rum.bySignal.traces.filter((i) => i.kind === 'span' && i.name === 'qwen-code.tool');
      expect(toolSpans).toHaveLength(9);
      for (const span of toolSpans) {
        expect(span.attributes).toMatchObject({ 'gen_ai.tool.name': 'run_shell_command', 'error.type': 'tool_error' });
        expect(span.statusCode).toBe(SpanStatusCode.ERROR);
        expect(span.statusMessage ?? '').toBe('');
      }
      const names = new Set(rum.bySignal.traces.map((i) => i.name));
      expect([...names].sort()).toEqual(['qwen-code.interaction', 'qwen-code.llm_request', 'qwen-code.tool', 'qwen-code.tool.execution']);
    });

    it('has no sensitive attribute and no secret marker, path or raw error text anywhere', () => {
      const keys = new Set(rum.items.flatMap((i) => Object.keys(i.attributes)));
      expect(SENSITIVE_KEYS.filter((k) => keys.has(k))).toEqual([]);
      expect(rum.items.filter((i) => i.kind === 'span' && (i.statusMessage ?? '') !== '')).toEqual([]);
      expect(rum.text).not.toContain(SECRET_MARKER);
      expect(rum.text).not.toContain('/home/alice');
      expect(rum.text).not.toContain('not a git repository');
    });
  });

  describe('(e) metric labels', () => {
    it('never hold a prompt id or a candidate ordinal, in either output', () => {
      const points = [...operator.bySignal.metrics, ...rum.bySignal.metrics];
      expect(points.filter((p) => p.name === GUARD_METRIC).length).toBeGreaterThan(0);
      for (const p of points) {
        const keys = Object.keys(p.attributes);
        expect(keys.filter((k) => FORBIDDEN_METRIC_LABELS.includes(k)), p.name).toEqual([]);
        expect(JSON.stringify(p.attributes), p.name).not.toContain(PROMPT_ID);
        expect(JSON.stringify(p.resourceAttributes), p.name).not.toContain(PROMPT_ID);
      }
    });
  });

  it('the guard\'s own output holds no argument, path or raw error text', () => {
    const guardOutput = JSON.stringify(operator.items.filter((i) => i.scope === GUARD_SCOPE));
    expect(operator.items.filter((i) => i.scope === GUARD_SCOPE).length).toBeGreaterThan(0);
    expect(guardOutput).not.toContain(SECRET_MARKER);
    expect(guardOutput).not.toContain('/home/alice');
    expect(guardOutput).not.toContain('not a git repository');
    expect(guardOutput).not.toContain('git status');
    expect(guardOutput).not.toContain('function_args');
  });
});

/**
 * The agent-like program: a host TracerProvider and LoggerProvider with the guard's processors
 * next to OTLP/HTTP batch exporters, the guard's own output on separate OTLP/HTTP providers.
 * Runs the issue #10887 loop (9 failing `git` calls over 3 batches) in `enforce`, calling the
 * control hook after each batch, then flushes and shuts everything down.
 */
async function runAgent(base: string): Promise<FailureAction[]> {
  const exporterOptions = (signal: string) => ({ url: `${base}/v1/${signal}`, timeoutMillis: EXPORT_TIMEOUT_MILLIS });
  const guardResource = resourceFromAttributes({ 'service.name': 'qwen-code', 'service.version': '0.24.4' });
  const guardLoggerProvider = new LoggerProvider({
    resource: guardResource,
    processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter(exporterOptions('logs')) })],
  });
  const guardMeterProvider = new MeterProvider({
    resource: guardResource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter(exporterOptions('metrics')),
        exportIntervalMillis: 3_600_000,
        exportTimeoutMillis: EXPORT_TIMEOUT_MILLIS,
      }),
    ],
  });
  const guard = createRepeatedToolFailureGuard({
    mode: 'enforce',
    meterProvider: guardMeterProvider,
    loggerProvider: guardLoggerProvider,
    sweepIntervalMillis: 0,
  });

  const hostResource = resourceFromAttributes({ 'service.name': 'qwen-code', 'service.version': '0.24.4' });
  const tracerProvider = new TracerProvider({
    resource: hostResource,
    spanProcessors: [acpToolSpanStatus, guard.spanProcessor, new BatchSpanProcessor({ exporter: new OTLPTraceExporter(exporterOptions('traces')) })],
  });
  const hostLoggerProvider = new LoggerProvider({
    resource: hostResource,
    processors: [guard.logRecordProcessor, new BatchLogRecordProcessor({ exporter: new OTLPLogExporter(exporterOptions('logs')) })],
  });
  const agent = new FakeQwenAgent(tracerProvider.getTracer('qwen-code', '0.24.4'), hostLoggerProvider.getLogger('qwen-code', '0.24.4'));

  const actions: FailureAction[] = [];
  try {
    agent.startPrompt(PROMPT_ID);
    for (const size of [4, 4, 1]) {
      agent.batch(PROMPT_ID, Array.from({ length: size }, gitCall));
      const action = guard.control.afterToolBatch({ promptId: PROMPT_ID, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true });
      actions.push(action);
      if (action.type === 'stop') break; // the Session ends the request without another model stream
    }
    agent.endPrompt(PROMPT_ID, 'error');
  } finally {
    await tracerProvider.forceFlush();
    await hostLoggerProvider.forceFlush();
    await tracerProvider.shutdown();
    await hostLoggerProvider.shutdown();
    await guardMeterProvider.forceFlush();
    await guardLoggerProvider.forceFlush();
    await guardMeterProvider.shutdown();
    await guardLoggerProvider.shutdown();
  }
  return actions;
}

/**
 * The latest data point of each series (label set): cumulative counters repeat every series on
 * every export, and the collector's batch processor may merge two exports into one request.
 */
function latestPerSeries(points: Item[]): Item[] {
  const series = new Map<string, Item>();
  for (const p of points) series.set(JSON.stringify(Object.entries(p.attributes).sort()), p);
  return [...series.values()];
}

function sortByDecision<T extends { attributes: Record<string, unknown> }>(points: T[]): T[] {
  return [...points].sort((a, b) => String(a.attributes['decision']).localeCompare(String(b.attributes['decision'])));
}

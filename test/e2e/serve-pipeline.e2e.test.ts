/**
 * End-to-end check of `serve` in front of the shipped collector-config/otelcol.yaml: a real
 * qwen-code 0.24.4 capture is posted to `startGuardServer` as OTLP/HTTP JSON by the SDK's own
 * OTLP exporters; the guard's decisions must reach the collector's operator files and never its
 * RUM files.
 *
 * Runs under vitest.e2e.config.ts (`npm run test:e2e`).
 */
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTelemetryText } from '../../src/otlp/telemetry-file.js';
import { startGuardServer } from '../../src/serve/guard-server.js';
import type { GuardServer } from '../../src/serve/guard-server.js';
import { ensureCollectorBuilt, startCollector } from './collector-process.js';
import type { RunningCollector } from './collector-process.js';
import { readOutputFiles } from './otlp-files.js';
import { toReadableLog, toReadableSpan } from '../helpers/recorded.js';
import type { Item, OutputFiles } from './otlp-files.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONFIG_PATH = join(REPO_ROOT, 'collector-config', 'otelcol.yaml');
/** A real qwen-code 0.24.4 ACP run in `enforce` (fixtures/qwen-code-0.24.4/README.md). */
const CAPTURE = join(REPO_ROOT, 'fixtures', 'qwen-code-0.24.4', 'acp-enforce.outfile.json');

const GUARD_SCOPE = 'repeated-tool-failure-guard';
const GUARD_EVENT = 'qwen-code.repeated_tool_failure_guard';
const GUARD_METRIC = 'qwen-code.repeated_tool_failure_guard.count';
const GRACE_MILLIS = 200;
const EXPORT_TIMEOUT_MILLIS = 10_000;
/** serve runs `shadow` by default: the capture's in-tree `enforce` decisions, as would-be decisions. */
const EXPECTED_DECISIONS = ['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop'];
const SHADOW_NAME: Readonly<Record<string, string>> = { warned: 'would_warn', stopped: 'would_stop' };

const emptyOutput = (): OutputFiles => ({ text: '', items: [], bySignal: { traces: [], logs: [], metrics: [] } });

describe('serve in front of collector-config/otelcol.yaml, fed a real qwen-code capture', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'guard-serve-e2e-'));
  const operatorDir = join(workDir, 'operator');
  const rumDir = join(workDir, 'rum');
  const capture = parseTelemetryText(readFileSync(CAPTURE, 'utf8'), CAPTURE);
  /** The in-tree guard's own events in the capture (scope `qwen-code`), in time order. */
  const inTree = capture.logs
    .filter((l) => l.attributes['event.name'] === GUARD_EVENT)
    .sort((a, b) => a.hrTime[0] - b.hrTime[0] || a.hrTime[1] - b.hrTime[1]);
  let collector: RunningCollector | undefined;
  let server: GuardServer | undefined;
  let decisionsBeforeClose: string[] = [];
  let operator = emptyOutput();
  let rum = emptyOutput();

  beforeAll(async () => {
    await ensureCollectorBuilt();
    collector = await startCollector({
      configPath: CONFIG_PATH,
      env: { GUARD_OPERATOR_DIR: operatorDir, GUARD_RUM_DIR: rumDir },
      readyTimeoutMillis: 30_000,
    });
    try {
      server = await startGuardServer({
        host: '127.0.0.1',
        port: 0,
        exportEndpoint: `http://${collector.httpEndpoint}`,
        graceMillis: GRACE_MILLIS,
        print: () => undefined,
      });
      try {
        // The span and log streams go out at once, as two OTLP/HTTP JSON requests.
        await Promise.all([
          exportAll(new OTLPTraceExporter({ url: `${server.url}/v1/traces`, timeoutMillis: EXPORT_TIMEOUT_MILLIS }), capture.spans.map(toReadableSpan)),
          exportAll(new OTLPLogExporter({ url: `${server.url}/v1/logs`, timeoutMillis: EXPORT_TIMEOUT_MILLIS }), capture.logs.map(toReadableLog)),
        ]);
        // The grace passes and serve's own timer releases and judges everything, before close().
        const running = server;
        await waitFor(() => decisionsOf(running).length >= EXPECTED_DECISIONS.length, 20 * GRACE_MILLIS);
        await delay(2 * GRACE_MILLIS);
        decisionsBeforeClose = decisionsOf(server);
      } finally {
        await server.close();
      }
    } finally {
      await collector.stop();
    }
    operator = readOutputFiles(operatorDir);
    rum = readOutputFiles(rumDir);
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    await collector?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('the capture holds the in-tree enforce run (5 decisions, then the stop)', () => {
    expect(capture.spans.length).toBeGreaterThan(0);
    expect(inTree.map((l) => [l.attributes['mode'], l.attributes['decision']])).toEqual(
      ['tracked', 'tracked', 'tracked', 'warned', 'stopped'].map((d) => ['enforce', d]),
    );
  });

  it('serve judges the capture once its grace has passed, with nothing late', () => {
    expect(decisionsBeforeClose).toEqual(EXPECTED_DECISIONS);
    expect(decisionsOf(server as GuardServer)).toEqual(EXPECTED_DECISIONS);
    expect(server?.lateRecords()).toBe(0);
    expect(server?.decisions.every((d) => d.outcome.action.type === 'none')).toBe(true);
  });

  it('the collector shut down cleanly', () => {
    expect(collector?.exitCode(), collector?.output()).toBe(0);
    expect(collector?.output()).not.toMatch(/panic|"level":"error"|\terror\t/);
  });

  describe('operator output', () => {
    it('has the guard diagnostic logs, decisions in order, matching the in-tree buckets and phases', () => {
      const logs = operator.bySignal.logs.filter((i) => i.name === GUARD_EVENT);
      expect(logs.map((l) => l.attributes['decision'])).toEqual(EXPECTED_DECISIONS);
      expect(logs.every((l) => l.scope === GUARD_SCOPE && l.eventName === GUARD_EVENT && l.attributes['mode'] === 'shadow')).toBe(true);
      const keys = ['prompt_id', 'route', 'phase_before', 'phase_after', 'failure_count_bucket', 'batch_count_bucket', 'candidate_ordinal'];
      const pick = (a: Record<string, unknown>) => Object.fromEntries(keys.map((k) => [k, a[k]]));
      expect(logs.map((l) => pick(l.attributes))).toEqual(inTree.map((l) => pick(l.attributes)));
      expect(logs.map((l) => l.attributes['decision'])).toEqual(inTree.map((l) => SHADOW_NAME[String(l.attributes['decision'])] ?? l.attributes['decision']));
    });

    it('has the guard counter: one transition per decision', () => {
      const points = latestPerSeries(operator.bySignal.metrics.filter((i) => i.name === GUARD_METRIC));
      expect(points.every((p) => p.scope === GUARD_SCOPE && p.attributes['mode'] === 'shadow')).toBe(true);
      expect(points.map((p) => [p.attributes['decision'], p.attributes['failure_count_bucket'], p.attributes['batch_count_bucket'], p.value]).sort()).toEqual(
        [
          ['tracked', '1-2', '1', 1],
          ['tracked', '3-4', '2', 1],
          ['tracked', '5-7', '3+', 1],
          ['would_warn', '8+', '3+', 1],
          ['would_stop', '8+', '3+', 1],
        ].sort(),
      );
      for (const p of points) {
        expect(Object.keys(p.attributes)).not.toContain('prompt_id');
        expect(Object.keys(p.attributes)).not.toContain('candidate_ordinal');
      }
    });

    it('holds only what serve exports: the guard scope, no stop in shadow, no raw tool content', () => {
      expect(operator.items.length).toBeGreaterThan(0);
      expect(operator.items.filter((i) => i.scope !== GUARD_SCOPE)).toEqual([]);
      expect(operator.items.filter((i) => i.name === 'loop_detected')).toEqual([]);
      expect(operator.text).not.toContain('/workspace/demo');
      expect(operator.text).not.toContain('function_args');
    });
  });

  describe('RUM output', () => {
    it('gets none of it', () => {
      expect(rum.items).toEqual([]);
      expect(rum.text).not.toContain('repeated_tool_failure_guard');
      expect(rum.text).not.toContain(GUARD_SCOPE);
    });
  });
});

function decisionsOf(server: GuardServer): string[] {
  return server.decisions.map((d) => d.outcome.decision).filter((d) => d !== 'none');
}

// ---- the capture, as the SDK's exporters see it ----

/** One `export()` through a real OTLP/HTTP exporter; rejects unless the receiver answered with success. */
async function exportAll<T>(
  exporter: { export(items: T[], done: (result: ExportResult) => void): void; shutdown(): Promise<void> },
  items: T[],
): Promise<void> {
  try {
    const result = await new Promise<ExportResult>((done) => exporter.export(items, done));
    if (result.code !== ExportResultCode.SUCCESS) throw result.error ?? new Error('export failed');
  } finally {
    await exporter.shutdown();
  }
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

async function waitFor(condition: () => boolean, timeoutMillis: number): Promise<void> {
  const deadline = Date.now() + timeoutMillis;
  while (!condition() && Date.now() < deadline) await delay(20);
}

function delay(millis: number): Promise<void> {
  return new Promise((done) => setTimeout(done, millis));
}

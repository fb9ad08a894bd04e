import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as OTLPLogProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPTraceProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { batchCountBucket, failureCountBucket } from '../src/core/buckets.js';
import { replayRecords } from '../src/replay/replay.js';
import { startGuardServer } from '../src/serve/guard-server.js';
import { loadFixture, toReadableLog, toReadableSpan } from './helpers/recorded.js';

function exportAll<T>(exporter: { export(items: T[], cb: (r: ExportResult) => void): void }, items: T[]): Promise<void> {
  return new Promise((resolve, reject) => {
    exporter.export(items, (r) => (r.code === ExportResultCode.SUCCESS ? resolve() : reject(r.error ?? new Error('export failed'))));
  });
}

const summary = (ds: readonly { promptId: string; batch: number; outcome: { decision: string; failureCount: number } }[]) =>
  ds.map((d) => [d.promptId, d.batch, d.outcome.decision, d.outcome.failureCount]);

describe('serve: real OTLP/HTTP exporters to the guard on 127.0.0.1', () => {
  it.each([
    { name: 'acp-shadow-drain', encoding: 'json' },
    { name: 'acp-enforce', encoding: 'protobuf' },
    { name: 'headless-yolo', encoding: 'json' },
  ])('$name over $encoding gives the same decisions as replay (logs first, spans later)', async ({ name, encoding }) => {
    const records = loadFixture(name);
    const lines: string[] = [];
    const server = await startGuardServer({ port: 0, graceMillis: 5_000, print: (l) => lines.push(l), metricExportIntervalMillis: 60_000 });
    try {
      const json = encoding === 'json';
      const traces = json ? new OTLPTraceExporter({ url: `${server.url}/v1/traces` }) : new OTLPTraceProtoExporter({ url: `${server.url}/v1/traces` });
      const logs = json ? new OTLPLogExporter({ url: `${server.url}/v1/logs` }) : new OTLPLogProtoExporter({ url: `${server.url}/v1/logs` });
      // The two streams arrive separately, in several requests, logs ahead of spans (as from qwen-code).
      const half = Math.ceil(records.logs.length / 2);
      await exportAll(logs, records.logs.slice(0, half).map(toReadableLog));
      await exportAll(logs, records.logs.slice(half).map(toReadableLog));
      await exportAll(traces, records.spans.map(toReadableSpan));
      await traces.shutdown();
      await logs.shutdown();
      server.drain();
      const expected = await replayRecords(records, { mode: 'shadow' });
      expect(summary(server.decisions)).toEqual(summary(expected.decisions));
      expect(server.decisions.length).toBeGreaterThan(0);
      expect(server.lateRecords()).toBe(0);
    } finally {
      await server.close();
    }
    const printed = lines.map((l) => JSON.parse(l) as { signal: string; eventName?: string; attributes: Record<string, unknown> });
    const guardLogs = printed.filter((p) => p.eventName === 'qwen-code.repeated_tool_failure_guard');
    expect(guardLogs.length).toBeGreaterThan(0);
    const counterLines = printed.filter((p) => p.signal === 'metric' && (p as unknown as { name: string }).name === 'qwen-code.repeated_tool_failure_guard.count');
    expect(counterLines.length).toBeGreaterThan(0);
    // exported once at close: one line per attribute set, and the values add up to the decisions logged
    expect(new Set(counterLines.map((p) => JSON.stringify(p.attributes))).size).toBe(counterLines.length);
    expect(counterLines.reduce((n, p) => n + Number((p as unknown as { value: number }).value), 0)).toBe(guardLogs.length);
  });

  it('keeps serving valid requests after malformed ones', async () => {
    const server = await startGuardServer({ port: 0, graceMillis: 50, print: () => undefined, log: () => undefined });
    try {
      const bad = await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resourceLogs": [' });
      expect(bad.status).toBe(400);
      const badProto = await fetch(`${server.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array([0x0a, 0xff, 0xff, 0xff]) });
      expect(badProto.status).toBe(400);
      const ok = await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resourceLogs": []}' });
      expect(ok.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('serve: real timing (issue 12, cases 1–3), live arrival', () => {
  const CASES = new URL('../fixtures/cases/turn2/', import.meta.url).pathname;
  const KEYS = ['decision', 'phaseBefore', 'phaseAfter', 'failureCountBucket', 'batchCountBucket', 'candidateOrdinal', 'resetReason'] as const;

  async function serveCase(name: string, order: 'logs-first' | 'spans-first') {
    const records = loadFixture(`${CASES}${name}.otlp.jsonl`);
    const lines: string[] = [];
    const notes: string[] = [];
    const server = await startGuardServer({ port: 0, graceMillis: 5_000, print: (l) => lines.push(l), log: (l) => notes.push(l), metricExportIntervalMillis: 60_000 });
    try {
      const traces = new OTLPTraceExporter({ url: `${server.url}/v1/traces` });
      const logs = new OTLPLogExporter({ url: `${server.url}/v1/logs` });
      const sendLogs = () => exportAll(logs, records.logs.map(toReadableLog));
      const sendSpans = () => exportAll(traces, records.spans.map(toReadableSpan));
      if (order === 'logs-first') {
        await sendLogs();
        await sendSpans();
      } else {
        await sendSpans();
        await sendLogs();
      }
      await traces.shutdown();
      await logs.shutdown();
      server.drain();
      return { decisions: [...server.decisions], unjudged: server.unjudgedBatches(), clockAnomalies: server.clockAnomalies(), lines, notes };
    } finally {
      await server.close();
    }
  }

  const expectedOf = (name: string) =>
    readFileSync(`${CASES}${name}.expected.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.decision !== 'none')
      .map((l) => KEYS.map((k) => l[k]));

  it.each([
    ['t2-19-otel-ms-start-ns-end-tight-gap', 'logs-first'],
    ['t2-19-otel-ms-start-ns-end-tight-gap', 'spans-first'],
    ['t2-15-otel-negative-duration-tool-spans', 'logs-first'],
    ['t2-15-otel-negative-duration-tool-spans', 'spans-first'],
  ] as const)('%s (%s) gives its right value', async (name, order) => {
    const r = await serveCase(name, order);
    const got = r.decisions
      .filter((d) => d.outcome.decision !== 'none')
      .map((d) => {
        const o = d.outcome;
        return [o.decision, o.phaseBefore, o.phaseAfter, failureCountBucket(o.failureCount), batchCountBucket(o.batchCount), o.candidateOrdinal, o.resetReason];
      });
    expect(got).toEqual(expectedOf(name));
    if (name.startsWith('t2-15')) {
      expect(r.clockAnomalies).toBeGreaterThan(0);
      const counter = r.lines
        .map((l) => JSON.parse(l) as { signal: string; name?: string; value?: number })
        .find((p) => p.name === 'qwen-code.repeated_tool_failure_guard.clock_anomalies');
      expect(counter?.value).toBe(r.clockAnomalies);
    }
  });

  it('traces without logs: every batch counted and logged as unjudged (no terminal records)', async () => {
    const r = await serveCase('t2-18a-split-traces-only', 'spans-first');
    expect(r.unjudged).toEqual({ no_terminal_records: 11 });
    expect(r.notes.some((n) => /batch\(es\) not judged: no terminal records/.test(n))).toBe(true);
    const counter = r.lines
      .map((l) => JSON.parse(l) as { signal: string; name?: string; value?: number; attributes?: Record<string, unknown> })
      .find((p) => p.name === 'qwen-code.repeated_tool_failure_guard.unjudged_batches');
    expect(counter).toMatchObject({ value: 11, attributes: { reason: 'no_terminal_records' } });
  });
});

describe('serve keeps a bounded window of decisions (it runs for days)', () => {
  it.each([
    { maxKeptDecisions: 3, report: false, keeps: 3 },
    { maxKeptDecisions: 3, report: true, keeps: Infinity },
    { maxKeptDecisions: 1, report: false, keeps: 1 },
    { maxKeptDecisions: Infinity, report: false, keeps: Infinity },
    // not a number of at least 1: the default (10,000), which keeps this whole capture
    { maxKeptDecisions: Number.NaN, report: false, keeps: Infinity },
    { maxKeptDecisions: 0, report: false, keeps: Infinity },
  ])('maxKeptDecisions $maxKeptDecisions, report $report', async ({ maxKeptDecisions, report, keeps }) => {
    const records = loadFixture('acp-shadow-drain');
    const expected = await replayRecords(records, { mode: 'shadow' });
    expect(expected.decisions.length).toBeGreaterThan(3);
    const server = await startGuardServer({ port: 0, graceMillis: 5_000, print: () => {}, log: () => {}, metricExportIntervalMillis: 60_000, maxKeptDecisions, report });
    try {
      server.ingest(records);
      server.drain();
      expect(server.decisionCount()).toBe(expected.decisions.length);
      // without the report only the most recent are kept; the report reads every decision
      const kept = keeps === Infinity ? expected.decisions : expected.decisions.slice(-keeps);
      expect(summary(server.decisions)).toEqual(summary(kept));
    } finally {
      await server.close();
    }
  });
});

/**
 * Issue 13 item 1: `serve` holds telemetry within a byte budget, not a record count. 120 request
 * bodies of 15 MB (real qwen-code-shaped spans plus spans and attributes the guard never reads)
 * are sent by the real OTLP/HTTP protobuf exporters, four at a time, to a `serve` process with a
 * 32 MiB budget (room for two 15 MB bodies in flight). Its peak RSS stays under the budget plus the stated overhead; every prompt is
 * judged (no accepted record lost); refused bodies were retried by the exporter until accepted.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { context, trace } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { modelRequest, toolCall } from '../helpers/generators.js';

const MAIN = new URL('../../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;
const MiB = 1024 * 1024;
const BODIES = 120;
const BUDGET = 32 * MiB;
/**
 * Stated overhead of a `serve` process over its budget: the Node runtime and modules (about
 * 90 MiB), one 15 MB body being decoded at a time (protobuf objects and strings, about 4x its size),
 * and garbage not yet collected; measured 235-278 MiB peak in all over three runs with a 32 MiB budget.
 */
const OVERHEAD = 320 * MiB;
const JUNK = 'x'.repeat(MiB);
const JUNK_SPANS = 14;

function peakRssBytes(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

function exportAll<T>(exporter: { export(items: T[], cb: (r: ExportResult) => void): void }, items: T[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(items, resolve));
}

describe('serve memory is bounded in bytes', () => {
  it('120 bodies of 15 MB: peak RSS under budget + overhead, every prompt judged, refused bodies retried', async () => {
    // A grace longer than the run: a body refused under the budget and retried later must not find
    // its prompt's other records already released (on a loaded machine the run takes over 30 s).
    const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--grace-millis', '300000', '--ingest-budget-bytes', String(BUDGET)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 20_000);
        child.stderr.on('data', () => {
          const m = /receiving OTLP\/HTTP on (http:\/\/[^\s]+)/.exec(stderr);
          if (m?.[1] !== undefined) {
            clearTimeout(t);
            resolve(m[1]);
          }
        });
      });
      const traceExporter = new OTLPTraceExporter({ url: `${url}/v1/traces`, timeoutMillis: 120_000 });
      const logExporter = new OTLPLogExporter({ url: `${url}/v1/logs`, timeoutMillis: 120_000 });

      let next = 0;
      let bodyBytes = 0;
      const failures: string[] = [];
      const worker = async (): Promise<void> => {
        // each worker records with its own providers, so one prompt's records are one body
        const spans = new InMemorySpanExporter();
        const logs = new InMemoryLogRecordExporter();
        const tracer = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }).getTracer('qwen-code');
        const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: logs })] });
        const logger = loggerProvider.getLogger('qwen-code');
        for (let i = next++; i < BODIES; i = next++) {
          const promptId = `sess-${i}########1`;
          const interaction: Span = tracer.startSpan('qwen-code.interaction', {
            root: true,
            attributes: { 'qwen-code.prompt_id': promptId, 'qwen-code.message_type': 'acp_prompt', 'session.id': `sess-${i}` },
          });
          modelRequest(tracer, logger, interaction, promptId);
          toolCall(tracer, logger, interaction, promptId, { callId: `c${i}-1` });
          toolCall(tracer, logger, interaction, promptId, { callId: `c${i}-2` });
          for (let j = 0; j < JUNK_SPANS; j++) {
            // spans the guard never reads, and unread attributes on a span it does read
            tracer.startSpan('qwen-code.api_response', { attributes: { 'gen_ai.output.messages': JUNK } }, trace.setSpan(context.active(), interaction)).end();
          }
          interaction.setAttribute('gen_ai.input.messages', JUNK);
          // the next model request starts a few milliseconds after the calls ended (real timing;
          // same-millisecond starts are issue 12's mixed-precision case)
          await new Promise((r) => setTimeout(r, 3));
          modelRequest(tracer, logger, interaction, promptId);
          interaction.end();
          await loggerProvider.forceFlush();
          const finishedSpans = spans.getFinishedSpans();
          const finishedLogs = logs.getFinishedLogRecords();
          spans.reset();
          logs.reset();
          bodyBytes += (JUNK_SPANS + 1) * MiB;
          const s = await exportAll(traceExporter, [...finishedSpans]);
          if (s.code !== ExportResultCode.SUCCESS) failures.push(`traces ${i}: ${s.error?.message ?? ''}`);
          const l = await exportAll(logExporter, [...finishedLogs]);
          if (l.code !== ExportResultCode.SUCCESS) failures.push(`logs ${i}: ${l.error?.message ?? ''}`);
        }
      };
      await Promise.all(Array.from({ length: 4 }, () => worker()));
      const peak = peakRssBytes(child.pid as number);
      await traceExporter.shutdown();
      await logExporter.shutdown();

      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);

      expect(failures).toEqual([]);
      expect(bodyBytes).toBeGreaterThanOrEqual(BODIES * 15 * MiB);
      // every prompt judged: one `tracked` decision each (2 failures, 1 batch)
      const decisions = stdout
        .split('\n')
        .filter((l) => l.includes('"qwen-code.repeated_tool_failure_guard"'))
        .map((l) => (JSON.parse(l) as { attributes: Record<string, string> }).attributes);
      expect(new Set(decisions.map((a) => a.prompt_id)).size).toBe(BODIES);
      expect(decisions.every((a) => a.decision === 'tracked' && a.failure_count_bucket === '1-2')).toBe(true);
      console.log(`serve peak RSS ${(peak / MiB).toFixed(0)} MiB with a ${BUDGET / MiB} MiB budget after ${(bodyBytes / MiB).toFixed(0)} MiB of bodies`);
      // the budget was reached and the exporter retried what was refused
      expect(stderr).toMatch(/refused a \/v1\/traces request: (429|503) /);
      expect(peak).toBeLessThan(BUDGET + OVERHEAD);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

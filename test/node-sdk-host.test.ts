/**
 * The guard registered in the real NodeSDK of whichever OpenTelemetry JS line is installed
 * (`@opentelemetry/sdk-node` 0.223 with the 2.x packages under Node 20 in `npm test`; 0.301 with
 * the 3.x packages under Node 24 in CI's second run), as README shows, with no provider passed to
 * the guard: its decision logs and counters must reach the providers the SDK registered globally.
 * The logs API moved between the lines (`@opentelemetry/api-logs` on 2.x, `logs` of
 * `@opentelemetry/api` 1.10 on 3.x); a guard reading the wrong one emits into a no-op logger.
 */
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemoryLogRecordExporter, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { AggregationTemporality, InMemoryMetricExporter, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { createRepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';
import { FakeQwenAgent, twoFailures } from './helpers/setup.js';
import type { Logger } from './helpers/setup.js';
import * as api from '@opentelemetry/api';

const GUARD_EVENT = 'qwen-code.repeated_tool_failure_guard';
const GUARD_COUNTER = 'qwen-code.repeated_tool_failure_guard.count';

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

/** The agent's Logger from the global logs API of the installed line: api 1.10's `logs`, else api-logs'. */
async function agentLogger(): Promise<Logger> {
  const fromApi = (api as { logs?: { getLogger(name: string): unknown } }).logs;
  const logsApi = fromApi ?? (await import('@opentelemetry/api-logs')).logs;
  return logsApi.getLogger('qwen-code') as Logger;
}

describe('the guard inside the real NodeSDK (globals only)', () => {
  it('decisions reach the SDK-registered LoggerProvider and MeterProvider: tracked, would_warn after 8 failures across 4 batches, then would_stop', async () => {
    const hostLogs = new InMemoryLogRecordExporter();
    const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 2_147_483_647 });
    const guard = createRepeatedToolFailureGuard({ mode: 'shadow', sweepIntervalMillis: 0 });
    const decisions: string[] = [];
    guard.addListener({ onDecision: (d) => decisions.push(d.outcome.decision) });
    const sdk = new NodeSDK({
      spanProcessors: [guard.spanProcessor],
      logRecordProcessors: [guard.logRecordProcessor, new SimpleLogRecordProcessor({ exporter: hostLogs })],
      metricReaders: [reader],
      instrumentations: [],
      resourceDetectors: [],
    });
    sdk.start();
    stop = () => sdk.shutdown();

    // The agent writes through the SDK's global providers, as qwen-code does.
    const agent = new FakeQwenAgent(api.trace.getTracer('qwen-code'), await agentLogger());
    agent.startPrompt('p1');
    for (let i = 0; i < 5; i++) agent.batch('p1', twoFailures());
    agent.modelRequest('p1');
    agent.endPrompt('p1');

    expect(decisions.filter((d) => d !== 'none')).toEqual(['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop']);
    const guardRecords = hostLogs.getFinishedLogRecords().filter((r) => r.attributes['event.name'] === GUARD_EVENT);
    expect(guardRecords.map((r) => r.attributes['decision'])).toEqual(['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop']);
    expect(guardRecords.every((r) => r.instrumentationScope.name === 'repeated-tool-failure-guard')).toBe(true);

    await reader.forceFlush();
    const points = (metricExporter.getMetrics().at(-1)?.scopeMetrics ?? [])
      .flatMap((sm) => sm.metrics)
      .filter((m) => m.descriptor.name === GUARD_COUNTER)
      .flatMap((m): ReadonlyArray<{ attributes: Record<string, unknown>; value: unknown }> => m.dataPoints);
    const byDecision: Record<string, number> = {};
    for (const dp of points) byDecision[String(dp.attributes['decision'])] = (byDecision[String(dp.attributes['decision'])] ?? 0) + Number(dp.value);
    expect(byDecision).toEqual({ tracked: 3, would_warn: 1, would_stop: 1 });
  });
});

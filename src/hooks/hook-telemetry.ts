/**
 * A hook's own telemetry: the guard's counters and diagnostic logs (the same names and attributes
 * as in process, in the agent profile's namespace, e.g. `claude-code`) for the decisions of one
 * hook invocation, exported over OTLP/HTTP (JSON) before the hook exits. Loaded only when a hook
 * has decisions and an endpoint.
 *
 * Claude Code 2.1.328 removes every `OTEL_*` variable from a hook's environment (observed: the CLI
 * had `OTEL_LOGS_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT`, …, its hooks saw none), so the endpoint
 * is given explicitly: `--otlp-endpoint <url>` or `RTFG_<AGENT>_OTLP_ENDPOINT` (a base URL;
 * `/v1/logs` and `/v1/metrics` are appended). Counters use delta temporality: each hook process
 * adds its own transitions. Best effort, bounded by a 2 s exporter timeout; failures are swallowed
 * and never change the hook's answer, which is already printed. The exporters are the optional peer
 * packages `@opentelemetry/exporter-logs-otlp-http` and `@opentelemetry/exporter-metrics-otlp-http`
 * (see `loadOtlpHttpExporters`); without them nothing is exported.
 */
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { BatchDecision } from '../engine/failure-types.js';
import { GuardTelemetry } from '../otel/guard-telemetry.js';
import { WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileName } from '../profiles/registry.js';
import { loadOtlpHttpExporters } from '../serve/otlp-http-exporters.js';

/** Exporter timeout, in milliseconds. */
const TIMEOUT_MILLIS = 2_000;

/**
 * Load the exporters for an endpoint, and return the export of a hook invocation's decisions.
 *
 * @param endpoint - OTLP/HTTP base URL, e.g. `http://127.0.0.1:4318`
 * @param profile - the agent's wire profile (its namespace names the telemetry)
 * @returns a function that emits and exports the decisions' telemetry; it resolves when exported
 *   (or failed) and never rejects
 * @throws {Error} when the optional exporter packages are missing (the message names them and the
 *   `npm install` line)
 */
export async function prepareHookTelemetry(endpoint: string, profile: WireProfileName): Promise<(decisions: readonly BatchDecision[]) => Promise<void>> {
  const { OTLPLogExporter, OTLPMetricExporter } = await loadOtlpHttpExporters();
  const base = endpoint.replace(/\/+$/, '');
  return async (decisions) => {
    if (decisions.length === 0) return;
    let loggerProvider: LoggerProvider | undefined;
    let meterProvider: MeterProvider | undefined;
    try {
      loggerProvider = new LoggerProvider({
        processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${base}/v1/logs`, timeoutMillis: TIMEOUT_MILLIS }) })],
      });
      meterProvider = new MeterProvider({
        readers: [
          new PeriodicExportingMetricReader({
            exporter: new OTLPMetricExporter({
              url: `${base}/v1/metrics`,
              timeoutMillis: TIMEOUT_MILLIS,
              temporalityPreference: AggregationTemporality.DELTA,
            }),
            exportIntervalMillis: 60_000,
            exportTimeoutMillis: TIMEOUT_MILLIS,
          }),
        ],
      });
      const telemetry = new GuardTelemetry({ namespace: WIRE_PROFILES[profile].defaultNamespace, loggerProvider, meterProvider });
      for (const d of decisions) telemetry.onDecision(d);
    } catch {
      // best effort
    }
    await Promise.allSettled([loggerProvider?.shutdown(), meterProvider?.shutdown()]);
  };
}

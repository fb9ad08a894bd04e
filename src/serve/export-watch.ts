/**
 * `serve --export-endpoint`: the guard's own logs and counters leave through OTLP/HTTP exporters
 * that report a failed export only to their callback. This watch sits between the SDK and them and
 * says on stderr, once per outage, that the guard's telemetry is being lost (and once when exports
 * succeed again), instead of nothing.
 */
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { AggregationTemporality, InstrumentType, PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';

/**
 * Why an export failed, from a closed vocabulary: a Node system error code (`ECONNREFUSED`,
 * `ETIMEDOUT`…), `HTTP <status>`, or `export failed`. Never the error's message (it may quote a
 * response body).
 */
export function exportFailureReason(error: unknown): string {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  for (const code of [e?.code, e?.cause?.code]) {
    if (typeof code === 'string' && /^E[A-Z0-9_]{1,30}$/.test(code)) return code;
    if (typeof code === 'number' && Number.isInteger(code) && code >= 100 && code <= 599) return `HTTP ${code}`;
  }
  const message = error instanceof Error ? error.message : '';
  const system = /\b(E[A-Z]{3,20})\b/.exec(message);
  return system?.[1] ?? 'export failed';
}

/** Notes export results of the guard's exporters and says when its telemetry starts and stops being lost. */
export class ExportWatch {
  private readonly _endpoint: string;
  private readonly _log: (line: string) => void;
  private _failing = false;
  private _lost = 0;

  /**
   * @param endpoint - the export endpoint as the user gave it (printed in the lines)
   * @param log - where the lines go (stderr in the CLI)
   */
  constructor(endpoint: string, log: (line: string) => void) {
    this._endpoint = endpoint;
    this._log = log;
  }

  /** Exports that failed since the start. */
  get lostExports(): number {
    return this._lost;
  }

  /** The log exporter, watched. */
  logExporter(inner: LogRecordExporter): LogRecordExporter {
    return {
      export: (records: ReadableLogRecord[], done: (r: ExportResult) => void) => inner.export(records, (r) => this._settled('logs', r, done)),
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    };
  }

  /** The metric exporter, watched. */
  metricExporter(inner: PushMetricExporter): PushMetricExporter {
    const watched: PushMetricExporter = {
      export: (metrics: ResourceMetrics, done: (r: ExportResult) => void) => inner.export(metrics, (r) => this._settled('metrics', r, done)),
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown(),
    };
    if (inner.selectAggregationTemporality !== undefined) {
      const select = inner.selectAggregationTemporality.bind(inner);
      watched.selectAggregationTemporality = (type: InstrumentType): AggregationTemporality => select(type);
    }
    if (inner.selectAggregation !== undefined) watched.selectAggregation = inner.selectAggregation.bind(inner);
    return watched;
  }

  private _settled(signal: 'logs' | 'metrics', result: ExportResult, done: (r: ExportResult) => void): void {
    try {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this._failing) {
          this._failing = false;
          this._log(`serve: exporting guard telemetry to ${this._endpoint} again (${this._lost} export(s) lost so far)`);
        }
      } else {
        this._lost += 1;
        if (!this._failing) {
          this._failing = true;
          this._log(
            `serve: guard telemetry is being lost: exporting ${signal} to ${this._endpoint} failed (${exportFailureReason(result.error)}); decisions still reach the summary at exit (said once until exports succeed again)`,
          );
        }
      }
    } catch {
      // logging never breaks the export pipeline
    }
    done(result);
  }
}

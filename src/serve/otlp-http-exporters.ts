/**
 * The OTLP/HTTP exporters of the guard's own logs and metrics, loaded only when `serve` exports to
 * an endpoint: they are optional peer dependencies, so a plain install carries no second copy of
 * the OpenTelemetry SDK packages they pin.
 */
import type { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import type { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';

/** The two exporter classes. */
export interface OtlpHttpExporters {
  readonly OTLPLogExporter: typeof OTLPLogExporter;
  readonly OTLPMetricExporter: typeof OTLPMetricExporter;
}

/** The packages `serve --export-endpoint` needs, to name in an install hint. */
export const OTLP_HTTP_EXPORTER_PACKAGES = ['@opentelemetry/exporter-logs-otlp-http', '@opentelemetry/exporter-metrics-otlp-http'] as const;

let loaded: Promise<OtlpHttpExporters> | undefined;

/**
 * Import `@opentelemetry/exporter-logs-otlp-http` and `@opentelemetry/exporter-metrics-otlp-http`
 * (once; later calls share the result).
 *
 * @returns Their exporter classes.
 * @throws {Error} When either package is not installed: the message names both packages and the
 *   `npm install` line that adds them; `cause` is the import error.
 */
export function loadOtlpHttpExporters(): Promise<OtlpHttpExporters> {
  loaded ??= (async () => {
    try {
      const [logs, metrics] = await Promise.all([import('@opentelemetry/exporter-logs-otlp-http'), import('@opentelemetry/exporter-metrics-otlp-http')]);
      return { OTLPLogExporter: logs.OTLPLogExporter, OTLPMetricExporter: metrics.OTLPMetricExporter };
    } catch (err) {
      loaded = undefined;
      throw new Error(
        `exporting the guard's telemetry over OTLP/HTTP needs the optional packages ${OTLP_HTTP_EXPORTER_PACKAGES.join(' and ')}: npm install ${OTLP_HTTP_EXPORTER_PACKAGES.map((p) => `${p}@^0.223.0`).join(' ')}`,
        { cause: err },
      );
    }
  })();
  return loaded;
}

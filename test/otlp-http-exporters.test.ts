import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JsonLogsSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { startGuardServer } from '../src/serve/guard-server.js';
import { loadOtlpHttpExporters } from '../src/serve/otlp-http-exporters.js';
import { loadFixture, toReadableLog, toReadableSpan } from './helpers/recorded.js';

describe('serve: the optional OTLP/HTTP exporters', () => {
  it('loads the installed exporter classes, once', async () => {
    const a = await loadOtlpHttpExporters();
    expect(a.OTLPLogExporter).toBe(OTLPLogExporter);
    expect(a.OTLPMetricExporter).toBe(OTLPMetricExporter);
    expect(await loadOtlpHttpExporters()).toBe(a);
  });

  it('serve with an export endpoint sends the guard logs and metrics there over OTLP/HTTP', async () => {
    const paths: string[] = [];
    const sink = createServer((req, res) => {
      paths.push(`${req.method} ${req.url} ${String(req.headers['content-type'])}`);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const port = (sink.address() as AddressInfo).port;
    try {
      const server = await startGuardServer({ port: 0, graceMillis: 50, exportEndpoint: `http://127.0.0.1:${port}/`, metricExportIntervalMillis: 60_000 });
      const records = loadFixture('acp-enforce'); // a failing loop: the guard decides and reports
      const post = (path: string, body: Uint8Array | undefined) =>
        fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body ?? new Uint8Array() });
      expect((await post('/v1/logs', JsonLogsSerializer.serializeRequest(records.logs.map(toReadableLog)))).status).toBe(200);
      expect((await post('/v1/traces', JsonTraceSerializer.serializeRequest(records.spans.map(toReadableSpan)))).status).toBe(200);
      await server.close(); // judges what is held, then the providers' shutdown exports once
      expect(server.decisions.some((d) => d.outcome.decision !== 'none')).toBe(true);
      expect(paths).toContain('POST /v1/logs application/json');
      expect(paths).toContain('POST /v1/metrics application/json');
    } finally {
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    }
  });
});

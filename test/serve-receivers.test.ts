/**
 * Both receivers of `serve` read protobuf through the same projected reader: a real capture sent by
 * the SDK's real OTLP/gRPC exporters and by its real OTLP/HTTP protobuf exporters reaches `onRecords`
 * as the same records, which are the generated decoders' records projected to what the profile reads.
 */
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpProtobufToRecords } from '../src/otlp/otlp-protobuf-records.js';
import { emptyRecordBatch } from '../src/otlp/records.js';
import type { RecordBatch } from '../src/otlp/records.js';
import { QWEN_CODE_READS } from '../src/profiles/qwen-code/reads.js';
import { startOtlpGrpcReceiver } from '../src/serve/otlp-grpc-receiver.js';
import type { OtlpGrpcReceiver } from '../src/serve/otlp-grpc-receiver.js';
import { startOtlpHttpReceiver } from '../src/serve/otlp-http-receiver.js';
import type { OtlpHttpReceiver } from '../src/serve/otlp-http-receiver.js';
import { RecordProjection } from '../src/serve/projection.js';
import { loadFixture, toReadableLog, toReadableSpan } from './helpers/recorded.js';

const overGrpc = emptyRecordBatch();
const overHttp = emptyRecordBatch();
const append = (into: RecordBatch) => (records: RecordBatch) => {
  into.spans.push(...records.spans);
  into.logs.push(...records.logs);
};
let grpc: OtlpGrpcReceiver;
let http: OtlpHttpReceiver;

beforeAll(async () => {
  const projection = new RecordProjection(QWEN_CODE_READS);
  grpc = await startOtlpGrpcReceiver({ host: '127.0.0.1', port: 0, maxMessageBytes: 8_000_000, projection, onRecords: append(overGrpc) });
  http = await startOtlpHttpReceiver({ host: '127.0.0.1', port: 0, maxBodyBytes: 8_000_000, projection, onRecords: append(overHttp) });
});

afterAll(async () => {
  await Promise.all([grpc?.close(), http?.close()]);
});

function exportAll<T>(exporter: { export(items: T[], done: (r: ExportResult) => void): void; shutdown(): Promise<void> }, items: T[]): Promise<ExportResult> {
  return new Promise<ExportResult>((done) => exporter.export(items, done)).finally(() => exporter.shutdown());
}

describe('the OTLP/gRPC and OTLP/HTTP receivers read protobuf the same way', () => {
  it.each(['acp-enforce', 'headless-yolo'])('%s: the same projected records over gRPC as over HTTP, as the generated decoders give them projected', async (name) => {
    overGrpc.spans.length = overGrpc.logs.length = overHttp.spans.length = overHttp.logs.length = 0;
    const capture = loadFixture(name);
    const spans = capture.spans.map(toReadableSpan);
    const logs = capture.logs.map(toReadableLog);
    const results = await Promise.all([
      exportAll(new GrpcTraceExporter({ url: `http://${grpc.address}` }), spans),
      exportAll(new GrpcLogExporter({ url: `http://${grpc.address}` }), logs),
      exportAll(new ProtoTraceExporter({ url: `${http.url}/v1/traces` }), spans),
      exportAll(new ProtoLogExporter({ url: `${http.url}/v1/logs` }), logs),
    ]);
    expect(results.map((r) => r.code)).toEqual(Array(4).fill(ExportResultCode.SUCCESS));
    const expected = new RecordProjection(QWEN_CODE_READS).project(
      otlpProtobufToRecords('logs', ProtobufLogsSerializer.serializeRequest(logs)!, otlpProtobufToRecords('traces', ProtobufTraceSerializer.serializeRequest(spans)!)),
    );
    const readNames = new Set(QWEN_CODE_READS.spanNames);
    expect(overGrpc.spans.length).toBe(capture.spans.filter((s) => readNames.has(s.name)).length);
    expect(overGrpc.spans.length).toBeGreaterThan(0);
    expect(overGrpc.logs.length).toBeGreaterThan(0);
    expect(overGrpc.logs.every((l) => l.body === undefined)).toBe(true); // bodies are never kept
    expect(overGrpc).toStrictEqual(overHttp);
    expect(overGrpc).toStrictEqual({ ...expected, metricCount: 0 });
  });
});

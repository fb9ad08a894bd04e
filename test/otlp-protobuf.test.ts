import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { JsonLogsSerializer, JsonTraceSerializer, ProtobufLogsSerializer, ProtobufMetricsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { AggregationTemporality, DataPointType, InstrumentType } from '@opentelemetry/sdk-metrics';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { decodeOtlpProtobuf } from '../src/otlp/otlp-protobuf.js';
import { otlpRequestToRecords } from '../src/otlp/otlp.js';
import { loadFixture, toReadableLog, toReadableSpan } from './helpers/recorded.js';

const json = (bytes: Uint8Array | undefined): Record<string, unknown> => JSON.parse(Buffer.from(bytes ?? new Uint8Array()).toString('utf8')) as Record<string, unknown>;

describe('decodeOtlpProtobuf: the SDK exporter serializers, decoded by the generated decoders', () => {
  it.each(['acp-enforce', 'acp-shadow-drain', 'headless-yolo'])(
    '%s: protobuf and OTLP/JSON encodings of the same real capture give the same records',
    (name) => {
      const records = loadFixture(name);
      const spans = records.spans.map(toReadableSpan);
      const logs = records.logs.map(toReadableLog);
      const fromProto = otlpRequestToRecords(decodeOtlpProtobuf('traces', ProtobufTraceSerializer.serializeRequest(spans)!));
      otlpRequestToRecords(decodeOtlpProtobuf('logs', ProtobufLogsSerializer.serializeRequest(logs)!), fromProto);
      const fromJson = otlpRequestToRecords(json(JsonTraceSerializer.serializeRequest(spans)));
      otlpRequestToRecords(json(JsonLogsSerializer.serializeRequest(logs)), fromJson);
      expect(fromProto.spans.length).toBe(records.spans.length);
      expect(fromProto.logs.length).toBe(records.logs.length);
      expect(fromProto).toEqual(fromJson);
      // and both are the capture itself (the serializers group by scope: compare in span id order)
      const view = (spans: typeof records.spans) =>
        spans.map((s) => [s.spanContext().spanId, s.name, s.parentSpanContext?.spanId, s.startTime, s.endTime, s.attributes]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
      expect(view(fromProto.spans)).toEqual(view(records.spans));
    },
  );

  const resource = resourceFromAttributes({ 'service.name': 'qwen-code' });
  const scope = { name: 'qwen-code', version: '0.24.4' };

  it('gives the JSON shape: byte arrays for ids, exact decimal nanoseconds beyond 2^53, typed attribute values', () => {
    const span: ReadableSpan = {
      name: 'qwen-code.tool',
      kind: SpanKind.INTERNAL,
      spanContext: () => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 }),
      parentSpanContext: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: '00f067aa0ba902b7', traceFlags: 1 },
      startTime: [1764460800, 123456789],
      endTime: [1764460801, 1],
      status: { code: SpanStatusCode.ERROR, message: 'tool_error' },
      attributes: { s: 'x', b: false, i: 42, big: -Number.MAX_SAFE_INTEGER, d: 0.5, a: ['p', 'q'] },
      links: [],
      events: [],
      duration: [1, 0],
      ended: true,
      resource,
      instrumentationScope: scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
    const request = decodeOtlpProtobuf('traces', ProtobufTraceSerializer.serializeRequest([span])!);
    const decoded = (request.resourceSpans as { scopeSpans: { scope: { name: string }; spans: Record<string, unknown>[] }[] }[])[0]!.scopeSpans[0]!;
    expect(decoded.scope.name).toBe('qwen-code');
    const s = decoded.spans[0]!;
    expect(s.traceId).toEqual([...Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex')]);
    expect(s.parentSpanId).toEqual([...Buffer.from('00f067aa0ba902b7', 'hex')]);
    expect(s.startTimeUnixNano).toBe('1764460800123456789');
    expect(s.endTimeUnixNano).toBe('1764460801000000001');
    expect(s.name).toBe('qwen-code.tool');
    expect(s.status).toEqual({ code: 2, message: 'tool_error' });
    expect(s.attributes).toEqual([
      { key: 's', value: { stringValue: 'x' } },
      { key: 'b', value: { boolValue: false } },
      { key: 'i', value: { intValue: '42' } },
      { key: 'big', value: { intValue: '-9007199254740991' } },
      { key: 'd', value: { doubleValue: 0.5 } },
      { key: 'a', value: { arrayValue: { values: [{ stringValue: 'p' }, { stringValue: 'q' }] } } },
    ]);
  });

  it('decodes a log record event name (opentelemetry-proto 1.5+ field 12)', () => {
    const log = {
      hrTime: [1764460800, 5],
      hrTimeObserved: [1764460800, 6],
      spanContext: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 },
      body: 'Tool call: read_file.',
      attributes: { 'event.name': 'qwen-code.tool_call', function_name: 'read_file' },
      resource,
      instrumentationScope: scope,
      droppedAttributesCount: 0,
      eventName: 'gen_ai.client.inference.operation.details',
    } as unknown as ReadableLogRecord;
    const request = decodeOtlpProtobuf('logs', ProtobufLogsSerializer.serializeRequest([log])!);
    const records = otlpRequestToRecords(request);
    expect(records.logs).toHaveLength(1);
    expect(records.logs[0]!.eventName).toBe('gen_ai.client.inference.operation.details');
    expect(records.logs[0]!.hrTime).toEqual([1764460800, 5]);
    expect(records.logs[0]!.body).toBe('Tool call: read_file.');
    expect(records.logs[0]!.spanContext?.spanId).toBe('b7ad6b7169203331');
  });

  it('decodes a metrics request', () => {
    const metrics: ResourceMetrics = {
      resource,
      scopeMetrics: [
        {
          scope,
          metrics: [
            {
              descriptor: { name: 'qwen-code.tool.call.count', description: '', unit: '', type: InstrumentType.COUNTER, valueType: 1 },
              aggregationTemporality: AggregationTemporality.CUMULATIVE,
              dataPointType: DataPointType.SUM,
              isMonotonic: true,
              dataPoints: [{ startTime: [1764460800, 0], endTime: [1764460810, 0], attributes: { function_name: 'read_file' }, value: 3 }],
            },
          ],
        },
      ],
    } as unknown as ResourceMetrics;
    const request = decodeOtlpProtobuf('metrics', ProtobufMetricsSerializer.serializeRequest(metrics)!);
    const rm = request.resourceMetrics as { scopeMetrics: { metrics: { name: string; sum: { dataPoints: { asInt?: string; asDouble?: number }[] } }[] }[] }[];
    expect(rm).toHaveLength(1);
    expect(rm[0]!.scopeMetrics[0]!.metrics[0]!.name).toBe('qwen-code.tool.call.count');
    expect(otlpRequestToRecords(request).metricCount).toBe(1);
  });

  it('an empty body is an empty request; a malformed body throws', () => {
    expect(decodeOtlpProtobuf('traces', new Uint8Array())).toEqual({ resourceSpans: [] });
    expect(() => decodeOtlpProtobuf('traces', new Uint8Array([0x0a, 0xff, 0xff, 0xff]))).toThrow();
    expect(() => decodeOtlpProtobuf('logs', new Uint8Array([0x0f]))).toThrow();
  });
});

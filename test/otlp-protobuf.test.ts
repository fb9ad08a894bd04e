import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { JsonLogsSerializer, JsonTraceSerializer, ProtobufLogsSerializer, ProtobufMetricsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { AggregationTemporality, DataPointType, InstrumentType } from '@opentelemetry/sdk-metrics';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { decodeOtlpProtobuf } from '../src/otlp/otlp-protobuf.js';
import { otlpRequestToRecords } from '../src/otlp/otlp.js';
import { otlpProtobufToRecords } from '../src/otlp/otlp-protobuf-records.js';
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
    const bytes = ProtobufMetricsSerializer.serializeRequest(metrics)!;
    const request = decodeOtlpProtobuf('metrics', bytes);
    expect(otlpProtobufToRecords('metrics', bytes).metricCount).toBe(1);
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

describe('otlpProtobufToRecords: records straight from the decoded messages', () => {
  it.each(['acp-enforce', 'acp-shadow-drain', 'acp-shadow-nodrain', 'headless-yolo'])('%s: the same records as otlpRequestToRecords(decodeOtlpProtobuf(…))', (name) => {
    const records = loadFixture(name);
    const traces = ProtobufTraceSerializer.serializeRequest(records.spans.map(toReadableSpan))!;
    const logs = ProtobufLogsSerializer.serializeRequest(records.logs.map(toReadableLog))!;
    const direct = otlpProtobufToRecords('traces', traces);
    otlpProtobufToRecords('logs', logs, direct);
    const viaObjects = otlpRequestToRecords(decodeOtlpProtobuf('traces', traces));
    otlpRequestToRecords(decodeOtlpProtobuf('logs', logs), viaObjects);
    expect(direct.spans.length).toBe(records.spans.length);
    expect(direct.logs.length).toBe(records.logs.length);
    expect(direct).toEqual(viaObjects);
  });

  it.each(['pydantic-ai-2.68.0/failure-loop.v5', 'strands-agents-1.62.0/failure-loop.latest'])(
    'genai %s: span status and exception events as the object path reads them (the genai profile needs both)',
    (name) => {
      const records = loadFixture(new URL(`../fixtures/genai/${name}.otlp.jsonl`, import.meta.url).pathname);
      const traces = ProtobufTraceSerializer.serializeRequest(records.spans.map(toReadableSpan))!;
      const direct = otlpProtobufToRecords('traces', traces);
      expect(direct).toEqual(otlpRequestToRecords(decodeOtlpProtobuf('traces', traces)));
      expect(direct.spans.some((sp) => sp.status.code === 2)).toBe(true);
      expect(direct.spans.some((sp) => sp.events.some((e) => e.name === 'exception'))).toBe(true);
    },
  );

  it('every attribute value type, an event name, a body, zero times and empty ids as the object path reads them', () => {
    const resource = resourceFromAttributes({ 'service.name': 'qwen-code' });
    const log = {
      hrTime: [0, 0],
      hrTimeObserved: [1764460800, 7],
      spanContext: undefined,
      body: { nested: { list: [1, 'a', true, 2.5] } },
      attributes: { s: '', b: true, i: -42, big: 2 ** 60, d: 1.25, a: [null, 'x'], kv: { k: { deep: 'v' } }, bytes: new Uint8Array([1, 255]) },
      resource,
      instrumentationScope: { name: '' },
      droppedAttributesCount: 0,
      eventName: 'qwen-code.tool_call',
    } as unknown as ReadableLogRecord;
    const body = ProtobufLogsSerializer.serializeRequest([log])!;
    const direct = otlpProtobufToRecords('logs', body);
    expect(direct).toEqual(otlpRequestToRecords(decodeOtlpProtobuf('logs', body)));
    expect(direct.logs[0]!.hrTime).toEqual([1764460800, 7]); // time 0: the observed time
    expect(direct.logs[0]!.attributes.i).toBe(-42);
    expect(direct.logs[0]!.attributes.bytes).toBe('01ff');
    expect(direct.logs[0]!.spanContext).toBeUndefined();
  });

  it('a malformed body throws and appends nothing', () => {
    const into = otlpProtobufToRecords('traces', new Uint8Array());
    expect(() => otlpProtobufToRecords('traces', new Uint8Array([0x0a, 0xff, 0xff, 0xff]), into)).toThrow();
    expect(into.spans).toHaveLength(0);
  });
});

describe('decoding string fields', () => {
  // ExportTraceServiceRequest { resource_spans { scope_spans { spans { name: <bytes> } } } }, by hand
  const withName = (name: Uint8Array) => {
    const span = Uint8Array.from([0x2a, name.length, ...name]); // Span.name = field 5
    const scopeSpans = Uint8Array.from([0x12, span.length, ...span]); // ScopeSpans.spans = field 2
    const resourceSpans = Uint8Array.from([0x12, scopeSpans.length, ...scopeSpans]); // ResourceSpans.scope_spans = field 2
    return Uint8Array.from([0x0a, resourceSpans.length, ...resourceSpans]); // resource_spans = field 1
  };

  it('reads UTF-8, including a real U+FFFD, and rejects invalid UTF-8 as protobufjs does', () => {
    const ok = withName(Buffer.from('qwen-code.tool é \uFFFD 😀', 'utf8'));
    expect(otlpProtobufToRecords('traces', ok).spans[0]!.name).toBe('qwen-code.tool é \uFFFD 😀');
    expect((decodeOtlpProtobuf('traces', ok).resourceSpans as { scopeSpans: { spans: { name: string }[] }[] }[])[0]!.scopeSpans[0]!.spans[0]!.name).toBe('qwen-code.tool é \uFFFD 😀');
    const bad = withName(Uint8Array.from([0x61, 0xc3, 0x28, 0x62])); // "a", a broken 2-byte sequence, "b"
    expect(() => otlpProtobufToRecords('traces', bad)).toThrow();
    expect(() => decodeOtlpProtobuf('traces', bad)).toThrow();
  });
});

/**
 * Plays recorded telemetry in real time through the OpenTelemetry JS SDK's own OTLP/gRPC
 * exporters, the way an agent's batch processors send it: each log record goes out with the next
 * log flush after its time, each span with the next span flush after its end.
 */
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { RecordedSpan } from '../../src/otlp/records.js';
import type { RecordBatch, RecordedLog } from '../../src/otlp/records.js';
import { hrTimeToMillis } from '../../src/profiles/wire-profile.js';
import { toReadableLogAsProduced, toReadableSpanAsProduced } from '../helpers/recorded.js';

/** When the records go out, in the agent's terms. */
export interface FlushIntervals {
  /** Log flush interval, in milliseconds (qwen-code: 1000). */
  readonly logMillis: number;
  /** Span flush interval, in milliseconds (qwen-code: 5000). */
  readonly spanMillis: number;
}

/** One scheduled export. */
interface Send {
  readonly at: number;
  readonly spans: RecordedSpan[];
  readonly logs: RecordedLog[];
}

/** An OTLP/gRPC endpoint the player sends to, with its own exporters. */
export class PlayerTarget {
  private readonly _traces: OTLPTraceExporter;
  private readonly _logs: OTLPLogExporter;
  /** Exports that did not succeed. */
  failures = 0;

  constructor(endpoint: string) {
    this._traces = new OTLPTraceExporter({ url: `http://${endpoint}`, timeoutMillis: 10_000 });
    this._logs = new OTLPLogExporter({ url: `http://${endpoint}`, timeoutMillis: 10_000 });
  }

  async send(spans: RecordedSpan[], logs: RecordedLog[]): Promise<void> {
    const one = <T>(exporter: { export(items: T[], done: (r: ExportResult) => void): void }, items: T[]): Promise<void> =>
      items.length === 0
        ? Promise.resolve()
        : new Promise((done) =>
            exporter.export(items, (r) => {
              if (r.code !== ExportResultCode.SUCCESS) this.failures += 1;
              done();
            }),
          );
    // Each record under its own producer's Resource (a mixed fleet: qwen-code, Claude Code, gemini-cli…).
    await Promise.all([one(this._traces, spans.map(toReadableSpanAsProduced)), one(this._logs, logs.map(toReadableLogAsProduced))]);
  }

  async shutdown(): Promise<void> {
    await Promise.all([this._traces.shutdown(), this._logs.shutdown()]);
  }
}

/** The export schedule of `records`, in time order. */
export function schedule(records: RecordBatch, flush: FlushIntervals): Send[] {
  const sends = new Map<number, Send>();
  const at = (t: number): Send => {
    let s = sends.get(t);
    if (s === undefined) sends.set(t, (s = { at: t, spans: [], logs: [] }));
    return s;
  };
  for (const l of records.logs) at(Math.ceil(hrTimeToMillis(l.hrTime) / flush.logMillis) * flush.logMillis).logs.push(l);
  for (const s of records.spans) at(Math.ceil(hrTimeToMillis(s.endTime) / flush.spanMillis) * flush.spanMillis).spans.push(s);
  return [...sends.values()].sort((a, b) => a.at - b.at);
}

/**
 * Send every scheduled export to every target when the wall clock reaches its time (exports to
 * one target go out one after another, in order). `onTick` runs before each send with the wall
 * time, so a test can act mid-stream.
 */
export async function play(records: RecordBatch, flush: FlushIntervals, targets: readonly PlayerTarget[], onTick?: (nowMillis: number) => Promise<void>): Promise<void> {
  for (const send of schedule(records, flush)) {
    const wait = send.at - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (onTick !== undefined) await onTick(Date.now());
    await Promise.all(targets.map((t) => t.send(send.spans, send.logs)));
  }
}

/** The records moved in time by `shiftMillis` (a real capture replayed now), each with its Resource, status and events. */
export function shifted(records: RecordBatch, shiftMillis: number): RecordBatch {
  const shift = BigInt(Math.round(shiftMillis)) * 1_000_000n;
  const move = (t: readonly [number, number]): [number, number] => {
    const ns = BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]) + shift;
    return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
  };
  return {
    spans: records.spans.map(
      (s) =>
        new RecordedSpan({
          name: s.name,
          attributes: { ...s.attributes },
          spanContext: s.spanContext(),
          parentSpanContext: s.parentSpanContext,
          startTime: move(s.startTime),
          endTime: move(s.endTime),
          scopeName: s.scopeName,
          resource: s.resource,
          status: s.status,
          events: s.events,
        }),
    ),
    logs: records.logs.map((l) => ({ ...l, hrTime: move(l.hrTime) })),
    metricCount: records.metricCount,
    ignoredCount: records.ignoredCount,
  };
}

/** Earliest event time of `records`, in milliseconds since the epoch. */
export function firstMillis(records: RecordBatch): number {
  let first = Number.POSITIVE_INFINITY;
  for (const s of records.spans) first = Math.min(first, hrTimeToMillis(s.startTime));
  for (const l of records.logs) first = Math.min(first, hrTimeToMillis(l.hrTime));
  return first;
}

import { readdirSync, readFileSync } from 'node:fs';
import type { Dirent } from 'node:fs';
import { join } from 'node:path';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { hrTimeDuration } from '@opentelemetry/core';
import { parseTelemetryText } from '../../src/otlp/telemetry-file.js';
import type { RecordBatch, RecordedLog, RecordedSpan } from '../../src/otlp/records.js';

export const FIXTURES = new URL('../../fixtures/qwen-code-0.24.4/', import.meta.url);

export function fixturePath(name: string): string {
  return new URL(`${name}.outfile.json`, FIXTURES).pathname;
}

const CAPTURE_ROOTS = [new URL('../../fixtures/', import.meta.url).pathname, '/work/shared/fixtures/'];

/**
 * Every telemetry capture under this repository's `fixtures/` and, where this machine has it, the
 * shared fixtures (qwen-code outfiles and OTLP JSON lines); a shared one is named `shared:<path>`.
 */
export function captures(): { name: string; path: string }[] {
  const out: { name: string; path: string }[] = [];
  const walk = (dir: string, root: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // a root that is not there on this machine
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path, root);
      else if (e.name.endsWith('.outfile.json') || e.name.endsWith('.otlp.jsonl')) out.push({ name: `${root === CAPTURE_ROOTS[0] ? '' : 'shared:'}${path.slice(root.length)}`, path });
    }
  };
  for (const root of CAPTURE_ROOTS) walk(root, root);
  return out;
}

/** A capture of `fixtures/qwen-code-0.24.4/` by name, or any telemetry file by absolute path. */
export function loadFixture(name: string): RecordBatch {
  const path = name.startsWith('/') ? name : fixturePath(name);
  return parseTelemetryText(readFileSync(path, 'utf8'), name);
}

const resource = resourceFromAttributes({ 'service.name': 'qwen-code', 'service.version': '0.24.4' });
const scopes = new Map<string, { name: string }>();

/** One scope object per name: the OTLP serializers group records by scope identity. */
function scope(name: string): { name: string } {
  const key = name || 'qwen-code';
  let s = scopes.get(key);
  if (s === undefined) scopes.set(key, (s = { name: key }));
  return s;
}

/** A recorded span as the SDK's ReadableSpan, so real OTLP exporters can send it. */
export function toReadableSpan(s: RecordedSpan): ReadableSpan {
  return {
    name: s.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => s.spanContext(),
    parentSpanContext: s.parentSpanContext,
    startTime: s.startTime,
    endTime: s.endTime,
    status: { code: (s.status.code as SpanStatusCode | undefined) ?? SpanStatusCode.UNSET },
    attributes: s.attributes as ReadableSpan['attributes'],
    links: [],
    // the recorded exception events (the only events records keep), at the span's end
    events: s.events.map((e) => ({ name: e.name, attributes: e.attributes as ReadableSpan['attributes'], time: s.endTime, droppedAttributesCount: 0 })),
    duration: hrTimeDuration(s.startTime, s.endTime),
    ended: true,
    resource,
    instrumentationScope: scope(s.scopeName),
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** A recorded log as the SDK's ReadableLogRecord. */
export function toReadableLog(l: RecordedLog): ReadableLogRecord {
  return {
    hrTime: l.hrTime,
    hrTimeObserved: l.hrTime,
    spanContext: l.spanContext,
    body: l.body,
    attributes: l.attributes as ReadableLogRecord['attributes'],
    resource,
    instrumentationScope: scope(l.instrumentationScope.name),
    droppedAttributesCount: 0,
    eventName: l.eventName,
  } as ReadableLogRecord;
}

const ownResources = new Map<string, ReturnType<typeof resourceFromAttributes>>();

/** The record's own Resource as an SDK Resource (one object per attribute set), or qwen-code's when it has none. */
function ownResource(r: { readonly attributes: Readonly<Record<string, unknown>> } | undefined): ReturnType<typeof resourceFromAttributes> {
  if (r === undefined) return resource;
  const key = JSON.stringify(Object.entries(r.attributes).sort(([a], [b]) => (a < b ? -1 : 1)));
  let out = ownResources.get(key);
  if (out === undefined) ownResources.set(key, (out = resourceFromAttributes(r.attributes as Record<string, string>)));
  return out;
}

/** {@link toReadableSpan} under the span's own Resource (a mixed fleet: each producer as it was). */
export function toReadableSpanAsProduced(s: RecordedSpan): ReadableSpan {
  return { ...toReadableSpan(s), resource: ownResource(s.resource) };
}

/** {@link toReadableLog} under the record's own Resource. */
export function toReadableLogAsProduced(l: RecordedLog): ReadableLogRecord {
  return { ...toReadableLog(l), resource: ownResource(l.resource) } as ReadableLogRecord;
}

function kv(attrs: Readonly<Record<string, unknown>>) {
  return Object.entries(attrs).map(([key, v]) => ({
    key,
    value:
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : typeof v === 'number'
            ? Number.isInteger(v)
              ? { intValue: String(v) }
              : { doubleValue: v }
            : { stringValue: JSON.stringify(v) },
  }));
}

const nanos = (t: readonly [number, number]) => (BigInt(t[0]) * 1_000_000_000n + BigInt(t[1])).toString();

/** OTLP JSON lines as a collector's file exporter writes them: one traces and one logs request per line. */
export function toOtlpJsonLines(records: RecordBatch, perLine = 7): string {
  const lines: string[] = [];
  for (let i = 0; i < records.spans.length; i += perLine) {
    const spans = records.spans.slice(i, i + perLine).map((s) => ({
      traceId: s.spanContext().traceId,
      spanId: s.spanContext().spanId,
      parentSpanId: s.parentSpanContext?.spanId ?? '',
      name: s.name,
      kind: 1,
      startTimeUnixNano: nanos(s.startTime),
      endTimeUnixNano: nanos(s.endTime),
      attributes: kv(s.attributes),
    }));
    lines.push(JSON.stringify({ resourceSpans: [{ resource: { attributes: kv({ 'service.name': 'qwen-code' }) }, scopeSpans: [{ scope: { name: 'qwen-code' }, spans }] }] }));
  }
  for (let i = 0; i < records.logs.length; i += perLine) {
    const logRecords = records.logs.slice(i, i + perLine).map((l) => ({
      timeUnixNano: nanos(l.hrTime),
      observedTimeUnixNano: nanos(l.hrTime),
      body: { stringValue: String(l.body ?? '') },
      attributes: kv(l.attributes),
      traceId: l.spanContext?.traceId ?? '',
      spanId: l.spanContext?.spanId ?? '',
    }));
    lines.push(JSON.stringify({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: l0(records, i) }, logRecords }] }] }));
  }
  return `${lines.join('\n')}\n`;
}

function l0(records: RecordBatch, i: number): string {
  return records.logs[i]?.instrumentationScope.name ?? 'qwen-code';
}

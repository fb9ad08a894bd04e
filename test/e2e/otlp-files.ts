/**
 * Reads the collector's file-exporter output (OTLP/JSON lines) back as flat items, for the
 * end-to-end tests of collector-config/otelcol.yaml.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonLines } from './collector-process.js';

export const SIGNALS = ['traces', 'logs', 'metrics'] as const;
export type Signal = (typeof SIGNALS)[number];

export type Attributes = Record<string, unknown>;

/** One span, span event, log record or metric data point, flattened out of OTLP/JSON. */
export interface Item {
  kind: 'span' | 'spanEvent' | 'log' | 'dataPoint';
  scope: string;
  /** Span, event or metric name; the `event.name` attribute for logs. */
  name: string;
  attributes: Attributes;
  resourceAttributes: Attributes;
  /** Index of the export request (file line) the item came from, within its file. */
  line: number;
  body?: unknown;
  /** The OTLP `eventName` field of a log record. */
  eventName?: unknown;
  statusCode?: unknown;
  statusMessage?: unknown;
  /** A data point's `asInt` (as a number) or `asDouble`. */
  value?: unknown;
}

/** The three files of one output directory, raw and flattened. */
export interface OutputFiles {
  /** Every file's text, concatenated. */
  text: string;
  /** All items of all three files. */
  items: Item[];
  /** Items per signal. */
  bySignal: Record<Signal, Item[]>;
}

/** Reads `<dir>/{traces,logs,metrics}.jsonl`; a missing file counts as empty. */
export function readOutputFiles(dir: string): OutputFiles {
  let text = '';
  const bySignal = { traces: [], logs: [], metrics: [] } as Record<Signal, Item[]>;
  for (const signal of SIGNALS) {
    const file = join(dir, `${signal}.jsonl`);
    if (!existsSync(file)) continue;
    text += readFileSync(file, 'utf8');
    bySignal[signal] = flatten(readJsonLines(file));
  }
  return { text, items: SIGNALS.flatMap((s) => bySignal[s]), bySignal };
}

/** Flattens OTLP/JSON export requests (as written by the file exporter) into items. */
export function flatten(lines: unknown[]): Item[] {
  const items: Item[] = [];
  lines.forEach((lineValue, line) => {
    const request = asRecord(lineValue);
    for (const resource of asArray(request['resourceSpans'])) {
      const resourceAttributes = attributesOf(asRecord(resource)['resource']);
      for (const scoped of asArray(asRecord(resource)['scopeSpans'])) {
        const scope = scopeName(scoped);
        for (const raw of asArray(asRecord(scoped)['spans'])) {
          const span = asRecord(raw);
          const status = asRecord(span['status']);
          items.push({
            kind: 'span',
            scope,
            name: String(span['name']),
            attributes: attributesOf(span),
            resourceAttributes,
            line,
            statusCode: status['code'],
            statusMessage: status['message'],
          });
          for (const event of asArray(span['events'])) {
            const name = String(asRecord(event)['name']);
            items.push({ kind: 'spanEvent', scope, name, attributes: attributesOf(event), resourceAttributes, line });
          }
        }
      }
    }
    for (const resource of asArray(request['resourceLogs'])) {
      const resourceAttributes = attributesOf(asRecord(resource)['resource']);
      for (const scoped of asArray(asRecord(resource)['scopeLogs'])) {
        const scope = scopeName(scoped);
        for (const raw of asArray(asRecord(scoped)['logRecords'])) {
          const record = asRecord(raw);
          const attributes = attributesOf(record);
          items.push({
            kind: 'log',
            scope,
            name: String(attributes['event.name']),
            attributes,
            resourceAttributes,
            line,
            body: anyValue(record['body']),
            eventName: record['eventName'],
          });
        }
      }
    }
    for (const resource of asArray(request['resourceMetrics'])) {
      const resourceAttributes = attributesOf(asRecord(resource)['resource']);
      for (const scoped of asArray(asRecord(resource)['scopeMetrics'])) {
        const scope = scopeName(scoped);
        for (const raw of asArray(asRecord(scoped)['metrics'])) {
          const metric = asRecord(raw);
          const data = asRecord(metric['sum'] ?? metric['gauge'] ?? metric['histogram']);
          for (const rawPoint of asArray(data['dataPoints'])) {
            const point = asRecord(rawPoint);
            const value = 'asInt' in point ? Number(point['asInt']) : point['asDouble'];
            items.push({ kind: 'dataPoint', scope, name: String(metric['name']), attributes: attributesOf(point), resourceAttributes, line, value });
          }
        }
      }
    }
  });
  return items;
}

function scopeName(scoped: unknown): string {
  return String(asRecord(asRecord(scoped)['scope'])['name'] ?? '');
}

function attributesOf(holder: unknown): Attributes {
  const attributes: Attributes = {};
  for (const entry of asArray(asRecord(holder)['attributes'])) {
    const { key, value } = asRecord(entry);
    attributes[String(key)] = anyValue(value);
  }
  return attributes;
}

/** Decodes an OTLP/JSON AnyValue; int64 values arrive as strings and are turned into numbers. */
function anyValue(value: unknown): unknown {
  const v = asRecord(value);
  if ('stringValue' in v) return v['stringValue'];
  if ('boolValue' in v) return v['boolValue'];
  if ('intValue' in v) return Number(v['intValue']);
  if ('doubleValue' in v) return v['doubleValue'];
  if ('arrayValue' in v) return asArray(asRecord(v['arrayValue'])['values']).map(anyValue);
  if ('kvlistValue' in v) return attributesOf({ attributes: asRecord(v['kvlistValue'])['values'] });
  return undefined;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

/**
 * Normalized telemetry records read from files or OTLP requests. They satisfy the profile views
 * ({@link SpanView}, {@link LogRecordView}), so replay and serve feed the same processors as the
 * in-process path.
 */
import type { HrTime, SpanContext } from '@opentelemetry/api';
import type { AnyValue, LogRecordView, ResourceView, SpanEventView, SpanView } from '../profiles/wire-profile.js';

const UNSET_STATUS = { code: 0 } as const;

/**
 * Set an attribute as an own property whatever its key: a plain assignment of `__proto__` would
 * replace the record's prototype (and then a profile could read attributes that are not there).
 * Keys from telemetry are data; `JSON.parse` already defines them this way.
 */
export function setAttribute(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}
const NO_EVENTS: readonly SpanEventView[] = [];

/** A finished span as read from a file or request. */
export class RecordedSpan implements SpanView {
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly scopeName: string;
  readonly resource: ResourceView | undefined;
  /** Status code (`SpanStatusCode`: 0 unset, 1 ok, 2 error). */
  readonly status: { readonly code: number };
  /** Only the span's `exception` events (the rest is not read by any profile). */
  readonly events: readonly SpanEventView[];
  private readonly _ctx: SpanContext;

  constructor(init: {
    name: string;
    attributes: Record<string, unknown>;
    spanContext: SpanContext;
    parentSpanContext: SpanContext | undefined;
    startTime: HrTime;
    endTime: HrTime;
    scopeName: string;
    resource?: ResourceView | undefined;
    status?: { readonly code: number };
    events?: readonly SpanEventView[];
  }) {
    this.name = init.name;
    this.attributes = init.attributes;
    this._ctx = init.spanContext;
    this.parentSpanContext = init.parentSpanContext;
    this.startTime = init.startTime;
    this.endTime = init.endTime;
    this.scopeName = init.scopeName;
    this.resource = init.resource;
    this.status = init.status ?? UNSET_STATUS;
    this.events = init.events ?? NO_EVENTS;
  }

  spanContext(): SpanContext {
    return this._ctx;
  }
}

/** A log record as read from a file or request. */
export interface RecordedLog extends LogRecordView {
  readonly body: AnyValue;
}

/** Everything read from one source. */
export interface RecordBatch {
  readonly spans: RecordedSpan[];
  readonly logs: RecordedLog[];
  /** Metric objects or requests seen (not used by the guard). */
  metricCount: number;
  /** Objects that were neither spans, logs nor metrics. */
  ignoredCount: number;
}

/** An empty {@link RecordBatch}. */
export function emptyRecordBatch(): RecordBatch {
  return { spans: [], logs: [], metricCount: 0, ignoredCount: 0 };
}

/** Nanoseconds (as decimal string, number or bigint) to `HrTime`. */
export function nanosToHrTime(n: string | number | bigint | undefined): HrTime {
  if (n === undefined) return [0, 0];
  let big: bigint;
  try {
    big = typeof n === 'bigint' ? n : BigInt(typeof n === 'number' ? Math.trunc(n) : n.trim() === '' ? '0' : n);
  } catch {
    return [0, 0];
  }
  const sec = big / 1_000_000_000n;
  return [Number(sec), Number(big - sec * 1_000_000_000n)];
}

/**
 * The wire-profile interface: how one agent's telemetry becomes batch receipts.
 *
 * A profile sees every span start, span end and log record the processors receive, and drives the
 * {@link GuardEngine} (prompts, batch boundaries, per-call facts). Adding an agent means adding a
 * profile; the engine and the reducer stay untouched.
 */
import type { HrTime, SpanContext } from '@opentelemetry/api';
import type { AnyValue } from '@opentelemetry/api-logs';
import type { GuardEngine } from './guard-engine.js';
import type { RepetitionEngine } from './repetition-engine.js';

/** The part of a span a profile reads. The SDK's `Span` and `ReadableSpan` both satisfy it. */
export interface SpanView {
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  spanContext(): SpanContext;
  readonly parentSpanContext?: SpanContext | undefined;
  readonly startTime: HrTime;
  readonly endTime?: HrTime;
}

/** The part of a log record a profile reads. The SDK's `SdkLogRecord` satisfies it. */
export interface LogRecordView {
  readonly hrTime: HrTime;
  readonly attributes: Readonly<Record<string, AnyValue>>;
  readonly spanContext?: SpanContext | undefined;
  readonly eventName?: string | undefined;
  readonly instrumentationScope: { readonly name: string };
}

/** A profile. Its methods may throw; the processors catch and report. */
export interface WireProfile {
  /** Short name, e.g. `qwen-code`. */
  readonly name: string;
  onSpanStart(span: SpanView): void;
  onSpanEnd(span: SpanView): void;
  onLogRecord(record: LogRecordView): void;
}

/** Builds a profile bound to the failure guard's engine and the repetition breaker. */
export type WireProfileFactory = (engine: GuardEngine, repetition: RepetitionEngine) => WireProfile;

/** Milliseconds since the epoch of an `HrTime`. */
export function hrTimeToMillis(t: HrTime | undefined): number {
  return t === undefined ? 0 : t[0] * 1000 + t[1] / 1e6;
}

/** The attribute as a non-empty string, or `undefined`. */
export function stringAttr(attrs: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const v = attrs[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A `Set` that forgets its oldest entries beyond `max`. */
export class BoundedSet<T> {
  private readonly _set = new Set<T>();
  private readonly _max: number;

  constructor(max: number) {
    this._max = max;
  }

  add(v: T): void {
    if (this._set.has(v)) return;
    this._set.add(v);
    if (this._set.size > this._max) this._set.delete(this._set.values().next().value as T);
  }

  has(v: T): boolean {
    return this._set.has(v);
  }

  delete(v: T): void {
    this._set.delete(v);
  }
}

/** A `Map` that forgets its oldest entries beyond `max`. */
export class BoundedMap<K, V> {
  private readonly _map = new Map<K, V>();
  private readonly _max: number;

  constructor(max: number) {
    this._max = max;
  }

  set(k: K, v: V): void {
    if (this._map.get(k) === v) return;
    this._map.delete(k);
    this._map.set(k, v);
    if (this._map.size > this._max) this._map.delete(this._map.keys().next().value as K);
  }

  get(k: K): V | undefined {
    return this._map.get(k);
  }

  delete(k: K): void {
    this._map.delete(k);
  }
}

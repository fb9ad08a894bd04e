/**
 * What a stretch of telemetry looks like, for choosing a wire profile: the names a profile would
 * recognise (service, scope, span and log event names). Holds names only, never attribute values.
 */
import type { LogRecordView, SpanView } from './wire-profile.js';

/** Distinct names seen in some telemetry. */
export interface TelemetrySample {
  /** `service.name` values of the producers' Resources. */
  readonly serviceNames: ReadonlySet<string>;
  /** Instrumentation scope names of log records (and of spans, where known). */
  readonly scopeNames: ReadonlySet<string>;
  readonly spanNames: ReadonlySet<string>;
  /** Log `event.name` attributes (or the records' event names). */
  readonly eventNames: ReadonlySet<string>;
  /** Span attribute keys (keys only), for conventions recognised by attributes (`gen_ai.operation.name`). */
  readonly spanAttributeKeys: ReadonlySet<string>;
}

/**
 * Collects a {@link TelemetrySample} record by record (for readers that do not keep the records).
 * {@link TelemetrySampleBuilder.sample} may be called at any time; the sets it returns keep growing.
 */
export class TelemetrySampleBuilder {
  private readonly _serviceNames = new Set<string>();
  private readonly _scopeNames = new Set<string>();
  private readonly _spanNames = new Set<string>();
  private readonly _eventNames = new Set<string>();
  private readonly _spanAttributeKeys = new Set<string>();
  private _size = 0;

  /** Total number of distinct names held (grows by one for every new name): a cheap change check. */
  get size(): number {
    return this._size;
  }

  /** Add one span's names and attribute keys. */
  addSpan(s: SpanView & { readonly scopeName?: string }): void {
    this._add(this._spanNames, s.name);
    if (s.scopeName !== undefined && s.scopeName !== '') this._add(this._scopeNames, s.scopeName);
    for (const k of Object.keys(s.attributes)) this._add(this._spanAttributeKeys, k);
    this._service(s.resource);
  }

  /** Add one log record's names. */
  addLog(l: LogRecordView): void {
    const e = l.attributes['event.name'] ?? l.eventName;
    if (typeof e === 'string' && e !== '') this._add(this._eventNames, e);
    if (l.instrumentationScope.name !== '') this._add(this._scopeNames, l.instrumentationScope.name);
    this._service(l.resource);
  }

  /** The names so far. */
  sample(): TelemetrySample {
    return {
      serviceNames: this._serviceNames,
      scopeNames: this._scopeNames,
      spanNames: this._spanNames,
      eventNames: this._eventNames,
      spanAttributeKeys: this._spanAttributeKeys,
    };
  }

  private _service(r: SpanView['resource']): void {
    const name = r?.attributes['service.name'];
    if (typeof name === 'string' && name !== '') this._add(this._serviceNames, name);
  }

  private _add(set: Set<string>, name: string): void {
    if (set.has(name)) return;
    set.add(name);
    this._size++;
  }
}

/** Collect the names of `spans` and `logs`. */
export function sampleTelemetry(spans: Iterable<SpanView & { readonly scopeName?: string }>, logs: Iterable<LogRecordView>): TelemetrySample {
  const builder = new TelemetrySampleBuilder();
  for (const s of spans) builder.addSpan(s);
  for (const l of logs) builder.addLog(l);
  return builder.sample();
}

/** Whether any name of `names` starts with `prefix`. */
export function someStartsWith(names: ReadonlySet<string>, prefix: string): boolean {
  for (const n of names) if (n.startsWith(prefix)) return true;
  return false;
}

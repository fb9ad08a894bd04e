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

/** Collect the names of `spans` and `logs`. */
export function sampleTelemetry(spans: Iterable<SpanView & { readonly scopeName?: string }>, logs: Iterable<LogRecordView>): TelemetrySample {
  const serviceNames = new Set<string>();
  const scopeNames = new Set<string>();
  const spanNames = new Set<string>();
  const eventNames = new Set<string>();
  const spanAttributeKeys = new Set<string>();
  const service = (r: SpanView['resource']): void => {
    const name = r?.attributes['service.name'];
    if (typeof name === 'string' && name !== '') serviceNames.add(name);
  };
  for (const s of spans) {
    spanNames.add(s.name);
    if (s.scopeName !== undefined && s.scopeName !== '') scopeNames.add(s.scopeName);
    for (const k of Object.keys(s.attributes)) spanAttributeKeys.add(k);
    service(s.resource);
  }
  for (const l of logs) {
    const e = l.attributes['event.name'] ?? l.eventName;
    if (typeof e === 'string' && e !== '') eventNames.add(e);
    if (l.instrumentationScope.name !== '') scopeNames.add(l.instrumentationScope.name);
    service(l.resource);
  }
  return { serviceNames, scopeNames, spanNames, eventNames, spanAttributeKeys };
}

/** Whether any name of `names` starts with `prefix`. */
export function someStartsWith(names: ReadonlySet<string>, prefix: string): boolean {
  for (const n of names) if (n.startsWith(prefix)) return true;
  return false;
}

/**
 * What a stretch of telemetry looks like, for choosing a wire profile: the names a profile would
 * recognise (service, scope, span and log event names). Holds names only, never attribute values.
 */
import type { LogRecordView, SpanView } from './wire-profile.js';

/**
 * A span with its instrumentation scope where known: recorded spans carry `scopeName`, the SDK's
 * spans `instrumentationScope`.
 */
export type ScopedSpanView = SpanView & { readonly scopeName?: string; readonly instrumentationScope?: { readonly name: string } };

/** The instrumentation scope name of a span, when known and not empty. */
export function spanScopeName(s: ScopedSpanView): string | undefined {
  const name = s.scopeName ?? s.instrumentationScope?.name;
  return name === undefined || name === '' ? undefined : name;
}

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

  /**
   * Add one span's names and, unless `attributeKeys` is false, its attribute keys (a router that
   * no longer needs them skips the cost).
   */
  addSpan(s: ScopedSpanView, attributeKeys = true): void {
    this._add(this._spanNames, s.name);
    const scope = spanScopeName(s);
    if (scope !== undefined) this._add(this._scopeNames, scope);
    if (attributeKeys) for (const k of Object.keys(s.attributes)) this._add(this._spanAttributeKeys, k);
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
export function sampleTelemetry(spans: Iterable<ScopedSpanView>, logs: Iterable<LogRecordView>): TelemetrySample {
  const builder = new TelemetrySampleBuilder();
  for (const s of spans) builder.addSpan(s);
  for (const l of logs) builder.addLog(l);
  return builder.sample();
}

/**
 * How a profile recognises the telemetry of the agent it reads, from the producer's own evidence:
 * names only (Resource `service.name`, instrumentation scope, span and log event names, span
 * attribute keys), never attribute values. A profile recognises a {@link TelemetrySample} when any
 * one of the declared names is present (`spanAttributeKeys`: when all of them are).
 */
export interface WireProfileRecognition {
  /** Exact Resource `service.name` values the agent sets (e.g. `qwen-code`). */
  readonly serviceNames?: readonly string[];
  /** Exact instrumentation scope names (e.g. `gemini-cli`). */
  readonly scopeNames?: readonly string[];
  /** Prefixes of the agent's instrumentation scope names (e.g. `com.anthropic.claude_code`). */
  readonly scopeNamePrefixes?: readonly string[];
  /** Prefixes of the agent's span names (e.g. `qwen-code.`). */
  readonly spanNamePrefixes?: readonly string[];
  /** Exact span names (e.g. `runToolCalls`). */
  readonly spanNames?: readonly string[];
  /** A pattern span names match (e.g. the GenAI operation names `execute_tool …`). */
  readonly spanNamePattern?: RegExp;
  /** Span attribute keys that, all present, mark the wire (e.g. `gen_ai.operation.name` and `gen_ai.tool.name`). */
  readonly spanAttributeKeys?: readonly string[];
  /** Prefixes of the agent's log event names (`event.name`, e.g. `qwen-code.`). */
  readonly eventNamePrefixes?: readonly string[];
  /**
   * A conventions profile (e.g. `genai`) rather than one agent's: it reads a producer only when no
   * agent profile recognises it, since agents' own telemetry may follow the same conventions.
   * @defaultValue `false`
   */
  readonly fallback?: boolean;
}

/** Whether `sample` shows any of the names `recognition` declares (see {@link WireProfileRecognition}). */
export function recognises(recognition: WireProfileRecognition, sample: TelemetrySample): boolean {
  const r = recognition;
  if (r.serviceNames?.some((n) => sample.serviceNames.has(n)) === true) return true;
  if (r.scopeNames?.some((n) => sample.scopeNames.has(n)) === true) return true;
  if (r.scopeNamePrefixes?.some((p) => someStartsWith(sample.scopeNames, p)) === true) return true;
  if (r.spanNamePrefixes?.some((p) => someStartsWith(sample.spanNames, p)) === true) return true;
  if (r.spanNames?.some((n) => sample.spanNames.has(n)) === true) return true;
  if (r.eventNamePrefixes?.some((p) => someStartsWith(sample.eventNames, p)) === true) return true;
  if (r.spanNamePattern !== undefined) {
    for (const name of sample.spanNames) if (r.spanNamePattern.test(name)) return true;
  }
  const keys = r.spanAttributeKeys;
  return keys !== undefined && keys.length > 0 && keys.every((k) => sample.spanAttributeKeys.has(k));
}

/** Whether any name of `names` starts with `prefix`. */
export function someStartsWith(names: ReadonlySet<string>, prefix: string): boolean {
  for (const n of names) if (n.startsWith(prefix)) return true;
  return false;
}

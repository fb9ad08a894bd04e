/**
 * The wire-profile interface: how one agent's telemetry becomes batch receipts.
 *
 * A profile sees every span start, span end and log record the processors receive, and drives the
 * {@link FailureEngine} (prompts, batch boundaries, per-call facts). Adding an agent means adding a
 * profile; the engine and the reducer stay untouched.
 */
import type { HrTime, SpanContext } from '@opentelemetry/api';
import type { FailureEngine } from '../engine/failure-engine.js';
import type { RepetitionEngine } from '../engine/repetition-engine.js';

/**
 * Instrumentation scope of everything the guard emits. Records of this scope are the guard's own:
 * the log processor hands none of them to a profile.
 */
export const INSTRUMENTATION_SCOPE_NAME = 'repeated-tool-failure-guard';

/** The part of a span a profile reads. The SDK's `Span` and `ReadableSpan` both satisfy it. */
export interface SpanView {
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  spanContext(): SpanContext;
  readonly parentSpanContext?: SpanContext | undefined;
  readonly startTime: HrTime;
  readonly endTime?: HrTime;
  /** The producer's Resource (`service.name`, `service.version`, `deployment.environment`…), when known. */
  readonly resource?: ResourceView | undefined;
  /**
   * Span status at end (`code`: 0 unset, 1 ok, 2 error, as `SpanStatusCode`). Read by the `genai`
   * profile; the SDK's `ReadableSpan` and `RecordedSpan` carry it.
   */
  readonly status?: { readonly code: number };
  /**
   * Span events at end. Read by the `genai` profile for the `exception` event's `exception.type`;
   * recorded spans keep only `exception` events.
   */
  readonly events?: readonly SpanEventView[];
}

/** The part of a span event a profile reads. */
export interface SpanEventView {
  readonly name: string;
  readonly attributes?: Readonly<Record<string, unknown>>;
}

/** The part of a Resource a profile or report reads. The SDK's `Resource` satisfies it. */
export interface ResourceView {
  readonly attributes: Readonly<Record<string, unknown>>;
}

/**
 * A log record's attribute or body value: OpenTelemetry's `AnyValue` (a string, number, boolean,
 * byte array, array or map of these, or null). Declared here because it lives in
 * `@opentelemetry/api-logs` on the OpenTelemetry JS 2.x line and in `@opentelemetry/api` 1.10 on
 * the 3.x line; both lines' records satisfy this shape.
 */
export type AnyValue = string | number | boolean | Uint8Array | AnyValue[] | { [key: string]: AnyValue } | null | undefined;

/** The part of a log record a profile reads. The SDK's `ReadWriteLogRecord` (either line) satisfies it. */
export interface LogRecordView {
  readonly hrTime: HrTime;
  readonly attributes: Readonly<Record<string, AnyValue>>;
  readonly spanContext?: SpanContext | undefined;
  readonly eventName?: string | undefined;
  readonly instrumentationScope: { readonly name: string };
  /** The producer's Resource, when known. */
  readonly resource?: ResourceView | undefined;
}

/** A profile. Its methods may throw; the processors catch and report. */
export interface WireProfile {
  /** Short name, e.g. `qwen-code`. */
  readonly name: string;
  onSpanStart(span: SpanView): void;
  onSpanEnd(span: SpanView): void;
  onLogRecord(record: LogRecordView): void;
  /**
   * Called by the guard's periodic sweep (every `sweepIntervalMillis`; in `replay`, on the event-time
   * clock) for a profile that holds something until time passes. Optional.
   */
  sweep?(): void;
}

/**
 * What a profile reads from telemetry: the spans, log events and attributes whose absence would
 * change its output. Out-of-process receivers (`serve`) keep only these at ingest (a compact
 * projection) and drop the rest on arrival, so held memory is what the guard needs, not what the
 * agent sends. A profile that declares nothing keeps everything.
 */
export interface WireProfileReads {
  /** Span names read; `undefined`: any name (only the attributes are projected). */
  readonly spanNames: readonly string[] | undefined;
  /** Span attribute keys read. */
  readonly spanAttributes: readonly string[];
  /** Log event names read (the `event.name` attribute or the record's `eventName`); `undefined`: any. */
  readonly logEventNames: readonly string[] | undefined;
  /** Log attribute keys read. Log bodies are never read. */
  readonly logAttributes: readonly string[];
}

/**
 * The design's Phase 1 invariants (ids of `auditInvariants` in `replay/audit.ts`) whose violation a
 * wire cannot show, each with a short fixed reason: printed `not checkable` instead of `held`.
 * `always`: whatever the input holds; `withoutSpan`: unless the input has a span named `unlessSpan`.
 */
export interface NotCheckableInvariants {
  readonly always: Readonly<Record<string, string>>;
  readonly unlessSpan?: string;
  readonly withoutSpan?: Readonly<Record<string, string>>;
}

/**
 * The invariants `spec` makes not checkable for an input with these spans (id → reason); empty
 * without a spec.
 */
export function notCheckableFor(spec: NotCheckableInvariants | undefined, spans: readonly { readonly name: string }[]): Readonly<Record<string, string>> {
  if (spec === undefined) return {};
  const spanSeen = spec.unlessSpan !== undefined && spans.some((s) => s.name === spec.unlessSpan);
  return spanSeen || spec.withoutSpan === undefined ? spec.always : { ...spec.always, ...spec.withoutSpan };
}

/** Every reason `spec` can give (the closed vocabulary of reasons, for audits). */
export function notCheckableReasons(spec: NotCheckableInvariants | undefined): string[] {
  return spec === undefined ? [] : [...Object.values(spec.always), ...Object.values(spec.withoutSpan ?? {})];
}

/** Builds a profile bound to the failure guard's engine and the repetition breaker. */
export type WireProfileFactory = (engine: FailureEngine, repetition: RepetitionEngine) => WireProfile;

/** Milliseconds since the epoch of an `HrTime`. */
export function hrTimeToMillis(t: HrTime | undefined): number {
  return t === undefined ? 0 : t[0] * 1000 + t[1] / 1e6;
}

/**
 * `v` when it is a non-empty string, else `undefined`: how every profile reads a string attribute.
 * Profiles read the attribute at their own call site (`nonEmptyString(attrs[KEY])`), not through
 * one shared `(attrs, key)` reader: each site keeps its own inline cache of the few attribute shapes
 * it sees, where one shared reader's keyed load turns megamorphic across every key and shape of
 * every record (docs/perf.md).
 */
export function nonEmptyString(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

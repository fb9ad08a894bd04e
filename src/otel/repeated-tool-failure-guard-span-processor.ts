import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { TelemetrySink } from './telemetry-sink.js';

/**
 * The guard's {@link SpanProcessor}: hands span starts and ends to the guard's wire profile.
 * Register it with `NodeSDK({ spanProcessors: [...] })` or `new TracerProvider({ spanProcessors })`
 * (`@opentelemetry/sdk-trace` 2.x or 3.x; `BasicTracerProvider` of `sdk-trace-base` 2.x too).
 * It implements `onStart` and `onEnd` (the same signatures on both lines), not the experimental
 * `onEnding`.
 * Every hook returns at once for spans the profile does not read. Never throws; errors are
 * reported via the global error handler.
 */
export class RepeatedToolFailureGuardSpanProcessor implements SpanProcessor {
  private readonly _sink: TelemetrySink;

  /** @param sink - the guard ({@link RepeatedToolFailureGuard} implements it) */
  constructor(sink: TelemetrySink) {
    this._sink = sink;
  }

  onStart(span: Span, _parentContext: Context): void {
    this._sink.onSpanStart(span);
  }

  onEnd(span: ReadableSpan): void {
    this._sink.onSpanEnd(span);
  }

  forceFlush(): Promise<void> {
    return this._sink.forceFlush();
  }

  /** Shuts the whole guard down (idempotent). */
  shutdown(): Promise<void> {
    return this._sink.shutdown();
  }
}

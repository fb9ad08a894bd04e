import type { Context } from '@opentelemetry/api';
import type { LogRecordProcessor, ReadWriteLogRecord } from '@opentelemetry/sdk-logs';
import type { TelemetrySink } from './telemetry-sink.js';

/**
 * The guard's {@link LogRecordProcessor}: hands log records (`qwen-code.tool_call`,
 * `qwen-code.api_request`) to the guard's wire profile; records of the guard's own
 * instrumentation scope are ignored. Register it with `NodeSDK({ logRecordProcessors: [...] })` or
 * `new LoggerProvider({ processors })` (`@opentelemetry/sdk-logs` 0.2xx or 3.x: `onEmit(logRecord,
 * context?)` on both). Never throws; errors are reported via the global error handler.
 */
export class RepeatedToolFailureGuardLogRecordProcessor implements LogRecordProcessor {
  private readonly _sink: TelemetrySink;

  /** @param sink - the guard ({@link RepeatedToolFailureGuard} implements it) */
  constructor(sink: TelemetrySink) {
    this._sink = sink;
  }

  onEmit(logRecord: ReadWriteLogRecord, _context?: Context): void {
    this._sink.onLogRecord(logRecord);
  }

  forceFlush(): Promise<void> {
    return this._sink.forceFlush();
  }

  /** Shuts the whole guard down (idempotent). */
  shutdown(): Promise<void> {
    return this._sink.shutdown();
  }
}

/**
 * What the two processors hand their records to. The guard implements it; the processors depend
 * on this interface only, so the processors and the guard facade do not import each other.
 */
import type { LogRecordView, SpanView } from '../profiles/wire-profile.js';

/**
 * Receiver of every span start, span end and log record of the host SDK, and of the processors'
 * lifecycle calls. Implementations never throw and never block.
 */
export interface TelemetrySink {
  onSpanStart(span: SpanView): void;
  onSpanEnd(span: SpanView): void;
  onLogRecord(record: LogRecordView): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

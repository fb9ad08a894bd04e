/**
 * Holds records from the separate span and log streams (which reach a receiver seconds apart:
 * qwen-code batches spans every 5 s and logs every 1 s) and releases them in event-time order.
 * Every record is held for the grace period after it arrives; the earliest event is released
 * first, so a grace longer than the gap between the streams restores the order of events.
 */
import type { RecordedLog, RecordedSpan } from '../otlp/records.js';
import { hrTimeToMillis } from '../profiles/wire-profile.js';

/** One event: a span start, a log record, or a span end. */
export interface TimedRecord {
  readonly t: number;
  /** 0 log, 1 span start, 2 span end: the order at equal times (as in replay). */
  readonly order: 0 | 1 | 2;
  readonly seq: number;
  readonly receivedAt: number;
  readonly span?: RecordedSpan;
  readonly log?: RecordedLog;
}

/** Options of {@link ReorderBuffer}. */
export interface ReorderBufferOptions {
  /** Each record is held this long after it arrives, in milliseconds. */
  readonly graceMillis: number;
  /** Most records held; beyond it the oldest are released early. */
  readonly maxHeld: number;
  readonly now: () => number;
}

function compare(a: TimedRecord, b: TimedRecord): number {
  return a.t - b.t || a.order - b.order || a.seq - b.seq;
}

/** A small binary min-heap of records keyed by event time. */
export class ReorderBuffer {
  private readonly _options: ReorderBufferOptions;
  private readonly _heap: TimedRecord[] = [];
  private _seq = 0;
  private _watermark = Number.NEGATIVE_INFINITY;
  private _clockAnomalies = 0;

  constructor(options: ReorderBufferOptions) {
    this._options = options;
  }

  /** Spans received so far that end before they start (released as ending when they start). */
  get clockAnomalies(): number {
    return this._clockAnomalies;
  }

  /** Records held now. */
  get size(): number {
    return this._heap.length;
  }

  /** Add spans (as start and end events) and logs. Returns the records that arrived late, in order. */
  add(spans: readonly RecordedSpan[], logs: readonly RecordedLog[]): TimedRecord[] {
    const receivedAt = this._options.now();
    const late: TimedRecord[] = [];
    const push = (r: TimedRecord): void => {
      if (r.t < this._watermark) late.push(r);
      else this._push(r);
    };
    for (const span of spans) {
      const start = hrTimeToMillis(span.startTime);
      const end = hrTimeToMillis(span.endTime);
      if (end < start) this._clockAnomalies += 1;
      push({ t: start, order: 1, seq: this._seq++, receivedAt, span });
      push({ t: Math.max(start, end), order: 2, seq: this._seq++, receivedAt, span });
    }
    for (const log of logs) push({ t: hrTimeToMillis(log.hrTime), order: 0, seq: this._seq++, receivedAt, log });
    return late.sort(compare);
  }

  /** Release every record that is due (or all of them with `all`), oldest event first. */
  release(all = false): TimedRecord[] {
    const cutoff = this._options.now() - this._options.graceMillis;
    const out: TimedRecord[] = [];
    while (this._heap.length > 0) {
      const top = this._heap[0] as TimedRecord;
      const due = all || top.receivedAt <= cutoff || this._heap.length > this._options.maxHeld;
      if (!due) break;
      out.push(this._pop());
      if (top.t > this._watermark) this._watermark = top.t;
    }
    return out;
  }

  private _push(r: TimedRecord): void {
    const h = this._heap;
    h.push(r);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (compare(h[p] as TimedRecord, h[i] as TimedRecord) <= 0) break;
      [h[p], h[i]] = [h[i] as TimedRecord, h[p] as TimedRecord];
      i = p;
    }
  }

  private _pop(): TimedRecord {
    const h = this._heap;
    const top = h[0] as TimedRecord;
    const last = h.pop() as TimedRecord;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && compare(h[l] as TimedRecord, h[m] as TimedRecord) < 0) m = l;
        if (r < h.length && compare(h[r] as TimedRecord, h[m] as TimedRecord) < 0) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i] as TimedRecord, h[m] as TimedRecord];
        i = m;
      }
    }
    return top;
  }
}

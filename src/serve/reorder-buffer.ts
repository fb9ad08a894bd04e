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
  /** Bytes this event holds (from {@link ReorderBufferOptions.weigh}: half a span's for each of its two events). */
  readonly bytes: number;
}

/** Options of {@link ReorderBuffer}. */
export interface ReorderBufferOptions {
  /** Each record is held this long after it arrives, in milliseconds. */
  readonly graceMillis: number;
  /** Most records held; beyond it the oldest are released early. */
  readonly maxHeld: number;
  readonly now: () => number;
  /** Estimated bytes a record holds, computed once when it is added. @defaultValue every record `0` */
  readonly weigh?: { readonly span: (span: RecordedSpan) => number; readonly log: (log: RecordedLog) => number };
}

/** What {@link ReorderBuffer.add} did. */
export interface AddResult {
  /** Records that arrived behind the watermark (not held), in event order. */
  readonly late: TimedRecord[];
  /** Bytes of the records now held (late ones excluded). */
  readonly heldBytes: number;
}

function compare(a: TimedRecord, b: TimedRecord): number {
  return a.t - b.t || a.order - b.order || a.seq - b.seq;
}

const NO_WEIGHT = { span: () => 0, log: () => 0 };

/** A binary min-heap of records keyed by event time (ties: log, span start, span end; then arrival). */
export class ReorderBuffer {
  private readonly _options: ReorderBufferOptions;
  private readonly _weigh: NonNullable<ReorderBufferOptions['weigh']>;
  private _heap: TimedRecord[] = [];
  private _seq = 0;
  private _watermark = Number.NEGATIVE_INFINITY;
  private _clockAnomalies = 0;

  constructor(options: ReorderBufferOptions) {
    this._options = options;
    this._weigh = options.weigh ?? NO_WEIGHT;
  }

  /** Spans received so far that end before they start (released as ending when they start). */
  get clockAnomalies(): number {
    return this._clockAnomalies;
  }

  /** Records held now. */
  get size(): number {
    return this._heap.length;
  }

  /** Add spans (as start and end events) and logs. */
  add(spans: readonly RecordedSpan[], logs: readonly RecordedLog[]): AddResult {
    const receivedAt = this._options.now();
    const late: TimedRecord[] = [];
    const watermark = this._watermark;
    let heldBytes = 0;
    for (const span of spans) {
      const start = hrTimeToMillis(span.startTime);
      const end = hrTimeToMillis(span.endTime);
      if (end < start) this._clockAnomalies += 1;
      const bytes = this._weigh.span(span) / 2;
      const a: TimedRecord = { t: start, order: 1, seq: this._seq++, receivedAt, span, log: undefined, bytes };
      const b: TimedRecord = { t: Math.max(start, end), order: 2, seq: this._seq++, receivedAt, span, log: undefined, bytes };
      if (a.t < watermark) late.push(a);
      else {
        this._push(a);
        heldBytes += bytes;
      }
      if (b.t < watermark) late.push(b);
      else {
        this._push(b);
        heldBytes += bytes;
      }
    }
    for (const log of logs) {
      const bytes = this._weigh.log(log);
      const r: TimedRecord = { t: hrTimeToMillis(log.hrTime), order: 0, seq: this._seq++, receivedAt, span: undefined, log, bytes };
      if (r.t < watermark) late.push(r);
      else {
        this._push(r);
        heldBytes += bytes;
      }
    }
    return { late: late.length > 1 ? late.sort(compare) : late, heldBytes };
  }

  /** Release every record that is due (or all of them with `all`), oldest event first. */
  release(all = false): TimedRecord[] {
    if (all) {
      // Everything at once: one sort (the order is total: `seq` is unique) instead of a pop each.
      const out = this._heap.sort(compare);
      this._heap = [];
      const last = out[out.length - 1];
      if (last !== undefined && last.t > this._watermark) this._watermark = last.t;
      return out;
    }
    const cutoff = this._options.now() - this._options.graceMillis;
    const out: TimedRecord[] = [];
    const h = this._heap;
    while (h.length > 0) {
      const top = h[0] as TimedRecord;
      const due = top.receivedAt <= cutoff || h.length > this._options.maxHeld;
      if (!due) break;
      out.push(this._pop());
      if (top.t > this._watermark) this._watermark = top.t;
    }
    return out;
  }

  private _push(r: TimedRecord): void {
    const h = this._heap;
    let i = h.length;
    h.push(r);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = h[p] as TimedRecord;
      if (compare(parent, r) <= 0) break;
      h[i] = parent;
      i = p;
    }
    h[i] = r;
  }

  private _pop(): TimedRecord {
    const h = this._heap;
    const top = h[0] as TimedRecord;
    const last = h.pop() as TimedRecord;
    const n = h.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        let m = l;
        if (r < n && compare(h[r] as TimedRecord, h[l] as TimedRecord) < 0) m = r;
        if (compare(h[m] as TimedRecord, last) >= 0) break;
        h[i] = h[m] as TimedRecord;
        i = m;
      }
      h[i] = last;
    }
    return top;
  }
}

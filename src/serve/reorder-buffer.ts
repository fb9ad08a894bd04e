/**
 * Holds records from the separate span and log streams and releases them in event-time order,
 * one timeline per producer: the session (`session.id`) when the record names one, else the
 * Resource (all its attributes).
 *
 * - Each producer has its own watermark (the latest event time released from it): a record is
 *   late only behind its own producer's watermark, so a client with a skewed clock or a burst of
 *   old records never makes another client's records late.
 * - A record is held for the grace period after it arrives, and longer while the producer's other
 *   stream is still catching up: the span and log streams are exported apart (qwen-code: spans
 *   every 5 s, logs every 1 s; a span only once it ends; an exporter's retry adds more), so a
 *   record is released once the other stream has delivered records at or after its time, or has
 *   been quiet for `maxHoldMillis`, or it has waited `maxHoldMillis`. With a single watermark
 *   over both streams, a stream that lagged by more than the grace made the other stream's records
 *   move the watermark past its own, and its call records were dropped as late.
 * - A record stamped more than `maxFutureSkewMillis` after its arrival (or at a time that is not a
 *   finite number) is refused: it would move its producer's watermark ahead of every later record.
 */
import type { RecordedLog, RecordedSpan } from '../otlp/records.js';
import { SESSION_ID_KEY } from '../otlp/record-filter.js';
import type { ResourceView } from '../profiles/wire-profile.js';
import { hrTimeToMillis } from '../profiles/wire-profile.js';

/** The two streams of a producer. */
const LOGS = 0;
const TRACES = 1;

/** One producer's timeline. */
interface Timeline {
  readonly heap: TimedRecord[];
  watermark: number;
  /** Latest event time received, per stream (spans: their end, as they are exported when they end). */
  readonly progress: [number, number];
  /** When each stream last delivered, by the buffer's clock (`-Infinity`: never). */
  readonly lastArrival: [number, number];
}

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

interface HeldRecord extends TimedRecord {
  readonly timeline: Timeline;
}

/** Options of {@link ReorderBuffer}. */
export interface ReorderBufferOptions {
  /** Each record is held at least this long after it arrives, in milliseconds. */
  readonly graceMillis: number;
  /**
   * Longest a record is held while its producer's other stream catches up, in milliseconds; also
   * how long a stream must be quiet to be no longer waited for. @defaultValue `3 * graceMillis`
   */
  readonly maxHoldMillis?: number;
  /** Records stamped more than this after they arrive are refused, in milliseconds. @defaultValue `600000` (10 min) */
  readonly maxFutureSkewMillis?: number;
  /** Most records held; beyond it the oldest are released early. */
  readonly maxHeld: number;
  /** Most producers remembered (their watermarks) once their records are released. @defaultValue `100000` */
  readonly maxProducers?: number;
  readonly now: () => number;
  /** Estimated bytes a record holds, computed once when it is added. @defaultValue every record `0` */
  readonly weigh?: { readonly span: (span: RecordedSpan) => number; readonly log: (log: RecordedLog) => number };
}

/** What {@link ReorderBuffer.add} did. */
export interface AddResult {
  /** Records that arrived behind their producer's watermark (not held), in event order. */
  readonly late: TimedRecord[];
  /** Records refused for a time far ahead of their arrival (or not a finite number). */
  readonly skewed: number;
  /** Bytes of the records now held (late ones excluded). */
  readonly heldBytes: number;
}

function compare(a: TimedRecord, b: TimedRecord): number {
  return a.t - b.t || a.order - b.order || a.seq - b.seq;
}

const NO_WEIGHT = { span: () => 0, log: () => 0 };

/** Default of {@link ReorderBufferOptions.maxFutureSkewMillis}. */
export const DEFAULT_MAX_FUTURE_SKEW_MILLIS = 600_000;

/** A Resource's attributes as one producer key (prefixed by NUL, which no session id starts with), once per resource object. */
const resourceKeys = new WeakMap<object, string>();
function resourceKey(resource: ResourceView | undefined): string {
  if (resource === undefined) return '\u0000';
  let key = resourceKeys.get(resource);
  if (key === undefined) {
    const attributes = resource.attributes;
    key = `\u0000${JSON.stringify(Object.keys(attributes).sort().map((k) => [k, attributes[k]]))}`;
    resourceKeys.set(resource, key);
  }
  return key;
}

/** The producer of a record: its session (`session.id`) when it names one, else its Resource. */
function producerKey(record: { readonly resource?: ResourceView | undefined; readonly attributes: Readonly<Record<string, unknown>> }): string {
  const session = record.attributes[SESSION_ID_KEY];
  return typeof session === 'string' && session !== '' && session.charCodeAt(0) !== 0 ? session : resourceKey(record.resource);
}

/** Binary min-heaps of records keyed by event time (ties: log, span start, span end; then arrival), one per producer. */
export class ReorderBuffer {
  private readonly _options: ReorderBufferOptions;
  private readonly _weigh: NonNullable<ReorderBufferOptions['weigh']>;
  private readonly _maxHold: number;
  private readonly _maxSkew: number;
  private readonly _maxProducers: number;
  /** Producers by key, least recently active first. */
  private readonly _timelines = new Map<string, Timeline>();
  /** Producers holding records. */
  private readonly _holding = new Set<Timeline>();
  private _size = 0;
  private _seq = 0;
  private _clockAnomalies = 0;
  private _skewed = 0;

  constructor(options: ReorderBufferOptions) {
    this._options = options;
    this._weigh = options.weigh ?? NO_WEIGHT;
    this._maxHold = Math.max(options.graceMillis, options.maxHoldMillis ?? 3 * options.graceMillis);
    this._maxSkew = options.maxFutureSkewMillis ?? DEFAULT_MAX_FUTURE_SKEW_MILLIS;
    this._maxProducers = options.maxProducers ?? 100_000;
  }

  /** Spans received so far that end before they start (released as ending when they start). */
  get clockAnomalies(): number {
    return this._clockAnomalies;
  }

  /** Records refused so far for a time far ahead of their arrival. */
  get skewedRecords(): number {
    return this._skewed;
  }

  /** Records held now. */
  get size(): number {
    return this._size;
  }

  /** Producers remembered now (with records held or a watermark). */
  get producers(): number {
    return this._timelines.size;
  }

  /** Add spans (as start and end events) and logs. */
  add(spans: readonly RecordedSpan[], logs: readonly RecordedLog[]): AddResult {
    const receivedAt = this._options.now();
    const latest = receivedAt + this._maxSkew;
    const late: TimedRecord[] = [];
    let heldBytes = 0;
    let skewed = 0;
    // Records of one request mostly share their producer: look it up once per run of them.
    let lastKey: string | undefined;
    let last: Timeline | undefined;
    const timelineOf = (key: string): Timeline => {
      if (key !== lastKey || last === undefined) {
        lastKey = key;
        last = this._timeline(key);
      }
      return last;
    };
    const place = (timeline: Timeline, r: HeldRecord): void => {
      if (r.t < timeline.watermark) late.push(r);
      else {
        this._push(timeline.heap, r);
        this._holding.add(timeline);
        this._size += 1;
        heldBytes += r.bytes;
      }
    };
    for (const span of spans) {
      const start = hrTimeToMillis(span.startTime);
      const end = hrTimeToMillis(span.endTime);
      // Not finite, or far ahead of the receive time: it would move the producer's watermark on.
      if (!(start <= latest && end <= latest && Number.isFinite(start) && Number.isFinite(end))) {
        skewed += 1;
        continue;
      }
      if (end < start) this._clockAnomalies += 1;
      const timeline = timelineOf(producerKey(span));
      timeline.progress[TRACES] = Math.max(timeline.progress[TRACES], start, end);
      timeline.lastArrival[TRACES] = receivedAt;
      const bytes = this._weigh.span(span) / 2;
      place(timeline, { t: start, order: 1, seq: this._seq++, receivedAt, span, log: undefined, bytes, timeline });
      place(timeline, { t: Math.max(start, end), order: 2, seq: this._seq++, receivedAt, span, log: undefined, bytes, timeline });
    }
    for (const log of logs) {
      const t = hrTimeToMillis(log.hrTime);
      if (!(t <= latest && Number.isFinite(t))) {
        skewed += 1;
        continue;
      }
      const timeline = timelineOf(producerKey(log));
      timeline.progress[LOGS] = Math.max(timeline.progress[LOGS], t);
      timeline.lastArrival[LOGS] = receivedAt;
      place(timeline, { t, order: 0, seq: this._seq++, receivedAt, span: undefined, log, bytes: this._weigh.log(log), timeline });
    }
    this._skewed += skewed;
    this._forget();
    return { late: late.length > 1 ? late.sort(compare) : late, skewed, heldBytes };
  }

  /** Release every record that is due (or all of them with `all`), oldest event of each producer first. */
  release(all = false): TimedRecord[] {
    if (all) {
      // Everything at once: one sort (the order is total: `seq` is unique) instead of a pop each.
      const out: HeldRecord[] = [];
      for (const timeline of this._holding) {
        for (const r of timeline.heap) out.push(r as HeldRecord);
        timeline.heap.length = 0;
      }
      this._holding.clear();
      out.sort(compare);
      for (const r of out) if (r.t > r.timeline.watermark) r.timeline.watermark = r.t;
      this._size = 0;
      return out;
    }
    const now = this._options.now();
    const out: TimedRecord[] = [];
    for (const timeline of this._holding) {
      const h = timeline.heap;
      while (h.length > 0) {
        const top = h[0] as TimedRecord;
        if (!(this._size > this._options.maxHeld || this._due(timeline, top, now))) break;
        out.push(this._pop(h));
        this._size -= 1;
        if (top.t > timeline.watermark) timeline.watermark = top.t;
      }
      if (h.length === 0) this._holding.delete(timeline);
    }
    return out;
  }

  /** Held for the grace, and the producer's other stream has caught up, gone quiet, or been waited for long enough. */
  private _due(timeline: Timeline, top: TimedRecord, now: number): boolean {
    const held = now - top.receivedAt;
    if (held < this._options.graceMillis) return false;
    if (held >= this._maxHold) return true;
    const other = top.order === 0 ? TRACES : LOGS;
    return timeline.progress[other] >= top.t || now - timeline.lastArrival[other] >= this._maxHold;
  }

  private _timeline(key: string): Timeline {
    let timeline = this._timelines.get(key);
    if (timeline === undefined) {
      timeline = {
        heap: [],
        watermark: Number.NEGATIVE_INFINITY,
        progress: [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY],
        lastArrival: [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY],
      };
    } else this._timelines.delete(key);
    // Most recently active last.
    this._timelines.set(key, timeline);
    return timeline;
  }

  /** Forget the least recently active producers that hold nothing, beyond `maxProducers`. */
  private _forget(): void {
    let excess = this._timelines.size - this._maxProducers;
    if (excess <= 0) return;
    for (const [key, timeline] of this._timelines) {
      if (excess <= 0) break;
      if (timeline.heap.length > 0) continue;
      this._timelines.delete(key);
      excess -= 1;
    }
  }

  private _push(h: TimedRecord[], r: TimedRecord): void {
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

  private _pop(h: TimedRecord[]): TimedRecord {
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

/**
 * The byte budget of `serve`: what it holds (projected records waiting in the reorder buffer) plus
 * what it is receiving (request bodies being read) never exceeds `maxBytes`. A receiver asks
 * {@link IngestBudget.admit} before reading a body and, when the budget is reached, answers the way
 * OTLP exporters retry: HTTP `503` (held records fill the budget: wait for them to be judged) or
 * `429` (bodies in flight fill it), with `Retry-After`; gRPC `UNAVAILABLE` / `RESOURCE_EXHAUSTED`.
 * Both receivers (OTLP/HTTP and OTLP/gRPC) call the same functions.
 */

/** Default budget: 256 MiB. */
export const DEFAULT_INGEST_BUDGET_BYTES = 256 * 1024 * 1024;

/** Why a request was refused. */
export type IngestRefusal = {
  /** `held`: records waiting to be judged fill the budget; `in_flight`: bodies being read do. */
  readonly reason: 'held' | 'in_flight';
  /** HTTP status for the refusal (both are retryable for OTLP exporters). */
  readonly httpStatus: 429 | 503;
  /** gRPC status name (both retryable). */
  readonly grpcStatus: 'RESOURCE_EXHAUSTED' | 'UNAVAILABLE';
  /** Seconds the client should wait (`Retry-After`; gRPC `RetryInfo`). */
  readonly retryAfterSeconds: number;
  /** A short message that quotes no input. */
  readonly message: string;
};

/** A reservation for one body being read; release it once the body is decoded (or dropped). */
export interface IngestTicket {
  /** Grow the reservation as a body of unknown length arrives; `false` when the budget is exceeded. */
  grow(bytes: number): boolean;
  /**
   * Set the reservation to `bytes`: smaller gives the rest back at once (a gRPC call reserved for the
   * largest message settles to the one that came); larger grows it. `false` when growing exceeds the budget.
   */
  resize(bytes: number): boolean;
  /** Bytes reserved now. */
  readonly reserved: number;
  /** Give the reservation back. Idempotent. */
  release(): void;
}

/** Options of {@link IngestBudget}. */
export interface IngestBudgetOptions {
  /** Most bytes held plus in flight. Minimum `1`. @defaultValue {@link DEFAULT_INGEST_BUDGET_BYTES} */
  readonly maxBytes?: number;
  /** `Retry-After` in seconds. @defaultValue `1` (OTLP exporters give up once a retry would pass their timeout, 10 s by default) */
  readonly retryAfterSeconds?: number;
}

/** Counts held and in-flight bytes against one budget. */
export class IngestBudget {
  /** The budget in bytes. */
  readonly maxBytes: number;
  private readonly _retryAfter: number;
  private _held = 0;
  private _inFlight = 0;
  private _refused = 0;

  constructor(options: IngestBudgetOptions = {}) {
    const max = options.maxBytes;
    this.maxBytes = typeof max === 'number' && Number.isSafeInteger(max) && max >= 1 ? max : DEFAULT_INGEST_BUDGET_BYTES;
    const r = options.retryAfterSeconds;
    this._retryAfter = typeof r === 'number' && Number.isInteger(r) && r >= 0 ? r : 1;
  }

  /** Bytes of projected records held now (estimated). */
  get heldBytes(): number {
    return this._held;
  }

  /** Bytes of request bodies being read now. */
  get inFlightBytes(): number {
    return this._inFlight;
  }

  /** Requests refused so far. */
  get refusedCount(): number {
    return this._refused;
  }

  /**
   * Reserve room for a body of `declaredBytes` (its `Content-Length`; `0` when unknown, then grow
   * the ticket as it arrives). Returns the ticket, or why the request is refused.
   */
  admit(declaredBytes: number): IngestTicket | IngestRefusal {
    const want = Number.isFinite(declaredBytes) && declaredBytes > 0 ? declaredBytes : 0;
    const refusal = this._check(want);
    if (refusal !== undefined) return refusal;
    this._inFlight += want;
    let reserved = want;
    let released = false;
    const grow = (bytes: number): boolean => {
      if (released || bytes <= 0) return true;
      if (this._check(bytes, reserved) !== undefined) return false;
      this._inFlight += bytes;
      reserved += bytes;
      return true;
    };
    return {
      grow,
      resize: (bytes: number): boolean => {
        if (released) return true;
        if (bytes >= reserved) return grow(bytes - reserved);
        this._inFlight -= reserved - bytes;
        reserved = bytes;
        return true;
      },
      get reserved(): number {
        return released ? 0 : reserved;
      },
      release: (): void => {
        if (released) return;
        released = true;
        this._inFlight -= reserved;
      },
    };
  }

  /** Whether `x` is a refusal (not a ticket). */
  static isRefusal(x: IngestTicket | IngestRefusal): x is IngestRefusal {
    return 'reason' in x;
  }

  /** Records of `bytes` were accepted and are held. */
  hold(bytes: number): void {
    this._held += bytes;
  }

  /** Held records of `bytes` were released (judged or dropped). */
  unhold(bytes: number): void {
    this._held = Math.max(0, this._held - bytes);
  }

  /** A refusal for the stated reason, counted. */
  refusal(reason: IngestRefusal['reason']): IngestRefusal {
    this._refused += 1;
    return reason === 'held'
      ? {
          reason,
          httpStatus: 503,
          grpcStatus: 'UNAVAILABLE',
          retryAfterSeconds: this._retryAfter,
          message: 'guard memory budget reached by held telemetry; retry later',
        }
      : {
          reason,
          httpStatus: 429,
          grpcStatus: 'RESOURCE_EXHAUSTED',
          retryAfterSeconds: this._retryAfter,
          message: 'guard memory budget reached by requests in flight; retry later',
        };
  }

  /** Whether `bytes` more fit, for a request that has `own` reserved already. */
  private _check(bytes: number, own = 0): IngestRefusal | undefined {
    if (this._held >= this.maxBytes) return this.refusal('held');
    if (this._held + this._inFlight + bytes > this.maxBytes) {
      // A lone request is always let in and may grow (a budget smaller than one request must not
      // refuse it forever); the body and record limits bound it.
      if (this._inFlight === own && this._held === 0) return undefined;
      return this.refusal(this._inFlight === 0 ? 'held' : 'in_flight');
    }
    return undefined;
  }
}

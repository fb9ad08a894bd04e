/**
 * Refused requests, logged on stderr without flooding it: the first refusal of a kind is logged
 * at once, later ones of the same kind within the interval are counted and summed up in one line
 * when the interval has passed (or at close). Lines quote no input: signal, status, fixed message.
 */

/** Default interval between two lines of the same kind, in milliseconds. */
export const REJECTION_LOG_INTERVAL_MILLIS = 10_000;

interface Kind {
  readonly text: string;
  lastLoggedAt: number;
  suppressed: number;
}

/** The OTLP/gRPC service of each signal. */
const GRPC_SERVICES: Readonly<Record<string, string>> = { traces: 'TraceService', logs: 'LogsService', metrics: 'MetricsService' };

/** Names of the gRPC status codes the receiver answers (grpc/status codes). */
const GRPC_CODE_NAMES: Readonly<Record<number, string>> = {
  3: 'INVALID_ARGUMENT',
  8: 'RESOURCE_EXHAUSTED',
  12: 'UNIMPLEMENTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  16: 'UNAUTHENTICATED',
};

/** A rate-limited log of refused requests. */
export class RejectionLog {
  private readonly _write: (line: string) => void;
  private readonly _interval: number;
  private readonly _now: () => number;
  private readonly _kinds = new Map<string, Kind>();

  constructor(write: (line: string) => void, intervalMillis = REJECTION_LOG_INTERVAL_MILLIS, now: () => number = Date.now) {
    this._write = write;
    this._interval = intervalMillis;
    this._now = now;
  }

  /**
   * One refused request. Never throws.
   * @param signal - `traces`, `logs` or `metrics`; `undefined` for an unknown path
   * @param status - the HTTP status answered (for a gRPC call: the status OTLP/HTTP gives the same input)
   * @param message - the refusal's message (it quotes no input)
   * @param grpcCode - for an OTLP/gRPC call, the gRPC status code answered
   */
  note(signal: string | undefined, status: number, message: string, grpcCode?: number): void {
    const text =
      grpcCode !== undefined
        ? `an OTLP/gRPC ${GRPC_SERVICES[signal ?? ''] ?? 'export'} call: ${GRPC_CODE_NAMES[grpcCode] ?? `code ${grpcCode}`} ${message}`
        : `${signal === undefined ? 'a request to an unknown path' : `a /v1/${signal} request`}: ${status} ${message}`;
    const now = this._now();
    const kind = this._kinds.get(text);
    if (kind !== undefined && now - kind.lastLoggedAt < this._interval) {
      kind.suppressed += 1;
      return;
    }
    const suppressed = kind?.suppressed ?? 0;
    this._kinds.delete(text);
    this._kinds.set(text, { text, lastLoggedAt: now, suppressed: 0 });
    if (this._kinds.size > 256) this._kinds.delete(this._kinds.keys().next().value as string);
    this._line(text, suppressed);
  }

  /** Log the counts still pending. */
  flush(): void {
    for (const kind of this._kinds.values()) {
      if (kind.suppressed > 0) this._line(kind.text, kind.suppressed);
      kind.suppressed = 0;
    }
  }

  private _line(text: string, suppressed: number): void {
    const more = suppressed > 0 ? ` (and ${suppressed} more like it since the last line)` : '';
    try {
      this._write(`serve: refused ${text}${more}`);
    } catch {
      // logging never breaks the server
    }
  }
}

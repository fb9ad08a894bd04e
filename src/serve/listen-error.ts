/**
 * A receiver of `serve` that could not listen: which one, on which address, and the system code,
 * so that the CLI can say it in one line (grpc-js reports a bind failure as a sentence around the
 * Node error; the HTTP server as the Node error itself).
 */

/** Which receiver failed. */
export type ReceiverName = 'OTLP/HTTP' | 'OTLP/gRPC';

/** The system code of a bind failure (`EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`…), or `undefined`. */
function systemCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  const message = err instanceof Error ? err.message : '';
  return /\b(E[A-Z]{3,20})\b/.exec(message)?.[1];
}

/** Rejection of `startGuardServer` when a port cannot be bound. */
export class ListenError extends Error {
  /** The system code (`EADDRINUSE`…), else `'ELISTEN'`. */
  readonly code: string;
  /** `host:port` as asked for. */
  readonly address: string;
  readonly receiver: ReceiverName;

  constructor(receiver: ReceiverName, host: string, port: number, cause: unknown) {
    const code = systemCode(cause) ?? 'ELISTEN';
    const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    super(`cannot listen on ${address} for ${receiver} (${code})`, { cause });
    this.name = 'ListenError';
    this.code = code;
    this.address = address;
    this.receiver = receiver;
  }
}

/**
 * A small OTLP/HTTP receiver (JSON and protobuf, identity, gzip or deflate) on `node:http`, with a
 * body limit enforced before and after decompression and a byte budget shared with everything
 * `serve` holds.
 *
 * Every refusal is answered before the body is read when the headers already decide it (path,
 * method, content type and encoding, declared length, budget), and the body is then discarded
 * rather than the connection cut, so the client can read the status (an exporter that is cut off
 * while sending sees a network error, not a 413 or a 503). Error bodies are a `google.rpc.Status`
 * (JSON or protobuf, like the request) whose message says what is wrong and never quotes input.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:https';
import { createGunzip, createInflate } from 'node:zlib';
import { isOtlpRequest, otlpRequestToRecords } from '../otlp/otlp.js';
import type { OtlpSignal } from '../otlp/otlp.js';
import type { RecordBatch } from '../otlp/records.js';
import { countJsonValues, DEFAULT_MAX_RECORDS_PER_REQUEST, JSON_VALUE_BYTES, JSON_VALUES_PER_RECORD, RequestLimitError } from '../otlp/request-limit.js';
import { IngestBudget } from './ingest-budget.js';
import type { IngestRefusal, IngestTicket } from './ingest-budget.js';
import { RecordProjection } from './projection.js';
import { bearerChecker } from './receiver-auth.js';
import type { ReceiverAuth } from './receiver-auth.js';

/** One refused request, for the server's log. Holds no input. */
export interface RejectedRequest {
  /** The signal of the path, when the path is known. */
  readonly signal: OtlpSignal | undefined;
  readonly status: number;
  readonly message: string;
}

/** Options of {@link startOtlpHttpReceiver}. */
export interface OtlpHttpReceiverOptions {
  readonly host: string;
  /** `0` picks a free port. */
  readonly port: number;
  /** Largest body accepted, in bytes, before and after decompression; 413 beyond. */
  readonly maxBodyBytes: number;
  /**
   * Most records (spans, log records) one request may hold; 413 beyond. A JSON body may also hold
   * at most 16 values per record (counted before it is parsed). @defaultValue {@link DEFAULT_MAX_RECORDS_PER_REQUEST}
   */
  readonly maxRecordsPerRequest?: number;
  /** Called with the records of every accepted request (projected by {@link OtlpHttpReceiverOptions.projection}). */
  readonly onRecords: (records: RecordBatch, signal: OtlpSignal) => void;
  /**
   * What to keep of each request: protobuf bodies are read straight into projected records, JSON
   * ones projected after reading. @defaultValue everything (`new RecordProjection(undefined)`)
   */
  readonly projection?: RecordProjection;
  /** The byte budget shared with what the server holds. @defaultValue a budget of its own (256 MiB) */
  readonly budget?: IngestBudget;
  /** Called for every refused request (4xx, 5xx). */
  readonly onRejected?: (rejected: RejectedRequest) => void;
  /**
   * TLS (HTTPS, with client certificates when `tls.clientCa` is set) and a bearer token every
   * request must carry (`401` without it, before anything else is checked). @defaultValue none
   */
  readonly auth?: ReceiverAuth;
  /**
   * A request whose headers have not all arrived this long after its connection opened or its
   * previous request ended is answered `408` and closed; a connection that sends nothing for this
   * long is closed (Node's `headersTimeout` and socket timeout), in milliseconds. @defaultValue `10000`
   */
  readonly headersTimeoutMillis?: number;
  /** A request not received whole this long after it began is answered `408` and closed (Node's `requestTimeout`), in milliseconds. @defaultValue `30000` */
  readonly requestTimeoutMillis?: number;
  /**
   * Most connections open at once; beyond it new connections are closed as they arrive (Node's
   * `maxConnections`), said once through `onNotice` until the count falls below it again.
   * @defaultValue {@link DEFAULT_MAX_CONNECTIONS}
   */
  readonly maxConnections?: number;
  /** Called with a line for the server's log when something is refused wholesale (the connection limit). */
  readonly onNotice?: (line: string) => void;
}

/** Default of {@link OtlpHttpReceiverOptions.maxConnections}. */
export const DEFAULT_MAX_CONNECTIONS = 4096;

/** A running receiver. */
export interface OtlpHttpReceiver {
  /** `http://host:port`, or `https://host:port` with TLS */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

class HttpError extends Error {
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;
  constructor(status: number, message: string, retryAfterSeconds?: number) {
    super(message);
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

function refusalError(r: IngestRefusal): HttpError {
  return new HttpError(r.httpStatus, r.message, r.retryAfterSeconds);
}

const PATHS: Readonly<Record<string, OtlpSignal>> = {
  '/v1/traces': 'traces',
  '/v1/logs': 'logs',
  '/v1/metrics': 'metrics',
};

/** gRPC status codes for the `google.rpc.Status` error body (OTLP/HTTP spec: "Failures"). */
const GRPC_CODE: Readonly<Record<number, number>> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  404: 5, // NOT_FOUND
  405: 12, // UNIMPLEMENTED
  413: 8, // RESOURCE_EXHAUSTED
  415: 3, // INVALID_ARGUMENT
  429: 8, // RESOURCE_EXHAUSTED
  500: 13, // INTERNAL
  503: 14, // UNAVAILABLE
};

/** A refused body is read and discarded up to this many bytes (so the client reads the status), then the connection is cut. */
const MAX_DISCARD_BYTES = 64 * 1024 * 1024;

type BodyKind = 'json' | 'protobuf';

function bodyKind(contentType: string): BodyKind | undefined {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json') return 'json';
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  return undefined;
}

type Encoding = 'identity' | 'gzip' | 'deflate';

function encodingOf(header: string | undefined): Encoding | undefined {
  const e = (header ?? 'identity').trim().toLowerCase();
  if (e === 'identity' || e === '') return 'identity';
  if (e === 'gzip' || e === 'x-gzip') return 'gzip';
  if (e === 'deflate') return 'deflate';
  return undefined;
}

/**
 * Read the body into memory, decompressing it as it arrives (zlib streams on the thread pool), within
 * `max` bytes before and after decompression. The ticket grows with the received bytes beyond the
 * declared length and with every decompressed byte: a compressed request is charged what it
 * inflates to, as it inflates, and refused (429) once the budget is reached or (413) past `max`.
 */
function readBody(req: IncomingMessage, encoding: Encoding, max: number, ticket: IngestTicket, declared: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let received = 0;
    let settled = false;
    const inflater = encoding === 'gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : undefined;
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      req.off('data', onData);
      inflater?.destroy();
      reject(err);
    };
    const done = (): void => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, size));
    };
    const keep = (chunk: Buffer, what: string): void => {
      size += chunk.length;
      if (size > max) return fail(new HttpError(413, `${what} larger than ${max} bytes`));
      chunks.push(chunk);
    };
    const onData = (chunk: Buffer): void => {
      if (settled) return;
      received += chunk.length;
      if (received > max) return fail(new HttpError(413, `body larger than ${max} bytes`));
      if (received > declared && !ticket.grow(Math.min(chunk.length, received - declared))) return fail(new HttpError(429, IN_FLIGHT_MESSAGE, 1));
      if (inflater === undefined) return keep(chunk, 'body');
      // Back-pressure: the body is read no faster than it inflates.
      if (!inflater.write(chunk)) {
        req.pause();
        inflater.once('drain', () => req.resume());
      }
    };
    if (inflater !== undefined) {
      inflater.on('data', (out: Buffer) => {
        if (settled) return;
        if (!ticket.grow(out.length)) return fail(new HttpError(429, IN_FLIGHT_MESSAGE, 1));
        keep(out, 'decompressed body');
      });
      inflater.on('end', done);
      inflater.on('error', () => fail(new HttpError(400, `cannot decompress the ${encoding} body`)));
    }
    req.on('data', onData);
    req.on('end', () => {
      if (inflater === undefined) done();
      else if (!settled) inflater.end();
    });
    req.on('error', fail);
  });
}

const IN_FLIGHT_MESSAGE = 'guard memory budget reached by requests in flight; retry later';

/** The HTTP answer to a decoding bound: 413 for too much in one request, 429 when the budget refuses. */
function limitError(err: RequestLimitError): HttpError {
  return err.reason === 'budget' ? new HttpError(429, err.message, 1) : new HttpError(413, err.message);
}

/** Convert a decoded request; anything it cannot read is the client's error. */
function toRecords(value: Record<string, unknown>, projection: RecordProjection, maxRecords: number): RecordBatch {
  let records: RecordBatch;
  try {
    records = otlpRequestToRecords(value);
  } catch {
    throw new HttpError(400, 'unreadable OTLP request: a field has the wrong type');
  }
  if (records.spans.length + records.logs.length > maxRecords) throw limitError(new RequestLimitError('records', maxRecords));
  return projection.project(records);
}

function decode(signal: OtlpSignal, kind: BodyKind, body: Buffer, projection: RecordProjection, ticket: IngestTicket, maxRecords: number): RecordBatch {
  if (kind === 'json') {
    // What JSON.parse would build is counted first and charged before it is built.
    const maxValues = maxRecords * JSON_VALUES_PER_RECORD;
    const values = countJsonValues(body, maxValues);
    if (values > maxValues) throw limitError(new RequestLimitError('values', maxValues));
    if (!ticket.grow(values * JSON_VALUE_BYTES + 2 * body.length)) throw limitError(new RequestLimitError('budget'));
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      throw new HttpError(400, 'malformed JSON: the body is not valid JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'expected an OTLP JSON object');
    if (!isOtlpRequest(value) && Object.keys(value).length > 0) throw new HttpError(400, 'not an OTLP export request');
    return toRecords(value as Record<string, unknown>, projection, maxRecords);
  }
  try {
    return projection.readProtobuf(signal, body, { maxRecords, charge: (bytes) => ticket.grow(bytes) });
  } catch (err) {
    if (err instanceof RequestLimitError) throw limitError(err);
    throw new HttpError(400, `malformed protobuf: not a valid OTLP ${signal} export request`);
  }
}

/** `google.rpc.Status { int32 code = 1; string message = 2; }` in protobuf. */
function statusProtobuf(code: number, message: string): Buffer {
  const text = Buffer.from(message, 'utf8');
  const varint = (n: number): number[] => {
    const out: number[] = [];
    while (n > 0x7f) {
      out.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    out.push(n);
    return out;
  };
  return Buffer.concat([Buffer.from([0x08, ...varint(code), 0x12, ...varint(text.length)]), text]);
}

function reply(res: ServerResponse, status: number, kind: BodyKind | undefined, message?: string, retryAfterSeconds?: number): void {
  if (res.headersSent) return;
  const headers: Record<string, string> = {};
  let body: string | Buffer;
  if (kind === 'protobuf') {
    headers['content-type'] = 'application/x-protobuf';
    body = status === 200 ? Buffer.alloc(0) : statusProtobuf(GRPC_CODE[status] ?? 2, message ?? '');
  } else {
    headers['content-type'] = 'application/json';
    body = status === 200 ? '{}' : JSON.stringify({ code: GRPC_CODE[status] ?? 2, message });
  }
  if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * After a refusal: read and discard what is left of the body, so the client, still sending, can
 * read the answer (cutting a connection that still receives data resets it, and the client then
 * sees a network error instead of the status); then close. The connection is cut at once after
 * {@link MAX_DISCARD_BYTES}, 30 s, or 5 s without data (a client on a loaded machine may pause
 * for a second or more between writes).
 */
function discardRestThenClose(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  if (req.complete) return;
  let discarded = 0;
  const cut = (): void => {
    clearTimeout(total);
    clearTimeout(idle);
    socket.destroy();
  };
  const total = setTimeout(cut, 30_000);
  let idle = setTimeout(cut, 5_000);
  req.removeAllListeners('data');
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    clearTimeout(idle);
    idle = setTimeout(cut, 5_000);
    if (discarded > MAX_DISCARD_BYTES) cut();
  });
  req.on('end', () => {
    clearTimeout(total);
    clearTimeout(idle);
    // the answer was sent first; now close (half-close: the client reads it, then the end)
    if (res.writableFinished) socket.end();
    else res.once('finish', () => socket.end());
  });
  req.on('error', cut);
  req.resume();
}

/** Start the receiver. Resolves once it listens. */
export function startOtlpHttpReceiver(options: OtlpHttpReceiverOptions): Promise<OtlpHttpReceiver> {
  const budget = options.budget ?? new IngestBudget();
  const projection = options.projection ?? new RecordProjection(undefined);
  const max = options.maxBodyBytes;
  const maxRecords = options.maxRecordsPerRequest ?? DEFAULT_MAX_RECORDS_PER_REQUEST;
  const token = options.auth?.bearerToken;
  const authorized = token === undefined || token === '' ? undefined : bearerChecker(token);

  /** The checks the headers decide; throws the refusal. */
  const checkHeaders = (req: IncomingMessage): { signal: OtlpSignal; kind: BodyKind; encoding: Encoding; declared: number } => {
    if (authorized !== undefined && !authorized(req.headers.authorization)) throw new HttpError(401, 'missing or invalid bearer token');
    const path = (req.url ?? '').split('?')[0] ?? '';
    const signal = PATHS[path];
    if (signal === undefined) throw new HttpError(404, 'unknown path; use /v1/traces, /v1/logs or /v1/metrics');
    if (req.method !== 'POST') throw new HttpError(405, 'use POST');
    const kind = bodyKind(String(req.headers['content-type'] ?? ''));
    if (kind === undefined) throw new HttpError(415, 'unsupported content-type; use application/json or application/x-protobuf');
    const encoding = encodingOf(req.headers['content-encoding']);
    if (encoding === undefined) throw new HttpError(415, 'unsupported content-encoding; use identity, gzip or deflate');
    const declared = Number(req.headers['content-length'] ?? 0);
    if (Number.isFinite(declared) && declared > max) throw new HttpError(413, `body larger than ${max} bytes`);
    return { signal, kind, encoding, declared: Number.isFinite(declared) ? declared : 0 };
  };

  const refuse = (req: IncomingMessage, res: ServerResponse, err: unknown): void => {
    // A client that went away (aborted upload) gets no answer and no log line.
    if (!(err instanceof HttpError) && (req.destroyed || (err as NodeJS.ErrnoException).code === 'ECONNRESET')) return;
    const status = err instanceof HttpError ? err.status : 500;
    const message = err instanceof HttpError ? err.message : 'internal error';
    const path = (req.url ?? '').split('?')[0] ?? '';
    // A client that sent `Connection: close` and is still sending: without this, Node destroys the
    // socket as soon as the answer is written, and the client's next write fails (EPIPE) before it
    // reads the status. discardRestThenClose closes the connection once the body is drained.
    if (!req.complete) res.shouldKeepAlive = true;
    reply(res, status, bodyKind(String(req.headers['content-type'] ?? '')), message, err instanceof HttpError ? err.retryAfterSeconds : undefined);
    discardRestThenClose(req, res);
    try {
      options.onRejected?.({ signal: PATHS[path], status, message });
    } catch {
      // a logging hook never breaks the receiver
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { signal, kind, encoding, declared } = checkHeaders(req);
    const admitted = budget.admit(declared);
    if (IngestBudget.isRefusal(admitted)) throw refusalError(admitted);
    try {
      const body = await readBody(req, encoding, max, admitted, declared);
      const records = decode(signal, kind, body, projection, admitted, maxRecords);
      if (signal !== 'metrics') options.onRecords(records, signal);
      reply(res, 200, kind);
    } finally {
      admitted.release();
    }
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    req.socket.setTimeout(0);
    handle(req, res).catch((err: unknown) => refuse(req, res, err));
  };
  const tls = options.auth?.tls;
  const headersTimeout = options.headersTimeoutMillis ?? 10_000;
  const requestTimeout = Math.max(headersTimeout, options.requestTimeoutMillis ?? 30_000);
  // Node checks both timeouts every connectionsCheckingInterval (30 s by default, so a 10 s
  // timeout fired at up to 40 s): checked every second, or a tenth of the headers timeout.
  const timing = { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 10))) };
  const server: Server =
    tls === undefined
      ? createServer(timing, onRequest)
      : createTlsServer(
          { ...timing, cert: tls.cert, key: tls.key, ...(tls.clientCa === undefined ? {} : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }) },
          onRequest,
        );
  // A connection that sends nothing at all is not covered by headersTimeout: it is closed once idle
  // that long before its first request (from then on requestTimeout and keepAliveTimeout apply; a
  // socket timeout during a request would also cut one whose answer is slow to come).
  server.on('connection', (socket: Socket) => socket.setTimeout(headersTimeout, () => socket.destroy()));
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  let limitSaid = false;
  server.on('drop', () => {
    if (limitSaid) return;
    limitSaid = true;
    try {
      options.onNotice?.(
        `serve: ${server.maxConnections} connections open (the limit): new connections are closed until some end (idle ones close after ${headersTimeout >= 1_000 ? `${Math.round(headersTimeout / 1000)} s` : `${headersTimeout} ms`})`,
      );
    } catch {
      // a logging hook never breaks the receiver
    }
    const check = setInterval(() => {
      server.getConnections((err, count) => {
        if (err === null && count < server.maxConnections) {
          clearInterval(check);
          limitSaid = false;
        }
      });
    }, 1_000);
    check.unref();
  });
  // `Expect: 100-continue` (curl, large bodies): refuse before the client sends the body at all.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    try {
      checkHeaders(req);
    } catch (err) {
      refuse(req, res, err);
      return;
    }
    res.writeContinue();
    server.emit('request', req, res);
  });
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const addr = server.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : options.port;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      resolve({
        url: `${tls === undefined ? 'http' : 'https'}://${host}:${port}`,
        server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/**
 * A small OTLP/gRPC receiver on `@grpc/grpc-js`: the `Export` methods of the official OTLP
 * collector services (opentelemetry-proto `opentelemetry/proto/collector/{trace,logs,metrics}/v1`),
 * read straight into records by the same reader as the OTLP/HTTP receiver's protobuf bodies
 * ({@link RecordProjection.readProtobuf}), under the same ingest budget.
 *
 * Loaded only by `serve` when it is given a gRPC port, so nothing else pulls `@grpc/grpc-js` in.
 */
import { Server, ServerCredentials, ServerInterceptingCall, status } from '@grpc/grpc-js';
import type { ServerInterceptor, ServerUnaryCall, ServiceDefinition, sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { OtlpSignal } from '../otlp/otlp.js';
import type { RecordBatch } from '../otlp/records.js';
import { DEFAULT_MAX_RECORDS_PER_REQUEST, RequestLimitError } from '../otlp/request-limit.js';
import type { RequestLimits } from '../otlp/request-limit.js';
import { IngestBudget } from './ingest-budget.js';
import type { IngestTicket } from './ingest-budget.js';
import { RecordProjection } from './projection.js';
import { bearerChecker } from './receiver-auth.js';
import type { ReceiverAuth } from './receiver-auth.js';

/** Options of {@link startOtlpGrpcReceiver}. */
export interface OtlpGrpcReceiverOptions {
  /** Address to bind, e.g. `'127.0.0.1'` or `'::1'`. */
  readonly host: string;
  /** `0` picks a free port; OTLP/gRPC's conventional port is `4317`. */
  readonly port: number;
  /**
   * Largest request message accepted, in bytes, before and after decompression;
   * `RESOURCE_EXHAUSTED` beyond (answered by grpc-js before the message is decoded).
   */
  readonly maxMessageBytes: number;
  /**
   * Called with the records of every accepted trace or logs request, projected by
   * {@link OtlpGrpcReceiverOptions.projection} (metrics are accepted and ignored).
   */
  readonly onRecords: (records: RecordBatch, signal: OtlpSignal) => void;
  /** What to keep of each request (read straight into projected records). @defaultValue everything */
  readonly projection?: RecordProjection;
  /**
   * The byte budget shared with what the server holds: every call reserves `maxMessageBytes` on its
   * metadata, before its message is read, and is refused (`UNAVAILABLE` when held records fill the
   * budget, `RESOURCE_EXHAUSTED` when calls in flight do; both retryable) when it has no room; the
   * reservation settles to the message's size once it has arrived, and grows with what decoding
   * builds. @defaultValue a budget of its own (256 MiB)
   */
  readonly budget?: IngestBudget;
  /**
   * Called for every refused call, with the gRPC status code answered, the HTTP status the
   * OTLP/HTTP receiver gives the same input (for one log of refusals across both receivers) and a
   * message that quotes no input.
   */
  readonly onRejected?: (rejection: { readonly signal: OtlpSignal; readonly status: number; readonly message: string; readonly grpcCode: number }) => void;
  /**
   * TLS (with client certificates when `tls.clientCa` is set) and a bearer token every call must
   * carry in its `authorization` metadata (`UNAUTHENTICATED` without it, checked on the call's
   * metadata, before its message is read). @defaultValue none
   */
  readonly auth?: ReceiverAuth;
  /** Most records (spans, log records) one request may hold; `RESOURCE_EXHAUSTED` beyond. @defaultValue {@link DEFAULT_MAX_RECORDS_PER_REQUEST} */
  readonly maxRecordsPerRequest?: number;
  /**
   * A call not ended this long after its metadata arrived (its message or its half-close never
   * came) is ended with `DEADLINE_EXCEEDED`, in milliseconds. @defaultValue `30000`
   */
  readonly callTimeoutMillis?: number;
  /** A connection with no call for this long is closed (`grpc.max_connection_idle_ms`), in milliseconds. @defaultValue `300000` */
  readonly idleTimeoutMillis?: number;
}

/** Default of {@link OtlpGrpcReceiverOptions.callTimeoutMillis}: the OTLP/HTTP receiver's request timeout. */
const DEFAULT_CALL_TIMEOUT_MILLIS = 30_000;
/** Default of {@link OtlpGrpcReceiverOptions.idleTimeoutMillis}. */
const DEFAULT_IDLE_TIMEOUT_MILLIS = 300_000;
/** `grpc.max_concurrent_streams`: calls one connection may have open at once. */
const MAX_CONCURRENT_STREAMS = 100;

/** Each received message's budget reservation, handed from the admission interceptor to the handler. */
const tickets = new WeakMap<Buffer, IngestTicket>();

/** A running receiver. */
export interface OtlpGrpcReceiver {
  /** `host:port` as an OTLP/gRPC client's endpoint (IPv6 hosts in brackets). */
  readonly address: string;
  /** The bound port. */
  readonly port: number;
  /** Stop accepting calls, let calls in progress finish (at most 2 s), then close. Idempotent. */
  close(): Promise<void>;
}

/** The services, by their fully qualified protobuf names (opentelemetry-proto, package `….v1`). */
const SERVICES: ReadonlyArray<{ readonly name: string; readonly signal: OtlpSignal; readonly request: string }> = [
  { name: 'opentelemetry.proto.collector.trace.v1.TraceService', signal: 'traces', request: 'ExportTraceServiceRequest' },
  { name: 'opentelemetry.proto.collector.logs.v1.LogsService', signal: 'logs', request: 'ExportLogsServiceRequest' },
  { name: 'opentelemetry.proto.collector.metrics.v1.MetricsService', signal: 'metrics', request: 'ExportMetricsServiceRequest' },
];

/** How long `close()` lets calls in progress finish before it cuts them, in milliseconds. */
const CLOSE_GRACE_MILLIS = 2_000;

/**
 * An `Export*ServiceResponse` with no `partial_success`: every message field is absent, so its
 * protobuf encoding is zero bytes. The receiver never rejects part of a request: it takes all of
 * it or refuses it whole.
 */
const FULL_SUCCESS = Buffer.alloc(0);

/** The request bytes are handed over undecoded, so that a malformed message is the handler's INVALID_ARGUMENT. */
const identity = (b: Buffer): Buffer => b;

class CallError extends Error {
  readonly code: status;
  /** What the OTLP/HTTP receiver answers to the same input. */
  readonly httpStatus: number;
  constructor(code: status, httpStatus: number, message: string) {
    super(message);
    this.code = code;
    this.httpStatus = httpStatus;
  }
}

/**
 * Decode one request. The answers never quote the input or the decoder's own message (which may
 * describe the input): only the expected message type.
 */
function decode(signal: OtlpSignal, request: string, body: Buffer, projection: RecordProjection, limits: RequestLimits): RecordBatch {
  try {
    return projection.readProtobuf(signal, body, limits);
  } catch (err) {
    if (err instanceof RequestLimitError) throw new CallError(status.RESOURCE_EXHAUSTED, err.reason === 'budget' ? 429 : 413, err.message);
    throw new CallError(status.INVALID_ARGUMENT, 400, `malformed protobuf: not a valid ${request}`);
  }
}

function serviceDefinition(name: string): ServiceDefinition {
  return {
    Export: {
      path: `/${name}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
}

/**
 * Start the receiver. Resolves once it listens.
 *
 * Answers (status codes of the OTLP/gRPC specification):
 * - `OK` with an empty `Export*ServiceResponse`: the request was read; trace and logs records went
 *   to `onRecords`; metrics are ignored.
 * - `INVALID_ARGUMENT`: the message is not a decodable request of the method's type (not retryable).
 * - `RESOURCE_EXHAUSTED`: the message is larger than `maxMessageBytes`, compressed or decompressed,
 *   or holds more than `maxRecordsPerRequest` records; or calls in flight fill the budget (retryable).
 * - `DEADLINE_EXCEEDED`: the call's message or half-close did not arrive within `callTimeoutMillis`.
 * - `UNAVAILABLE`: held records fill the budget (retryable).
 * - `UNIMPLEMENTED`: another service or method, or a compression other than gzip and deflate.
 * - `INTERNAL`: a compressed message that does not decompress (grpc-js's own answer), or
 *   `onRecords` threw.
 *
 * @throws {Error} when the address cannot be bound (the rejection carries grpc-js's reason).
 */
export function startOtlpGrpcReceiver(options: OtlpGrpcReceiverOptions): Promise<OtlpGrpcReceiver> {
  const budget = options.budget ?? new IngestBudget();
  const projection = options.projection ?? new RecordProjection(undefined);
  const token = options.auth?.bearerToken;
  const authorized = token === undefined || token === '' ? undefined : bearerChecker(token);
  const signalOf = (path: string): OtlpSignal => SERVICES.find((sv) => path.startsWith(`/${sv.name}/`))?.signal ?? 'traces';
  const maxRecords = options.maxRecordsPerRequest ?? DEFAULT_MAX_RECORDS_PER_REQUEST;
  const callTimeout = options.callTimeoutMillis ?? DEFAULT_CALL_TIMEOUT_MILLIS;
  const note = (path: string, httpStatus: number, message: string, grpcCode: number): void => {
    try {
      options.onRejected?.({ signal: signalOf(path), status: httpStatus, message, grpcCode });
    } catch {
      // a logging hook never breaks the receiver
    }
  };
  /**
   * Every call, on its metadata, before grpc-js reads its message (the call's stream stays paused
   * until the metadata is passed on): the token, then a reservation of the largest message for it
   * in the budget (grpc-js buffers a whole message, and decompresses it, before the handler runs).
   * Once the message is in, the reservation settles to its size; the handler charges what decoding
   * builds; the reservation is given back when the call ends, however it ends. A call that has not
   * ended `callTimeoutMillis` after its metadata (a client that never sends its message or never
   * half-closes) is ended with `DEADLINE_EXCEEDED`.
   */
  const admission: ServerInterceptor = (method, call) => {
    let ticket: IngestTicket | undefined;
    let timer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      ticket?.release();
    };
    const end = (code: status, httpStatus: number, message: string): void => {
      finish();
      call.sendStatus({ code, details: message });
      note(method.path, httpStatus, message, code);
    };
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, nextMetadata) => {
            if (authorized !== undefined) {
              const value = metadata.get('authorization')[0];
              if (authorized(typeof value === 'string' ? value : undefined) !== true) {
                end(status.UNAUTHENTICATED, 401, 'missing or invalid bearer token');
                return;
              }
            }
            const admitted = budget.admit(options.maxMessageBytes);
            if (IngestBudget.isRefusal(admitted)) {
              end(status[admitted.grpcStatus], admitted.httpStatus, admitted.message);
              return;
            }
            ticket = admitted;
            timer = setTimeout(() => end(status.DEADLINE_EXCEEDED, 408, `request not received within ${Math.round(callTimeout / 1000)} s`), callTimeout);
            timer.unref();
            nextMetadata(metadata);
          },
          onReceiveMessage: (message: Buffer, nextMessage) => {
            if (ticket !== undefined) {
              ticket.resize(message.length);
              tickets.set(message, ticket);
            }
            nextMessage(message);
          },
          onCancel: finish,
        }),
      sendStatus: (sent, nextStatus) => {
        finish();
        nextStatus(sent);
      },
    });
  };
  const server = new Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    // Streams a connection may open at once, and the HTTP/2 session's own buffers (MiB): a client
    // cannot queue more than these whatever the budget says.
    'grpc.max_concurrent_streams': MAX_CONCURRENT_STREAMS,
    'grpc-node.max_session_memory': Math.max(10, 2 * Math.ceil(options.maxMessageBytes / (1024 * 1024))),
    // A connection that carries no call for this long is closed (GOAWAY; clients reconnect).
    'grpc.max_connection_idle_ms': options.idleTimeoutMillis ?? DEFAULT_IDLE_TIMEOUT_MILLIS,
    interceptors: [admission],
  });
  const refuse = (signal: OtlpSignal, e: CallError, callback: sendUnaryData<Buffer>): void => {
    callback({ code: e.code, details: e.message });
    try {
      options.onRejected?.({ signal, status: e.httpStatus, message: e.message, grpcCode: e.code });
    } catch {
      // a logging hook never breaks the receiver
    }
  };
  for (const service of SERVICES) {
    const handler = (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void => {
      // The reservation made on the call's metadata (a call that bypassed it is admitted here).
      const ticket = tickets.get(call.request) ?? budget.admit(call.request.length);
      if (IngestBudget.isRefusal(ticket)) {
        refuse(service.signal, new CallError(status[ticket.grpcStatus], ticket.httpStatus, ticket.message), callback);
        return;
      }
      try {
        const records = decode(service.signal, service.request, call.request, projection, { maxRecords, charge: (bytes) => ticket.grow(bytes) });
        if (service.signal !== 'metrics') {
          try {
            options.onRecords(records, service.signal);
          } catch {
            throw new CallError(status.INTERNAL, 500, 'internal error');
          }
        }
        callback(null, FULL_SUCCESS);
      } catch (err) {
        refuse(service.signal, err instanceof CallError ? err : new CallError(status.INTERNAL, 500, 'internal error'), callback);
      } finally {
        ticket.release();
      }
    };
    const implementation: UntypedServiceImplementation = { Export: handler };
    server.addService(serviceDefinition(service.name), implementation);
  }
  const host = options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host;
  return new Promise((resolve, reject) => {
    const tls = options.auth?.tls;
    const credentials =
      tls === undefined
        ? ServerCredentials.createInsecure()
        : ServerCredentials.createSsl(
            tls.clientCa === undefined ? null : Buffer.from(tls.clientCa),
            [{ private_key: Buffer.from(tls.key), cert_chain: Buffer.from(tls.cert) }],
            tls.clientCa !== undefined,
          );
    server.bindAsync(`${host}:${options.port}`, credentials, (err, port) => {
      if (err !== null) {
        server.forceShutdown();
        reject(err);
        return;
      }
      let closed: Promise<void> | undefined;
      resolve({
        address: `${host}:${port}`,
        port,
        close: () => {
          closed ??= new Promise<void>((done) => {
            const timer = setTimeout(() => {
              server.forceShutdown();
              done();
            }, CLOSE_GRACE_MILLIS);
            timer.unref();
            server.tryShutdown(() => {
              clearTimeout(timer);
              done();
            });
          });
          return closed;
        },
      });
    });
  });
}

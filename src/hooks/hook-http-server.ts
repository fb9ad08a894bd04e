/**
 * A resident endpoint for a host's HTTP hooks (Claude Code 2.1.328 `type: "http"` hooks): the host
 * POSTs each hook input as JSON and reads the hook output from the response body, exactly the
 * output a command hook prints. The same runtime ({@link runHook}) and adapter answer; the
 * per-session state is in memory ({@link MemoryHookStateStore}), so an event costs no process
 * start, no module load and no file lock.
 *
 * What Claude Code 2.1.328 does with an HTTP hook (read in its bundled CLI, checked on the real CLI
 * by the conformance run): it POSTs the hook input with `Content-Type: application/json`, with the
 * hook's `headers` (values may name environment variables listed in `allowedEnvVars`), to any
 * loopback URL (private and link-local addresses are refused); a 2xx body is parsed as the hook
 * output (an empty body reads as `{}`); a non-2xx answer, a refused connection or a timeout
 * (`timeout`, seconds) is a non-blocking hook error: the tool call goes ahead. So an endpoint that
 * is down, or refuses a request, never blocks a tool.
 *
 * Every request must carry `Authorization: Bearer <token>` (`401` before the body is read
 * otherwise): anyone who can post hook inputs could otherwise make the guard stop another user's
 * session. The answer is sent before the guard's own telemetry is exported.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { GuardMode } from '../core/failure/types.js';
import type { BatchDecision } from '../engine/failure-types.js';
import { bearerChecker } from '../serve/receiver-auth.js';
import type { ReceiverTls } from '../serve/receiver-auth.js';
import type { HookAdapter } from './hook-event.js';
import { HOOK_CHECK_FIELD, HOOK_CHECK_HEADER, runHook } from './hook-runtime.js';
import { MemoryHookStateStore } from './memory-state-store.js';
import type { MemoryHookStateStoreOptions } from './memory-state-store.js';

/** The path an adapter's hooks are posted to: `/hooks/<profile>`, e.g. `/hooks/claude-code`. */
export function hookHttpPath(adapter: Pick<HookAdapter, 'profile'>): string {
  return `/hooks/${adapter.profile}`;
}

/** Options of {@link startHookHttpServer}. */
export interface HookHttpServerOptions {
  /** The host agent's adapter; its hooks are answered on {@link hookHttpPath}. */
  readonly adapter: HookAdapter;
  /** Every request must carry `Authorization: Bearer <token>`. Required: an empty token is refused. */
  readonly bearerToken: string;
  /** Address to bind. @defaultValue `127.0.0.1` */
  readonly host?: string;
  /** Port; 0 picks a free one. @defaultValue 0 */
  readonly port?: number;
  /** HTTPS with this certificate (client certificates when `clientCa` is set). @defaultValue plain HTTP */
  readonly tls?: ReceiverTls;
  /** The guard mode of every session (`off` answers nothing). */
  readonly mode: GuardMode;
  /** A file each decision is appended to as a JSON line. @defaultValue none */
  readonly decisionsFile?: string;
  /** Called with each decision other than `none` (the resident process's guard telemetry). */
  readonly onDecision?: (decision: BatchDecision) => void;
  /** Diagnostics (one line each; no tool input, error text or path). @defaultValue stderr */
  readonly log?: (line: string) => void;
  /** The route label of a request's decisions, from its headers. @defaultValue `acp_foreground` */
  readonly routeOf?: (req: IncomingMessage) => BatchDecision['route'];
  /** Largest accepted hook input, in bytes (`413` beyond: a non-blocking hook error). @defaultValue 64 MiB */
  readonly maxBodyBytes?: number;
  /** Bounds of the in-memory session states. */
  readonly sessions?: MemoryHookStateStoreOptions;
}

/** A running endpoint. */
export interface HookHttpServer {
  /** The hook URL, e.g. `http://127.0.0.1:4319/hooks/claude-code`. */
  readonly url: string;
  /** Hook inputs answered so far (any status). */
  requests(): number;
  /** Stop listening; resolves when open connections are closed. */
  close(): Promise<void>;
}

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new HttpRefusal(413, `hook input over ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Start the endpoint.
 *
 * @param options - adapter, token, address, mode, decisions
 * @returns the running endpoint
 * @throws {Error} when the token is empty, or the address cannot be bound (`EADDRINUSE`, …)
 */
export async function startHookHttpServer(options: HookHttpServerOptions): Promise<HookHttpServer> {
  if (options.bearerToken === '' || /\s/.test(options.bearerToken)) throw new Error('the hook endpoint needs a bearer token (one word, no spaces)');
  const { adapter } = options;
  const authorized = bearerChecker(options.bearerToken);
  const path = hookHttpPath(adapter);
  const limit = options.maxBodyBytes ?? 64 * 1024 * 1024;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const store = new MemoryHookStateStore(options.sessions);
  let requests = 0;

  const answer = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    requests += 1;
    if (!authorized(req.headers.authorization)) throw new HttpRefusal(401, 'missing or invalid bearer token');
    if ((req.url ?? '').split('?')[0] !== path) throw new HttpRefusal(404, `unknown path; hooks go to ${path}`);
    if (req.method !== 'POST') throw new HttpRefusal(405, 'POST the hook input');
    const text = await readBody(req, limit);
    const out: string[] = [];
    const err: string[] = [];
    const route = options.routeOf?.(req);
    await runHook(
      adapter,
      text,
      { mode: options.mode, store, decisionsFile: options.decisionsFile, onDecision: options.onDecision, ...(route === undefined ? {} : { route }) },
      { out: (line) => out.push(line), err: (line) => err.push(line) },
      {},
    );
    const check = text.includes(HOOK_CHECK_FIELD) ? err.find((l) => / check [0-9a-f]+ /.test(l)) : undefined;
    for (const line of err) if (line !== check) log(line);
    // Claude Code reads an empty body as `{}`; `{}` says the same to any other client.
    answer(res, 200, out[0] ?? '{}', check === undefined ? {} : { [HOOK_CHECK_HEADER]: check.replace(/[^\x20-\x7e]/g, '?') });
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((e: unknown) => {
      const status = e instanceof HttpRefusal ? e.status : 500;
      const message = e instanceof HttpRefusal ? e.message : 'internal error';
      if (!res.headersSent) answer(res, status, JSON.stringify({ error: message }), status === 401 ? { 'www-authenticate': 'Bearer' } : {});
      // A refused body is not read further: close the connection after the answer.
      if (status === 413) res.once('finish', () => req.socket.destroy());
    });
  };

  const tls = options.tls;
  const server: Server =
    tls === undefined
      ? createServer(onRequest)
      : createTlsServer({ cert: tls.cert, key: tls.key, ...(tls.clientCa === undefined ? {} : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }) }, onRequest);
  // Claude Code keeps its connection open between events: keep-alive saves a handshake an event.
  server.keepAliveTimeout = 60_000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `${tls === undefined ? 'http' : 'https'}://${shownHost}:${port}${path}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

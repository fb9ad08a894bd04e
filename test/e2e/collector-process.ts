/**
 * Test helpers that build and run the guard's OpenTelemetry Collector distribution
 * (`collector/`) on loopback ports, for end-to-end tests of `collector-config/`.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILD_SCRIPT = join(REPO_ROOT, 'collector', 'build.sh');
const LOOPBACK = '127.0.0.1';

/** Exit status of `collector/build.sh` when the Go toolchain is missing. */
const EXIT_GO_MISSING = 127;
/** Upper bound for one collector build, in milliseconds (the first build downloads modules). */
const BUILD_TIMEOUT_MILLIS = 580_000;
/** How long `stop()` waits after SIGTERM before sending SIGKILL, in milliseconds. */
const STOP_GRACE_MILLIS = 10_000;
/** How long `stop()` waits after SIGKILL, in milliseconds. */
const KILL_WAIT_MILLIS = 5_000;
/** Default bound on the wait for the HTTP receiver, in milliseconds. */
const DEFAULT_READY_TIMEOUT_MILLIS = 30_000;
/** Collector output kept for error messages, in characters. */
const MAX_OUTPUT_CHARS = 64 * 1024;

const GO_MISSING_MESSAGE =
  'The Go toolchain (`go`) was not found on PATH; it is required to build the OpenTelemetry ' +
  'Collector in collector/ (install Go 1.26 or newer, then run `bash collector/build.sh`).';

/** Options for {@link startCollector}. */
export interface StartCollectorOptions {
  /** Path of the collector YAML config, passed as `--config`. */
  configPath: string;
  /** Extra environment variables for the collector; the endpoint variables are always set by the helper. */
  env: Record<string, string>;
  /** Bound on the wait for the OTLP/HTTP receiver to accept connections, in milliseconds. @defaultValue 30000 */
  readyTimeoutMillis?: number;
}

/** A running collector started by {@link startCollector}. */
export interface RunningCollector {
  /** `host:port` of the OTLP/HTTP receiver (post to `http://<httpEndpoint>/v1/traces`). */
  httpEndpoint: string;
  /** `host:port` of the OTLP/gRPC receiver. */
  grpcEndpoint: string;
  /** The collector's stdout and stderr so far (the last 64 KiB). */
  output(): string;
  /** The exit status once the process has exited on its own or after SIGTERM; `null` while running or if killed. */
  exitCode(): number | null;
  /** Sends SIGTERM and waits for exit; sends SIGKILL if it does not exit within 10 s. Idempotent. */
  stop(): Promise<void>;
}

/** Absolute path of the collector binary that `collector/build.sh` produces. */
export function collectorBinaryPath(): string {
  return join(REPO_ROOT, 'collector', 'build', 'otelcol-guard');
}

/**
 * Builds the collector with `collector/build.sh` (a no-op when the binary is up to date).
 *
 * @throws {Error} naming the missing Go toolchain when `go` is not on PATH, or with the
 *   script's output when the build fails or exceeds its time bound.
 */
export async function ensureCollectorBuilt(): Promise<void> {
  const probe = spawnSync('go', ['version'], { stdio: 'ignore' });
  if (probe.error !== undefined) {
    throw new Error(GO_MISSING_MESSAGE);
  }
  const child = spawn('bash', [BUILD_SCRIPT], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = captureOutput(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), BUILD_TIMEOUT_MILLIS);
  const [code, signal] = await waitForExit(child).finally(() => clearTimeout(timer));
  if (code === 0) {
    return;
  }
  if (code === EXIT_GO_MISSING) {
    throw new Error(`${GO_MISSING_MESSAGE}\n${output()}`);
  }
  const how = signal === null ? `exit status ${String(code)}` : `signal ${signal}`;
  throw new Error(`collector/build.sh failed (${how}):\n${output()}`);
}

/**
 * Starts the collector on two free loopback ports and waits until its OTLP/HTTP receiver
 * accepts connections.
 *
 * Sets `GUARD_OTLP_HTTP_ENDPOINT` and `GUARD_OTLP_GRPC_ENDPOINT` (overriding `opts.env`).
 *
 * @throws {Error} with the collector's output when it exits early or is not ready in time.
 */
export async function startCollector(opts: StartCollectorOptions): Promise<RunningCollector> {
  const readyTimeoutMillis = opts.readyTimeoutMillis ?? DEFAULT_READY_TIMEOUT_MILLIS;
  const [httpPort, grpcPort] = await freeLoopbackPortPair();
  const httpEndpoint = `${LOOPBACK}:${String(httpPort)}`;
  const grpcEndpoint = `${LOOPBACK}:${String(grpcPort)}`;
  const child = spawn(collectorBinaryPath(), ['--config', opts.configPath], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...opts.env,
      GUARD_OTLP_HTTP_ENDPOINT: httpEndpoint,
      GUARD_OTLP_GRPC_ENDPOINT: grpcEndpoint,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureOutput(child);
  const exited = waitForExit(child);
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        if (!(await settlesWithin(exited, STOP_GRACE_MILLIS))) {
          child.kill('SIGKILL');
          await settlesWithin(exited, KILL_WAIT_MILLIS);
        }
      }
      process.removeListener('exit', killOnExit);
    })();
    return stopping;
  };

  try {
    await waitForPort(httpPort, exited, readyTimeoutMillis);
  } catch (err) {
    await stop();
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`collector did not become ready: ${reason}\n${output()}`);
  }
  return { httpEndpoint, grpcEndpoint, output, exitCode: () => child.exitCode, stop };
}

/**
 * Reads a JSON Lines file (such as the file exporter's output): one JSON value per non-blank line.
 *
 * @throws {Error} when the file cannot be read or a line is not valid JSON.
 */
export function readJsonLines(path: string): unknown[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line): unknown => JSON.parse(line));
}

/** Finds two distinct free TCP ports on loopback by binding port 0 twice at the same time. */
async function freeLoopbackPortPair(): Promise<[number, number]> {
  const servers = [createServer(), createServer()];
  try {
    const [first, second] = await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolvePort, reject) => {
            server.once('error', reject);
            server.listen(0, LOOPBACK, () => resolvePort((server.address() as AddressInfo).port));
          }),
      ),
    );
    if (first === undefined || second === undefined) {
      throw new Error('could not reserve two loopback ports');
    }
    return [first, second];
  } finally {
    await Promise.all(
      servers.map((server) => new Promise<void>((done) => (server.listening ? server.close(() => done()) : done()))),
    );
  }
}

/** Polls until `port` on loopback accepts a TCP connection; rejects if the process exits or time runs out. */
async function waitForPort(
  port: number,
  exited: Promise<[number | null, NodeJS.Signals | null]>,
  timeoutMillis: number,
): Promise<void> {
  let exitedWith: string | undefined;
  void exited.then(
    ([code, signal]) => {
      exitedWith = signal === null ? `exit status ${String(code)}` : `signal ${signal}`;
    },
    (err: unknown) => {
      exitedWith = `spawn failed: ${err instanceof Error ? err.message : String(err)}`;
    },
  );
  const deadline = Date.now() + timeoutMillis;
  while (Date.now() < deadline) {
    if (exitedWith !== undefined) {
      throw new Error(`the collector exited early (${exitedWith})`);
    }
    if (await canConnect(port)) {
      return;
    }
    await delay(100);
  }
  throw new Error(`port ${String(port)} did not accept connections within ${String(timeoutMillis)} ms`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolveConnect) => {
    const socket = createConnection({ host: LOOPBACK, port });
    socket.setTimeout(1_000);
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolveConnect(ok);
    };
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
    socket.once('timeout', () => finish(false));
  });
}

function waitForExit(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  return new Promise((resolveExit, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolveExit([code, signal]));
  });
}

/** Resolves true if `promise` settles within `millis`, false otherwise. */
async function settlesWithin(promise: Promise<unknown>, millis: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolveTimeout) => {
    timer = setTimeout(() => resolveTimeout(false), millis);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Keeps the last {@link MAX_OUTPUT_CHARS} characters of a child's stdout and stderr. */
function captureOutput(child: ChildProcess): () => string {
  let text = '';
  const append = (chunk: Buffer): void => {
    text = (text + chunk.toString('utf8')).slice(-MAX_OUTPUT_CHARS);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => text;
}

function delay(millis: number): Promise<void> {
  return new Promise((resolveDelay) => setTimeout(resolveDelay, millis));
}

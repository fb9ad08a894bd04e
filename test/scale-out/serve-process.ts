/**
 * `serve` replicas as child processes (`node dist/bin/repeated-tool-failure-guard.js serve …`), so a test can kill one
 * for real (SIGKILL) and start it again on the same port.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(REPO_ROOT, 'dist', 'cli', 'main.js');
/** Bound on a replica's start, in milliseconds. */
const READY_TIMEOUT_MILLIS = 20_000;
/** How long `stop()` waits after SIGTERM before SIGKILL, in milliseconds. */
const STOP_GRACE_MILLIS = 15_000;
const MAX_OUTPUT_CHARS = 64 * 1024;

/** Options of {@link startServeProcess}. */
export interface ServeProcessOptions {
  /** OTLP/gRPC port (fixed, so a restart can take it again). */
  readonly grpcPort: number;
  /** `service.instance.id` of the replica's own telemetry. */
  readonly instanceId: string;
  /** OTLP/HTTP base URL the replica exports its guard telemetry to. */
  readonly exportEndpoint: string;
  readonly graceMillis: number;
  /** Pass `--new-prompts-only`. */
  readonly newPromptsOnly: boolean;
  /** A file holding the bearer token every request must carry (`--bearer-token-file`). */
  readonly bearerTokenFile?: string;
}

/** A running replica. */
export interface ServeProcess {
  readonly instanceId: string;
  readonly grpcEndpoint: string;
  /** stdout and stderr so far (the last 64 KiB). */
  output(): string;
  /** SIGKILL: no flush, no goodbye. */
  kill(): Promise<void>;
  /** SIGTERM (serve flushes and exports), SIGKILL after 15 s. Resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** A free loopback port (bound and released at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => done());
  });
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((done) => child.once('exit', (code) => done(code)));
}

/**
 * Start `serve` with an OTLP/gRPC receiver on `grpcPort` (its OTLP/HTTP receiver on a free port),
 * and wait until it says it listens.
 *
 * @throws {Error} with the replica's output when it exits early or is not ready in time.
 */
export async function startServeProcess(options: ServeProcessOptions): Promise<ServeProcess> {
  const args = [
    CLI,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--grpc-port',
    String(options.grpcPort),
    '--export-endpoint',
    options.exportEndpoint,
    '--grace-millis',
    String(options.graceMillis),
    '--instance-id',
    options.instanceId,
  ];
  if (options.newPromptsOnly) args.push('--new-prompts-only');
  if (options.bearerTokenFile !== undefined) args.push('--bearer-token-file', options.bearerTokenFile);
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const append = (chunk: Buffer): void => {
    text = (text + chunk.toString('utf8')).slice(-MAX_OUTPUT_CHARS);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const done = exited(child);
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const deadline = Date.now() + READY_TIMEOUT_MILLIS;
  while (!/receiving OTLP\/gRPC on/.test(text)) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      process.removeListener('exit', killOnExit);
      throw new Error(`serve replica ${options.instanceId} did not start:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  let stopping: Promise<number | null> | undefined;
  return {
    instanceId: options.instanceId,
    grpcEndpoint: `127.0.0.1:${options.grpcPort}`,
    output: () => text,
    kill: async () => {
      child.kill('SIGKILL');
      await done;
      process.removeListener('exit', killOnExit);
    },
    stop: () => {
      stopping ??= (async () => {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MILLIS);
        try {
          return await done;
        } finally {
          clearTimeout(timer);
          process.removeListener('exit', killOnExit);
        }
      })();
      return stopping;
    },
  };
}

/**
 * `serve`: run the guard on live OTLP/HTTP until SIGINT or SIGTERM.
 */
import { startGuardServer } from '../../serve/guard-server.js';
import { loadOtlpHttpExporters } from '../../serve/otlp-http-exporters.js';
import type { GuardMode } from '../../core/failure/types.js';
import type { WireProfileName } from '../../profiles/registry.js';
import { UserError } from '../io.js';
import type { CommandIo } from '../io.js';

/** Options of {@link runServe}. */
export interface ServeCommandOptions {
  readonly port: number;
  readonly host: string;
  readonly exportEndpoint?: string;
  readonly graceMillis: number;
  readonly maxBodyBytes: number;
  readonly mode: GuardMode;
  readonly profile?: WireProfileName;
}

/** Start the server and resolve when a signal has closed it. */
export async function runServe(options: ServeCommandOptions, io: CommandIo): Promise<void> {
  // Taken first: a wrapper killed while the server starts must still be noticed.
  const parent = process.ppid;
  if (options.exportEndpoint !== undefined) {
    try {
      const u = new URL(options.exportEndpoint);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    } catch {
      throw new UserError(`--export-endpoint ${options.exportEndpoint}: expected an http(s) URL`);
    }
    try {
      await loadOtlpHttpExporters();
    } catch (err) {
      throw new UserError(`--export-endpoint: ${(err as Error).message}`);
    }
  }
  let server;
  try {
    server = await startGuardServer({ ...options, print: io.out, log: io.err });
  } catch (err) {
    throw new UserError(`cannot listen on ${options.host}:${options.port} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  io.err(
    `serve: receiving OTLP/HTTP on ${server.url} (/v1/traces, /v1/logs), profile ${options.profile ?? 'qwen-code'}, mode ${options.mode}, grace ${options.graceMillis} ms`,
  );
  io.err(
    options.exportEndpoint === undefined
      ? 'serve: guard telemetry is printed as JSON lines on stdout'
      : `serve: exporting guard telemetry to ${options.exportEndpoint}`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void server.close().then(resolve, resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // Started through a wrapper (`npx`, `npm exec`, a shell) that was killed: the wrapper does not
    // forward SIGTERM, and this process is re-parented. Stop as on SIGTERM rather than live on.
    const orphanCheck = setInterval(() => {
      if (process.ppid !== parent) {
        io.err('serve: the parent process is gone; stopping');
        clearInterval(orphanCheck);
        stop();
      }
    }, 1000);
    orphanCheck.unref();
  });
  const unjudged = Object.entries(server.unjudgedBatches()).map(([reason, n]) => `${n} ${reason.replace(/_/g, ' ')}`);
  io.err(
    `serve: stopped after ${server.decisions.length} batch decision(s); ${server.lateRecords()} late record(s); unjudged batches: ${unjudged.length === 0 ? 'none' : unjudged.join(', ')}; ${server.clockAnomalies()} span(s) ending before they start`,
  );
}

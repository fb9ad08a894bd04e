/**
 * `serve`: run the guard on live OTLP/HTTP (and OTLP/gRPC with `--grpc-port`) until SIGINT or SIGTERM.
 */
import { startGuardServer } from '../../serve/guard-server.js';
import { ListenError } from '../../serve/listen-error.js';
import { loadOtlpHttpExporters } from '../../serve/otlp-http-exporters.js';
import type { GuardMode } from '../../core/failure/types.js';
import type { WireProfileName } from '../../profiles/registry.js';
import { renderReportFromParts } from '../../report/report.js';
import type { ChartRenderer } from '../../report/charts.js';
import type { GuardServer } from '../../serve/guard-server.js';
import { UserError } from '../io.js';
import type { CommandIo } from '../io.js';
import { checkReportWritable, reportCharts, writeReportFile } from './report-file.js';

/** Options of {@link runServe}. */
export interface ServeCommandOptions {
  readonly port: number;
  readonly host: string;
  readonly exportEndpoint?: string;
  readonly graceMillis: number;
  readonly maxBodyBytes: number;
  /** Memory budget for held telemetry plus bodies being read, in bytes. */
  readonly ingestBudgetBytes?: number;
  readonly mode: GuardMode;
  /** A profile name, or `auto` (qwen-code traces and logs to `qwen-code`, other traces to `genai`). @defaultValue `'qwen-code'` */
  readonly profile?: WireProfileName | 'auto';
  /** Also receive OTLP/gRPC on this port. */
  readonly grpcPort?: number;
  /** `service.instance.id` of the guard's telemetry (default: a random UUID). */
  readonly instanceId?: string;
  /** Judge only prompts that start after the process started. */
  readonly newPromptsOnly?: boolean;
  /** Write the HTML shadow report to this file at exit and on SIGUSR2. */
  readonly report?: string;
}

/** Render the server's report now and write it; errors are printed, never thrown (serve keeps serving). */
async function writeServeReport(server: GuardServer, file: string, charts: ChartRenderer, io: CommandIo): Promise<void> {
  try {
    const parts = await server.reportParts();
    if (parts === undefined) return;
    const { html } = await renderReportFromParts(parts.result, parts.inputs, parts.ids, { charts });
    await writeReportFile(file, html, io);
  } catch (err) {
    io.err(`serve: the report was not written: ${err instanceof Error ? err.message : 'unknown error'}`);
  }
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
  if (options.grpcPort !== undefined) {
    const grpc = await import('@grpc/grpc-js').catch(() => {
      throw new UserError('--grpc-port: receiving OTLP/gRPC needs the optional package @grpc/grpc-js: npm install @grpc/grpc-js@^1.14.7');
    });
    // grpc-js prints its own errors (a failed bind as `E No address added…`) on stderr; serve says
    // what matters in its own lines. GRPC_VERBOSITY, when set, is the user's choice.
    if (process.env.GRPC_VERBOSITY === undefined) grpc.setLogVerbosity(grpc.logVerbosity.NONE);
  }
  // Fail before listening when --report cannot be honoured: the chart library, and the file.
  const charts = options.report === undefined ? undefined : await reportCharts();
  if (options.report !== undefined) await checkReportWritable(options.report);
  let server: GuardServer;
  try {
    server = await startGuardServer({ ...options, report: options.report !== undefined, print: io.out, log: io.err });
  } catch (err) {
    if (err instanceof ListenError) throw new UserError(err.message);
    throw err;
  }
  io.err(
    `serve: receiving OTLP/HTTP on ${server.url} (/v1/traces, /v1/logs), profile ${options.profile ?? 'qwen-code'}, mode ${options.mode}, grace ${options.graceMillis} ms`,
  );
  if (server.grpcAddress !== undefined) io.err(`serve: receiving OTLP/gRPC on ${server.grpcAddress} (TraceService, LogsService, MetricsService)`);
  io.err(`serve: service.instance.id ${server.instanceId}${options.newPromptsOnly === true ? '; judging only prompts that start from now on' : ''}`);
  io.err(
    options.exportEndpoint === undefined
      ? 'serve: guard telemetry is printed as JSON lines on stdout'
      : `serve: exporting guard telemetry to ${options.exportEndpoint}`,
  );
  const file = options.report;
  const onDemand = (): void => {
    if (file !== undefined && charts !== undefined) void writeServeReport(server, file, charts, io);
  };
  if (file !== undefined) {
    process.on('SIGUSR2', onDemand);
    io.err(`serve: the shadow report goes to ${file} at exit; \`kill -USR2 ${process.pid}\` writes it now`);
  }
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.off('SIGUSR2', onDemand);
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
  if (file !== undefined && charts !== undefined) await writeServeReport(server, file, charts, io);
  const unjudged = Object.entries(server.unjudgedBatches()).map(([reason, n]) => `${n} ${reason.replace(/_/g, ' ')}`);
  const unadmitted = options.newPromptsOnly === true ? `; ${server.unadmittedBatches()} batch(es) of prompts that started before it not judged` : '';
  const lost = server.telemetryExportsLost();
  const exportsLost = lost > 0 ? `; ${lost} export(s) of guard telemetry to ${options.exportEndpoint ?? ''} failed` : '';
  io.err(
    `serve: stopped after ${server.decisionCount()} batch decision(s); ${server.lateRecords()} late record(s)${server.afterJudgedRecords() > 0 ? ` (and ${server.afterJudgedRecords()} span record(s) of calls already judged)` : ''}; unjudged batches: ${unjudged.length === 0 ? 'none' : unjudged.join(', ')}; ${server.clockAnomalies()} span(s) ending before they start${unadmitted}${exportsLost}`,
  );
}

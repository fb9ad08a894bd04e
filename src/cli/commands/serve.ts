/**
 * `serve`: run the guard on live OTLP/HTTP (and OTLP/gRPC with `--grpc-port`) until SIGINT or SIGTERM.
 */
import type { UntypedFailurePolicy } from '../../core/failure/reducer.js';
import { startGuardServer } from '../../serve/guard-server.js';
import { readFile } from 'node:fs/promises';
import { ListenError } from '../../serve/listen-error.js';
import { exposureRefusal, isLoopbackHost } from '../../serve/receiver-auth.js';
import type { ReceiverTls } from '../../serve/receiver-auth.js';
import { loadOtlpHttpExporters } from '../../serve/otlp-http-exporters.js';
import type { GuardMode } from '../../core/failure/types.js';
import type { WireProfileName } from '../../profiles/registry.js';
import { describeUnreadProducers, supportedAgents } from '../../profiles/router/routing-profile.js';
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
  /** Most spans or log records one request may hold. */
  readonly maxRecordsPerRequest?: number;
  /** Most OTLP/HTTP connections open at once. */
  readonly maxConnections?: number;
  /** Most prompts judged at once (`maxOpenPrompts`). */
  readonly maxPrompts?: number;
  /** Memory budget for held telemetry plus bodies being read, in bytes. */
  readonly ingestBudgetBytes?: number;
  readonly mode: GuardMode;
  /** A profile name (read every record with it), or `auto` (each producer's records read by its own agent's profile). @defaultValue `'auto'` */
  readonly profile?: WireProfileName | 'auto';
  /** `--untyped-failures`: the design's `ineligible` (default) or the opt-in `key-by-tool`. */
  readonly untypedFailures?: UntypedFailurePolicy;
  /** Also receive OTLP/gRPC on this port. */
  readonly grpcPort?: number;
  /** `service.instance.id` of the guard's telemetry (default: a random UUID). */
  readonly instanceId?: string;
  /** Judge only prompts that start after the process started. */
  readonly newPromptsOnly?: boolean;
  /** Write the HTML shadow report to this file at exit and on SIGUSR2. */
  readonly report?: string;
  /** A file holding the bearer token every request must carry. */
  readonly bearerTokenFile?: string;
  /** PEM certificate chain and key: the receivers serve TLS. */
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
  /** PEM CAs that must have signed every client's certificate (mutual TLS). */
  readonly tlsClientCaFile?: string;
  /** Listen on a non-loopback address without a token or client certificates. */
  readonly allowUnauthenticated?: boolean;
  /**
   * Also answer Claude Code's HTTP hooks (`type: "http"`) on this port, at `/hooks/claude-code`,
   * with the guard in `mode` and the sessions' state in memory; needs `bearerTokenFile`.
   */
  readonly claudeCodeHookPort?: number;
}

/** Read one of serve's credential files; a {@link UserError} naming the option when it cannot be read. */
async function credentialFile(option: string, file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new UserError(`${option} ${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** The receivers' TLS and token from the options' files. */
async function receiverAuth(options: ServeCommandOptions): Promise<{ tls?: ReceiverTls; bearerToken?: string }> {
  let bearerToken: string | undefined;
  if (options.bearerTokenFile !== undefined) {
    bearerToken = (await credentialFile('--bearer-token-file', options.bearerTokenFile)).toString('utf8').trim();
    if (bearerToken === '' || /\s/.test(bearerToken)) throw new UserError(`--bearer-token-file ${options.bearerTokenFile}: expected one token (no spaces)`);
  }
  if ((options.tlsCertFile === undefined) !== (options.tlsKeyFile === undefined)) throw new UserError('--tls-cert-file and --tls-key-file go together');
  if (options.tlsClientCaFile !== undefined && options.tlsCertFile === undefined) throw new UserError('--tls-client-ca-file needs --tls-cert-file and --tls-key-file');
  const tls =
    options.tlsCertFile === undefined || options.tlsKeyFile === undefined
      ? undefined
      : {
          cert: await credentialFile('--tls-cert-file', options.tlsCertFile),
          key: await credentialFile('--tls-key-file', options.tlsKeyFile),
          clientCa: options.tlsClientCaFile === undefined ? undefined : await credentialFile('--tls-client-ca-file', options.tlsClientCaFile),
        };
  return { tls, bearerToken };
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
  const auth = await receiverAuth(options);
  const refusal = exposureRefusal(options.host, auth, options.allowUnauthenticated === true);
  if (refusal !== undefined) throw new UserError(refusal);
  if (options.claudeCodeHookPort !== undefined && auth.bearerToken === undefined) {
    throw new UserError('--claude-code-hook-port needs --bearer-token-file: whoever can post hook inputs can stop any session, so the hook endpoint always wants the token');
  }
  // Fail before listening when --report cannot be honoured: the chart library, and the file.
  const charts = options.report === undefined ? undefined : await reportCharts();
  if (options.report !== undefined) await checkReportWritable(options.report);
  let server: GuardServer;
  try {
    server = await startGuardServer({ ...options, ...auth, maxOpenPrompts: options.maxPrompts, report: options.report !== undefined, print: io.out, log: io.err });
  } catch (err) {
    if (err instanceof ListenError) throw new UserError(err.message);
    throw err;
  }
  io.err(
    `serve: receiving OTLP/HTTP on ${server.url} (/v1/traces, /v1/logs), profile ${options.profile ?? 'auto'}, mode ${options.mode}, grace ${options.graceMillis} ms`,
  );
  let hooks: { url: string; close(): Promise<void> } | undefined;
  if (options.claudeCodeHookPort !== undefined) {
    try {
      hooks = await startClaudeCodeHookEndpoint(server, { ...options, claudeCodeHookPort: options.claudeCodeHookPort }, auth, io);
    } catch (err) {
      await server.close();
      throw new UserError(`--claude-code-hook-port ${options.claudeCodeHookPort}: ${err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.message) : 'cannot listen'}`);
    }
    io.err(`serve: answering Claude Code HTTP hooks on ${hooks.url}, mode ${options.mode}, sessions in memory (print the settings: claude-code-hook --print-settings --http ${hooks.url})`);
  }
  if (server.grpcAddress !== undefined) io.err(`serve: receiving OTLP/gRPC${auth.tls === undefined ? '' : ' over TLS'} on ${server.grpcAddress} (TraceService, LogsService, MetricsService)`);
  if (!isLoopbackHost(options.host)) {
    if (auth.bearerToken === undefined && auth.tls?.clientCa === undefined) io.err(`serve: accepting unauthenticated clients on ${options.host} (--allow-unauthenticated)`);
    else if (auth.tls === undefined) io.err('serve: the bearer token crosses the network in clear text: add --tls-cert-file and --tls-key-file unless the network encrypts it');
  }
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
      void Promise.all([hooks?.close(), server.close()]).then(() => resolve(), resolve);
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
  const hookDecisions = hooks === undefined ? '' : `; ${server.hookDecisionCount()} Claude Code hook decision(s)`;
  io.err(
    `serve: stopped after ${server.decisionCount()} batch decision(s)${hookDecisions}; ${server.lateRecords()} late record(s)${server.afterJudgedRecords() > 0 ? ` (and ${server.afterJudgedRecords()} span record(s) of calls already judged)` : ''}; unjudged batches: ${unjudged.length === 0 ? 'none' : unjudged.join(', ')}; ${server.clockAnomalies()} span(s) ending before they start${unadmitted}${exportsLost}`,
  );
  // Per agent, and what no profile read (named by producer, never by value).
  for (const a of server.agents()) io.err(`serve:   ${a.profile}: ${a.prompts} prompt(s), ${a.batches} batch(es) judged`);
  const unread = server.unreadProducers();
  if (unread.length > 0) {
    io.err('serve: records no profile read (not judged), by producer:');
    for (const line of describeUnreadProducers(unread)) io.err(`serve:   ${line}`);
    io.err(`serve:   Supported agents: ${supportedAgents()} (docs/adding-an-agent.md).`);
  }
}

/**
 * The Claude Code HTTP hook endpoint beside the receivers: same host, token and TLS, the guard in
 * serve's `--mode`, decisions emitted with serve's guard telemetry (and appended to
 * `$RTFG_CLAUDE_CODE_DECISIONS` when set).
 */
async function startClaudeCodeHookEndpoint(
  server: GuardServer,
  options: ServeCommandOptions & { claudeCodeHookPort: number },
  auth: { tls?: ReceiverTls; bearerToken?: string },
  io: CommandIo,
): Promise<{ url: string; close(): Promise<void> }> {
  const [{ startHookHttpServer }, { CLAUDE_CODE_ENTRYPOINT_HEADER, CLAUDE_CODE_HOOK_ADAPTER, claudeCodeRouteOf }] = await Promise.all([
    import('../../hooks/hook-http-server.js'),
    import('../../hooks/claude-code/claude-code-adapter.js'),
  ]);
  const decisions = process.env.RTFG_CLAUDE_CODE_DECISIONS;
  return startHookHttpServer({
    adapter: CLAUDE_CODE_HOOK_ADAPTER,
    bearerToken: auth.bearerToken ?? '',
    host: options.host,
    port: options.claudeCodeHookPort,
    tls: auth.tls,
    mode: options.mode,
    decisionsFile: decisions === undefined || decisions === '' ? undefined : decisions,
    onDecision: (d) => server.recordHookDecision(d, 'claude-code'),
    routeOf: (req) => claudeCodeRouteOf(req.headers[CLAUDE_CODE_ENTRYPOINT_HEADER]),
    log: io.err,
  });
}

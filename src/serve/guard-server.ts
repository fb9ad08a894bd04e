/**
 * `serve`: the guard out of process. OTLP/HTTP (and, on request, OTLP/gRPC) in, the same
 * processors as in-process, the guard's own telemetry out over OTLP/HTTP (or printed as JSON lines).
 *
 * Longer than the ~350-line norm on purpose: it wires the receivers, the reorder buffer, the ingest
 * budget, the guard and its output, and their shutdown order, which must be read together; the parts
 * live beside it (`otlp-http-receiver.ts`, `otlp-grpc-receiver.ts`, `reorder-buffer.ts`,
 * `ingest-budget.ts`, `projection.ts`).
 */
import type { UntypedFailurePolicy } from '../core/failure/reducer.js';
import { randomUUID } from 'node:crypto';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { BatchLogRecordProcessor, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import type { LogRecordExporter, ReadableLogRecord, ReadWriteLogRecord } from '@opentelemetry/sdk-logs';
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace';
import type { BatchDecision } from '../engine/failure-types.js';
import { GuardTelemetry } from '../otel/guard-telemetry.js';
import { RepeatedToolFailureGuard } from '../otel/repeated-tool-failure-guard.js';
import type { GuardMode } from '../core/failure/types.js';
import type { WireProfileDefinition, WireProfileName } from '../profiles/registry.js';
import { ProducerRecognizer } from '../profiles/router/producer-recognizer.js';
import { describeUnreadProducers, supportedAgents } from '../profiles/router/routing-profile.js';
import type { UnreadProducerCount } from '../profiles/router/routing-profile.js';
import { AgentTallies } from '../replay/agent-tallies.js';
import type { AgentTally } from '../replay/agent-tallies.js';
import type { WireProfileReads } from '../profiles/wire-profile.js';
import { VERSION } from '../otel/version.js';
import type { RecordBatch } from '../otlp/records.js';
import { DEFAULT_MAX_RECORDS_PER_REQUEST } from '../otlp/request-limit.js';
import type { OtlpGrpcReceiver } from './otlp-grpc-receiver.js';
import { ExportWatch } from './export-watch.js';
import { ListenError } from './listen-error.js';
import { exposureRefusal } from './receiver-auth.js';
import type { ReceiverAuth, ReceiverTls } from './receiver-auth.js';
import { loadOtlpHttpExporters } from './otlp-http-exporters.js';
import { startOtlpHttpReceiver } from './otlp-http-receiver.js';
import type { OtlpHttpReceiver } from './otlp-http-receiver.js';
import { DEFAULT_INGEST_BUDGET_BYTES, IngestBudget } from './ingest-budget.js';
import { estimateLogBytes, estimateSpanBytes, RecordProjection } from './projection.js';
import { WIRE_PROFILES } from '../profiles/registry.js';
import { RejectionLog } from './rejection-log.js';
import { DEFAULT_MAX_FUTURE_SKEW_MILLIS, ReorderBuffer } from './reorder-buffer.js';
import { ServeReportCollector } from './report-collector.js';
import type { ReportInputsOptions } from '../profiles/report-inputs.js';
import type { ResourceView } from '../profiles/wire-profile.js';
import type { ServeReportParts } from './report-collector.js';
import type { TimedRecord } from './reorder-buffer.js';

/** Options of {@link startGuardServer}. */
export interface GuardServerOptions {
  /**
   * Address of both receivers. Any address other than a loopback one (`127.0.0.0/8`, `::1`,
   * `localhost`) needs {@link GuardServerOptions.bearerToken} or client certificates
   * (`tls.clientCa`), or {@link GuardServerOptions.allowUnauthenticated}: otherwise
   * {@link startGuardServer} rejects. @defaultValue `'127.0.0.1'`
   */
  readonly host?: string;
  /** TLS of both receivers (PEM; `clientCa` asks every client for a certificate it signed). @defaultValue none (plain HTTP and gRPC) */
  readonly tls?: ReceiverTls;
  /**
   * Every request must carry `Authorization: Bearer <token>` (gRPC: `authorization` metadata);
   * others get `401` / `UNAUTHENTICATED` before their body is read. @defaultValue none
   */
  readonly bearerToken?: string;
  /** Listen on a non-loopback address without a token or client certificates. @defaultValue `false` */
  readonly allowUnauthenticated?: boolean;
  /** `0` picks a free port. @defaultValue `4318` */
  readonly port?: number;
  /**
   * OTLP/HTTP base URL for the guard's logs and metrics; `undefined` prints JSON lines to `print`.
   * Exporting needs the optional peer packages `@opentelemetry/exporter-logs-otlp-http` and
   * `@opentelemetry/exporter-metrics-otlp-http`; without them {@link startGuardServer} rejects with
   * an error that names them.
   */
  readonly exportEndpoint?: string;
  /**
   * Hold records at least this long to reorder the span and log streams, in milliseconds; a record
   * is held up to 3 times as long while its producer's other stream has not caught up with it
   * (each producer, a session or else a Resource, is ordered on its own timeline). @defaultValue `10000`
   */
  readonly graceMillis?: number;
  /** Largest body, in bytes. @defaultValue `16777216` */
  readonly maxBodyBytes?: number;
  /** Mode label of the decisions (serve never acts). @defaultValue `'shadow'` */
  readonly mode?: GuardMode;
  /** How often due records are released, in milliseconds. @defaultValue `min(250, graceMillis / 4)` */
  readonly tickMillis?: number;
  /** Where printed telemetry goes when there is no export endpoint. @defaultValue stdout */
  readonly print?: (line: string) => void;
  /** Export interval of the guard's counters, in milliseconds. @defaultValue `10000` */
  readonly metricExportIntervalMillis?: number;
  /**
   * `auto`: every record read by the profile of the agent that produced it, told per Resource
   * (several agents may send to one server); or one built-in profile for every record.
   * @defaultValue `'auto'`
   */
  readonly profile?: WireProfileName | 'auto';
  /**
   * What a failed call with no type is: `'ineligible'` (the design's rule, `unknown`) or the opt-in
   * `'key-by-tool'` (keyed `(tool, untyped)`; see `RepeatedToolFailureGuardOptions.untypedFailures`).
   * @defaultValue `'ineligible'`
   */
  readonly untypedFailures?: UntypedFailurePolicy;
  /**
   * Where operational notes go (unjudged batches with their reason, at most one line a second
   * per reason; refused requests, at most one line per 10 s per kind; each with the count since the
   * last line; with `exportEndpoint`, one line when the guard's telemetry starts being lost and one
   * when exports succeed again). @defaultValue stderr
   */
  readonly log?: (line: string) => void;
  /**
   * Keep what the shadow report needs (decisions, emitted telemetry, usage and call fingerprints;
   * bounded), so that {@link GuardServer.reportParts} can be called. @defaultValue `false`
   */
  readonly report?: boolean;
  /** The owner and cohort attributes the report's inputs read (see `ReportInputsOptions`). */
  readonly reportInputs?: ReportInputsOptions;
  /**
   * Memory budget in bytes for telemetry held for the grace window (after the profile's compact
   * projection; estimated) plus request bodies being read. When it is reached, requests are refused
   * with `503` / `429` and `Retry-After: 1` (OTLP exporters retry them) instead of growing.
   * @defaultValue `268435456` (256 MiB)
   */
  readonly ingestBudgetBytes?: number;
  /**
   * Also receive OTLP/gRPC on this port (4317 by convention; `0` picks a free one), on `host`.
   * `@grpc/grpc-js` (an optional peer dependency) is loaded only then. @defaultValue `undefined` (OTLP/HTTP only)
   */
  readonly grpcPort?: number;
  /**
   * `service.instance.id` of the guard's own telemetry (`service.name` is
   * `repeated-tool-failure-guard`; `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_SERVICE_NAME` override).
   * @defaultValue a random UUID per start
   */
  readonly instanceId?: string;
  /**
   * Judge only prompts that start after the server started: their `qwen-code.user_prompt` record
   * arrives with an event time at or after the start, before any of their calls. A replica that
   * restarts, or takes sessions over from another, then never judges a prompt it saw only part of.
   * @defaultValue `false` (every prompt is judged)
   */
  readonly newPromptsOnly?: boolean;
  /**
   * Most recent decisions kept in {@link GuardServer.decisions} (a server runs for days: the list
   * must not grow with its traffic). With `report`, every decision is kept: the report reads them
   * all. {@link GuardServer.decisionCount} counts every decision either way. `Infinity` keeps every
   * decision; a value that is not a number of at least 1 is the default.
   * @defaultValue `10000`
   */
  readonly maxKeptDecisions?: number;
  /**
   * Most records (spans, log records) one request may hold: `413` / `RESOURCE_EXHAUSTED` beyond. A
   * JSON body may hold at most 16 values per record, counted before it is parsed. Bounds the work
   * and memory of decoding one request. @defaultValue `65536`
   */
  readonly maxRecordsPerRequest?: number;
  /**
   * Most OTLP/HTTP connections open at once; beyond it new ones are closed as they arrive, said once
   * on the log until the count falls again. Connections idle for 10 s are closed. @defaultValue `4096`
   */
  readonly maxConnections?: number;
  /**
   * Most prompts the guard tracks at once (the in-process option `maxOpenPrompts`); at the limit,
   * prompts that never opened a batch are dropped first, then the oldest. @defaultValue `10000`
   */
  readonly maxOpenPrompts?: number;
}

/** Records no profile reads are named on stderr at most once per this interval. */
const UNREAD_NOTE_INTERVAL_MILLIS = 10_000;

/** Default of {@link GuardServerOptions.maxKeptDecisions}. */
const DEFAULT_MAX_KEPT_DECISIONS = 10_000;

/** A running server. */
export interface GuardServer {
  readonly url: string;
  readonly receiver: OtlpHttpReceiver;
  /** `host:port` of the OTLP/gRPC receiver, when one was asked for. */
  readonly grpcAddress: string | undefined;
  /** `service.instance.id` of the guard's own telemetry. */
  readonly instanceId: string;
  readonly guard: RepeatedToolFailureGuard;
  /**
   * The most recent reduced batches (including `none`), oldest first: at most
   * {@link GuardServerOptions.maxKeptDecisions}, every one with `report`.
   */
  readonly decisions: BatchDecision[];
  /** Every batch reduced since the start (kept in {@link GuardServer.decisions} or not). */
  decisionCount(): number;
  /**
   * Call records dropped because they arrived behind their producer's watermark (its batch could
   * no longer be judged with them), plus records of prompts the guard had already finished.
   */
  lateRecords(): number;
  /**
   * Span records of calls whose batch was already judged on the call's terminal record (not in
   * {@link GuardServer.lateRecords}): how many depends on how the input was cut into requests.
   */
  afterJudgedRecords(): number;
  /** Batches not judged on their outcomes so far, by reason. */
  unjudgedBatches(): Readonly<Record<string, number>>;
  /** Spans received so far that end before they start (a clock step). */
  clockAnomalies(): number;
  /** Records refused so far for a time more than 10 min after their arrival (a producer's clock far ahead). */
  clockSkewedRecords(): number;
  /** Prompts and batches judged so far by each profile that read a producer, in precedence order. */
  agents(): AgentTally[];
  /** Producers whose records no profile read and none recognises now (names only), with their record counts. */
  unreadProducers(): UnreadProducerCount[];
  /** Exports of the guard's own telemetry to `exportEndpoint` that failed so far (`0` without one). */
  telemetryExportsLost(): number;
  /** The ingest budget (held and in-flight bytes, refusals); every receiver checks it. */
  readonly budget: IngestBudget;
  /**
   * Add records received some other way: projected, counted against the budget and held like
   * the receivers' records (which are projected as they are read). Check {@link IngestBudget.admit}
   * before decoding them.
   */
  ingest(records: RecordBatch): void;
  /** Records kept after projection so far (spans, logs) and records held now. */
  ingestStats(): { readonly spansKept: number; readonly logsKept: number; readonly held: number };
  /** Batches not judged because their prompt started before the server (with `newPromptsOnly`). */
  unadmittedBatches(): number;
  /** Release everything held now (judging open batches as they stand). */
  drain(): void;
  /**
   * A decision made elsewhere in this process (the Claude Code HTTP hook endpoint): emitted with
   * the guard's telemetry (counters, diagnostic log, loop event) in `profile`'s namespace, and
   * counted in {@link GuardServer.hookDecisionCount}; not in {@link GuardServer.decisions}.
   */
  recordHookDecision(decision: BatchDecision, profile: WireProfileName): void;
  /** Decisions given to {@link GuardServer.recordHookDecision} so far. */
  hookDecisionCount(): number;
  /** Stop receiving, judge what is held, flush and export. */
  close(): Promise<void>;
  /**
   * The shadow report's parts now (after `close()`: as they were when the guard had judged
   * everything). `undefined` unless the server was started with `report: true`.
   */
  reportParts(): Promise<ServeReportParts | undefined>;
}

class JsonLinesLogExporter implements LogRecordExporter {
  private readonly _print: (line: string) => void;
  constructor(print: (line: string) => void) {
    this._print = print;
  }
  export(records: ReadableLogRecord[], done: (r: ExportResult) => void): void {
    for (const r of records) this._print(JSON.stringify({ signal: 'log', eventName: r.attributes['event.name'], body: r.body, attributes: r.attributes }));
    done({ code: ExportResultCode.SUCCESS });
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

class JsonLinesMetricExporter implements PushMetricExporter {
  private readonly _print: (line: string) => void;
  constructor(print: (line: string) => void) {
    this._print = print;
  }
  export(metrics: ResourceMetrics, done: (r: ExportResult) => void): void {
    for (const sm of metrics.scopeMetrics) {
      for (const m of sm.metrics) {
        for (const dp of m.dataPoints) this._print(JSON.stringify({ signal: 'metric', name: m.descriptor.name, attributes: dp.attributes, value: dp.value }));
      }
    }
    done({ code: ExportResultCode.SUCCESS });
  }
  selectAggregationTemporality(): AggregationTemporality {
    return AggregationTemporality.CUMULATIVE;
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const CALL_LEVEL_SPANS = new Set(['qwen-code.tool', 'qwen-code.tool.execution']);
/** Call-level log events: qwen-code's `tool_call`; Claude Code's `tool_decision` and `tool_result`. */
const CALL_LEVEL_EVENTS = new Set(['qwen-code.tool_call', 'tool_decision', 'tool_result']);

/** The guard's own resource: its name, version and instance, then what the environment says. */
function guardResource(instanceId: string): Resource {
  return resourceFromAttributes({
    'service.name': 'repeated-tool-failure-guard',
    'service.version': VERSION,
    'service.instance.id': instanceId,
  }).merge(detectResources({ detectors: [envDetector] }));
}

/**
 * Start `serve`. Resolves once the receivers listen.
 *
 * @throws {ListenError} when a port cannot be bound (which receiver, the address and the system
 *   code, e.g. `EADDRINUSE`; nothing is left listening).
 */
export async function startGuardServer(options: GuardServerOptions = {}): Promise<GuardServer> {
  // Numbers are validated like the guard's options: an invalid one → its default and one note.
  const notes: string[] = [];
  const int = (name: string, value: unknown, fallback: number, min: number): number => {
    if (value === undefined) return fallback;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value;
    notes.push(`serve: ${name} must be an integer >= ${min}; using ${fallback}`);
    return fallback;
  };
  const grace = int('graceMillis', options.graceMillis, 10_000, 0);
  const metricExportIntervalMillis = int('metricExportIntervalMillis', options.metricExportIntervalMillis, 10_000, 1);
  const ingestBudgetBytes = int('ingestBudgetBytes', options.ingestBudgetBytes, DEFAULT_INGEST_BUDGET_BYTES, 1);
  const maxBodyBytes = int('maxBodyBytes', options.maxBodyBytes, 16 * 1024 * 1024, 1);
  const maxRecordsPerRequest = int('maxRecordsPerRequest', options.maxRecordsPerRequest, DEFAULT_MAX_RECORDS_PER_REQUEST, 1);
  const tickMillis = int('tickMillis', options.tickMillis, Math.max(10, Math.min(250, Math.floor(grace / 4))), 1);
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const endpoint = options.exportEndpoint?.replace(/\/+$/, '');
  const exporters = endpoint === undefined ? undefined : await loadOtlpHttpExporters();
  const reportProfile: WireProfileName = options.profile === undefined || options.profile === 'auto' ? 'qwen-code' : options.profile;
  // Under `auto`, each producer's usage is read by its own agent's profile (the router's recognizer, below).
  let reportProfileOf: ((resource: ResourceView | undefined) => WireProfileName | undefined) | undefined;
  const report =
    options.report === true
      ? new ServeReportCollector(reportProfile, (WIRE_PROFILES as Readonly<Record<string, WireProfileDefinition>>)[reportProfile]?.readReportInputs, undefined, {
          profileOf: options.profile === undefined || options.profile === 'auto' ? (r) => reportProfileOf?.(r) : undefined,
          reportInputs: options.reportInputs,
          untypedFailures: options.untypedFailures,
        })
      : undefined;
  const instanceId = options.instanceId ?? randomUUID();
  const resource = guardResource(instanceId);
  const startedAtMillis = Date.now();
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  // With an endpoint, a failed export of the guard's own telemetry is said once per outage.
  const watch = endpoint === undefined ? undefined : new ExportWatch(endpoint, log);
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [
      ...(report === undefined ? [] : [new SimpleLogRecordProcessor({ exporter: report.logExporter })]),
      exporters === undefined || watch === undefined
        ? new SimpleLogRecordProcessor({ exporter: new JsonLinesLogExporter(print) })
        : new BatchLogRecordProcessor({ exporter: watch.logExporter(new exporters.OTLPLogExporter({ url: `${endpoint}/v1/logs` })), scheduledDelayMillis: 1000 }),
    ],
  });
  const reader = new PeriodicExportingMetricReader({
    exporter:
      exporters === undefined || watch === undefined
        ? new JsonLinesMetricExporter(print)
        : watch.metricExporter(new exporters.OTLPMetricExporter({ url: `${endpoint}/v1/metrics` })),
    exportIntervalMillis: metricExportIntervalMillis,
  });
  const meterProvider = new MeterProvider({ resource, readers: [reader] });
  const profileOption = options.profile ?? 'auto';
  // Under `auto`, the projection at ingest and the guard's router share one recognizer of producers.
  const producers = profileOption === 'auto' ? new ProducerRecognizer() : undefined;
  if (producers !== undefined) reportProfileOf = (r) => producers.profileOf(r);
  const guard = new RepeatedToolFailureGuard({
    mode: options.mode ?? 'shadow',
    profile: profileOption,
    producers,
    controlHookRequired: false,
    untypedFailures: options.untypedFailures,
    maxOpenPrompts: options.maxOpenPrompts,
    promptStartRequiredFromMillis: options.newPromptsOnly === true ? startedAtMillis : undefined,
    meterProvider,
    loggerProvider,
  });
  const decisions: BatchDecision[] = [];
  let decisionCount = 0;
  const agentTallies = new AgentTallies();
  const agents = (): AgentTally[] => agentTallies.list();
  const askedKept = options.maxKeptDecisions;
  // Infinity keeps every decision; anything else that is not a number of at least 1 is the default.
  const maxKept =
    options.report === true || askedKept === Number.POSITIVE_INFINITY
      ? Number.POSITIVE_INFINITY
      : typeof askedKept === 'number' && Number.isFinite(askedKept) && askedKept >= 1
        ? Math.floor(askedKept)
        : DEFAULT_MAX_KEPT_DECISIONS;
  // Trimmed an eighth at a time (one splice), so a decision costs O(1) amortised.
  const trimBy = Number.isFinite(maxKept) ? Math.max(1, Math.floor(maxKept / 8)) : 0;
  for (const note of notes) log(note);
  const unjudged: Record<string, number> = {};
  const unjudgedNoted: Record<string, { at: number; count: number }> = {};
  guard.addListener({
    onDecision: (d) => {
      decisionCount += 1;
      agentTallies.add(guard.profileOfPrompt(d.promptId), d);
      if (decisions.length >= maxKept) decisions.splice(0, Math.min(decisions.length, Math.max(trimBy, decisions.length - maxKept + 1)));
      decisions.push(d);
    },
    onUnjudgedBatch: (_promptId, reason) => {
      unjudged[reason] = (unjudged[reason] ?? 0) + 1;
      const noted = (unjudgedNoted[reason] ??= { at: Number.NEGATIVE_INFINITY, count: 0 });
      noted.count += 1;
      const now = Date.now();
      if (now - noted.at < 1000) return;
      log(`serve: ${noted.count} batch(es) not judged: ${reason.replace(/_/g, ' ')}${reason === 'no_terminal_records' ? ' (is the logs signal exported to this server?)' : ''}`);
      noted.at = now;
      noted.count = 0;
    },
  });
  let clockAnomaliesCounted = 0;
  const countClockAnomalies = (): void => {
    const seen = buffer.clockAnomalies;
    if (seen > clockAnomaliesCounted) guard.telemetry.recordClockAnomalies(seen - clockAnomaliesCounted);
    clockAnomaliesCounted = seen;
  };
  if (report !== undefined) guard.addListener(report.listener);
  const buffer = new ReorderBuffer({ graceMillis: grace, maxHeld: 1_000_000, now: Date.now, weigh: { span: estimateSpanBytes, log: estimateLogBytes } });
  const budget = new IngestBudget({ maxBytes: ingestBudgetBytes });
  const profile = guard.options.profile;
  // The shadow report reads more than the profile (usage, call arguments): with it, records are kept whole.
  const readsOf = (name: WireProfileName): WireProfileReads | undefined =>
    (WIRE_PROFILES[name] as WireProfileDefinition).reads?.({ batchSpan: guard.options.batchSpan });
  const reads =
    report !== undefined || typeof profile !== 'string'
      ? undefined
      : profile === 'auto'
        ? producers === undefined
          ? undefined
          : { recognizer: producers, readsOf }
        : readsOf(profile);
  const projection = new RecordProjection(reads);
  const rejections = new RejectionLog(log);
  let spansKept = 0;
  let logsKept = 0;
  let lateDropped = 0;
  /** Give the guard one event. */
  const judge = (r: TimedRecord): void => {
    if (r.span !== undefined) {
      if (r.order === 1) guard.spanProcessor.onStart(r.span as unknown as Span, ROOT_CONTEXT);
      else {
        guard.spanProcessor.onEnd(r.span as unknown as ReadableSpan);
        report?.addSpan(r.span);
      }
    } else if (r.log !== undefined) {
      guard.logRecordProcessor.onEmit(r.log as unknown as ReadWriteLogRecord);
      report?.addLog(r.log);
    }
  };
  /** A held event, released: its bytes leave the budget (a span's half with each of its two events). */
  const feed = (r: TimedRecord): void => {
    budget.unhold(r.bytes);
    judge(r);
  };
  /** A late event was never held. */
  const feedLate = (r: TimedRecord): void => {
    // A call-level record behind the watermark would land in a later batch: drop it. Prompt-level
    // records (an interaction span's start, which only arrives when the prompt ends) are still useful.
    const callLevel =
      (r.span !== undefined && CALL_LEVEL_SPANS.has(r.span.name)) ||
      (r.log !== undefined && CALL_LEVEL_EVENTS.has(String(r.log.attributes['event.name'])));
    if (callLevel) lateDropped += 1;
    else judge(r);
  };
  let skewNotedAt = Number.NEGATIVE_INFINITY;
  let skewSinceNote = 0;
  /** Hold records already projected (the receivers project as they decode). */
  const hold = (records: RecordBatch): void => {
    const { late, skewed, heldBytes } = buffer.add(records.spans, records.logs);
    budget.hold(heldBytes);
    if (skewed > 0) {
      skewSinceNote += skewed;
      const now = Date.now();
      if (now - skewNotedAt >= 10_000) {
        log(`serve: refused ${skewSinceNote} record(s) stamped more than ${Math.round(DEFAULT_MAX_FUTURE_SKEW_MILLIS / 60_000)} min after they arrived (a producer's clock is ahead; its records would make its later ones late)`);
        skewNotedAt = now;
        skewSinceNote = 0;
      }
    }
    spansKept += records.spans.length;
    logsKept += records.logs.length;
    for (const r of late) feedLate(r);
    countClockAnomalies();
  };
  // Keep only what the profile reads; the rest is dropped on arrival.
  const ingest = (received: RecordBatch): void => hold(projection.project(received));
  const host = options.host ?? '127.0.0.1';
  const auth: ReceiverAuth = { tls: options.tls, bearerToken: options.bearerToken };
  const exposed = exposureRefusal(host, auth, options.allowUnauthenticated === true);
  if (exposed !== undefined) {
    await guard.shutdown();
    await Promise.all([meterProvider.shutdown(), loggerProvider.shutdown()]);
    throw new Error(exposed);
  }
  const httpPort = options.port ?? 4318;
  let receiver: OtlpHttpReceiver;
  try {
    receiver = await startOtlpHttpReceiver({
      host,
      port: httpPort,
      maxBodyBytes,
      maxRecordsPerRequest,
      budget,
      projection,
      onRecords: hold,
      onRejected: (r) => rejections.note(r.signal, r.status, r.message),
      onNotice: log,
      maxConnections: options.maxConnections,
      auth,
    });
  } catch (err) {
    await guard.shutdown();
    await Promise.all([meterProvider.shutdown(), loggerProvider.shutdown()]);
    throw new ListenError('OTLP/HTTP', host, httpPort, err);
  }
  let grpc: OtlpGrpcReceiver | undefined;
  if (options.grpcPort !== undefined) {
    try {
      const { startOtlpGrpcReceiver } = await import('./otlp-grpc-receiver.js');
      grpc = await startOtlpGrpcReceiver({
        host,
        port: options.grpcPort,
        maxMessageBytes: maxBodyBytes,
        maxRecordsPerRequest,
        budget,
        projection,
        onRecords: hold,
        onRejected: (r) => rejections.note(r.signal, r.status, r.message, r.grpcCode),
        auth,
      });
    } catch (err) {
      await receiver.close();
      await guard.shutdown();
      await Promise.all([meterProvider.shutdown(), loggerProvider.shutdown()]);
      throw new ListenError('OTLP/gRPC', host, options.grpcPort, err);
    }
  }
  // Records no profile reads: counted by signal at once, and named on stderr at most once per 10 s.
  const unreadCounted = { spans: 0, logs: 0 };
  let unreadNamed = 0;
  let unreadNotedAt = Number.NEGATIVE_INFINITY;
  const noteUnread = (force: boolean): void => {
    const { spans, logs } = guard.unreadRecords();
    guard.telemetry.recordUnreadRecords(spans - unreadCounted.spans, 'traces');
    guard.telemetry.recordUnreadRecords(logs - unreadCounted.logs, 'logs');
    unreadCounted.spans = spans;
    unreadCounted.logs = logs;
    const unread = guard.unreadProducers();
    if (spans + logs <= unreadNamed || unread.length === 0) return;
    const now = Date.now();
    if (!force && now - unreadNotedAt < UNREAD_NOTE_INTERVAL_MILLIS) return;
    log(
      `serve: ${spans + logs - unreadNamed} record(s) no profile reads (not judged), by producer: ${describeUnreadProducers(unread).join('; ')}. Supported agents: ${supportedAgents()}.`,
    );
    unreadNamed = spans + logs;
    unreadNotedAt = now;
  };
  const tick = (): void => {
    for (const r of buffer.release()) feed(r);
    noteUnread(false);
  };
  const timer = setInterval(tick, tickMillis);
  let closed: Promise<void> | undefined;
  let finalParts: ServeReportParts | undefined;
  // Records of calls already judged (not their terminal record) are counted apart: their number
  // follows how the input was cut into requests, not what was lost.
  const lateRecords = (): number => lateDropped + guard.engine.lateRecords - guard.engine.afterJudgedRecords;
  const hookTelemetry = new Map<WireProfileName, GuardTelemetry>();
  let hookDecisions = 0;
  return {
    url: receiver.url,
    receiver,
    grpcAddress: grpc?.address,
    instanceId,
    guard,
    decisions,
    decisionCount: () => decisionCount,
    lateRecords,
    afterJudgedRecords: () => guard.engine.afterJudgedRecords,
    unjudgedBatches: () => ({ ...unjudged }),
    clockAnomalies: () => buffer.clockAnomalies,
    agents,
    unreadProducers: () => guard.unreadProducers(),
    telemetryExportsLost: () => watch?.lostExports ?? 0,
    clockSkewedRecords: () => buffer.skewedRecords,
    budget,
    ingest,
    ingestStats: () => ({ spansKept, logsKept, held: buffer.size }),
    unadmittedBatches: () => guard.engine.unadmittedBatches,
    drain: () => {
      for (const r of buffer.release(true)) feed(r);
    },
    recordHookDecision: (decision, profile) => {
      hookDecisions += 1;
      let telemetry = hookTelemetry.get(profile);
      if (telemetry === undefined) {
        telemetry = new GuardTelemetry({ namespace: WIRE_PROFILES[profile].defaultNamespace, loggerProvider, meterProvider });
        hookTelemetry.set(profile, telemetry);
      }
      telemetry.onDecision(decision);
    },
    hookDecisionCount: () => hookDecisions,
    close: () => {
      closed ??= (async () => {
        clearInterval(timer);
        rejections.flush();
        await Promise.all([receiver.close(), grpc?.close()]);
        for (const r of buffer.release(true)) feed(r);
        noteUnread(true);
        await guard.shutdown();
        if (report !== undefined) finalParts = await report.parts(decisions, reader, lateRecords(), buffer.clockAnomalies, agents(), guard.unreadProducers());
        // Shutting the providers down exports what is left once (a forceFlush first would export
        // the cumulative counters twice).
        await meterProvider.shutdown();
        await loggerProvider.shutdown();
      })();
      return closed;
    },
    reportParts: async () => {
      if (report === undefined) return undefined;
      if (closed !== undefined) {
        await closed;
        return finalParts;
      }
      return report.parts(decisions, reader, lateRecords(), buffer.clockAnomalies, agents(), guard.unreadProducers());
    },
  };
}

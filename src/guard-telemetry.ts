import { metrics } from '@opentelemetry/api';
import type { Attributes, Counter, MeterProvider } from '@opentelemetry/api';
import { logs, SeverityNumber } from '@opentelemetry/api-logs';
import type { Logger, LoggerProvider } from '@opentelemetry/api-logs';
import { batchCountBucket, failureCountBucket } from './buckets.js';
import type { BatchDecision, EngineListener, EvictionReason } from './guard-engine.js';
import {
  ATTR_BATCH_COUNT_BUCKET,
  ATTR_CANDIDATE_ORDINAL,
  ATTR_DECISION,
  ATTR_EVENT_NAME,
  ATTR_EVENT_TIMESTAMP,
  ATTR_EXECUTION_ERROR_TYPE,
  ATTR_EXECUTION_STATUS,
  ATTR_FAILURE_COUNT_BUCKET,
  ATTR_LOOP_TYPE,
  ATTR_MODE,
  ATTR_PHASE_AFTER,
  ATTR_PHASE_BEFORE,
  ATTR_PROMPT_ID,
  ATTR_RESET_REASON,
  ATTR_ROUTE,
  ATTR_SESSION_ID,
  ATTR_TERMINAL_STATUS,
  ATTR_TOOL_TYPE,
  EVENT_LOOP_DETECTED,
  GUARD_EVENT_SUFFIX,
  GUARD_EVICTION_METRIC_SUFFIX,
  GUARD_METRIC_SUFFIX,
  INSTRUMENTATION_SCOPE_NAME,
  LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE,
  RUM_EXCLUDE_SUFFIX,
} from './semconv.js';
import { VERSION } from './version.js';

/** Options of {@link GuardTelemetry}. */
export interface GuardTelemetryOptions {
  /** Name prefix of the emitted event and metrics. */
  readonly namespace: string;
  /** Where counters go; the global MeterProvider (looked up at first use) when absent. */
  readonly meterProvider?: MeterProvider;
  /** Where diagnostic logs and the loop event go; the global LoggerProvider when absent. */
  readonly loggerProvider?: LoggerProvider;
}

/**
 * Metric attributes of one decision: only the design's low-cardinality labels. Never the prompt
 * id, the candidate ordinal or the execution error type (design "Telemetry and privacy").
 */
export function decisionMetricAttributes(d: BatchDecision): Attributes {
  const o = d.outcome;
  const attrs: Attributes = {
    [ATTR_ROUTE]: d.route,
    [ATTR_MODE]: d.mode,
    [ATTR_PHASE_BEFORE]: o.phaseBefore,
    [ATTR_PHASE_AFTER]: o.phaseAfter,
    [ATTR_DECISION]: o.decision,
    [ATTR_FAILURE_COUNT_BUCKET]: failureCountBucket(o.failureCount),
    [ATTR_BATCH_COUNT_BUCKET]: batchCountBucket(o.batchCount),
  };
  if (o.resetReason !== undefined) attrs[ATTR_RESET_REASON] = o.resetReason;
  if (o.candidate !== undefined) {
    attrs[ATTR_TERMINAL_STATUS] = o.candidate.terminalStatus;
    attrs[ATTR_EXECUTION_STATUS] = o.candidate.executionStatus;
    if (o.candidate.toolType !== undefined) attrs[ATTR_TOOL_TYPE] = o.candidate.toolType;
  }
  return attrs;
}

/**
 * Attributes of the diagnostic log record of one decision: the metric labels plus `prompt_id`,
 * `candidate_ordinal` and, on non-reset decisions, `execution_error_type` (wire reference §2.2).
 */
export function decisionLogAttributes(d: BatchDecision, eventName: string): Attributes {
  const o = d.outcome;
  const attrs: Attributes = {
    [ATTR_EVENT_NAME]: eventName,
    [ATTR_EVENT_TIMESTAMP]: new Date(d.decidedAtMillis).toISOString(),
    [ATTR_PROMPT_ID]: d.promptId,
    ...decisionMetricAttributes(d),
    [ATTR_CANDIDATE_ORDINAL]: o.candidateOrdinal,
  };
  if (o.candidate !== undefined) attrs[ATTR_EXECUTION_ERROR_TYPE] = o.candidate.executionErrorType;
  return attrs;
}

/**
 * Turns engine decisions into the guard's counters, one diagnostic log per transition, and the
 * terminal loop event. Decisions `none` emit nothing. Every emission is best effort: the engine
 * catches and reports what this throws, and nothing here changes a decision.
 */
export class GuardTelemetry implements EngineListener {
  private readonly _options: GuardTelemetryOptions;
  private readonly _eventName: string;
  private _counter: Counter | undefined;
  private _evictions: Counter | undefined;
  private _logger: Logger | undefined;
  private _meterProvider: MeterProvider | undefined;
  private _loggerProvider: LoggerProvider | undefined;

  constructor(options: GuardTelemetryOptions) {
    this._options = options;
    this._eventName = `${options.namespace}.${GUARD_EVENT_SUFFIX}`;
  }

  onDecision(d: BatchDecision): void {
    if (d.outcome.decision === 'none') return;
    this._ensureInstruments();
    this._counter?.add(1, decisionMetricAttributes(d));
    this._logger?.emit({
      eventName: this._eventName,
      timestamp: d.decidedAtMillis,
      severityNumber: SeverityNumber.INFO,
      severityText: 'INFO',
      body: `Repeated tool failure guard decision: ${d.outcome.decision}.`,
      attributes: decisionLogAttributes(d, this._eventName),
    });
    if (d.outcome.decision === 'stopped') {
      const attrs: Attributes = {
        [ATTR_EVENT_NAME]: EVENT_LOOP_DETECTED,
        [ATTR_EVENT_TIMESTAMP]: new Date(d.decidedAtMillis).toISOString(),
        [ATTR_LOOP_TYPE]: LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE,
        [ATTR_PROMPT_ID]: d.promptId,
        [`${this._options.namespace}.${RUM_EXCLUDE_SUFFIX}`]: true,
      };
      if (d.sessionId !== undefined) attrs[ATTR_SESSION_ID] = d.sessionId;
      this._logger?.emit({
        eventName: EVENT_LOOP_DETECTED,
        timestamp: d.decidedAtMillis,
        severityNumber: SeverityNumber.WARN,
        severityText: 'WARN',
        body: `Loop detected. Type: ${LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE}.`,
        attributes: attrs,
      });
    }
  }

  onEviction(_promptId: string, reason: EvictionReason): void {
    this._ensureInstruments();
    this._evictions?.add(1, { reason });
  }

  /** Instruments follow the global providers until a provider is passed in options (NodeSDK sets globals late). */
  private _ensureInstruments(): void {
    const mp = this._options.meterProvider ?? metrics.getMeterProvider();
    if (mp !== this._meterProvider) {
      this._meterProvider = mp;
      const meter = mp.getMeter(INSTRUMENTATION_SCOPE_NAME, VERSION);
      this._counter = meter.createCounter(`${this._options.namespace}.${GUARD_METRIC_SUFFIX}`, {
        description: 'Repeated tool failure guard decisions, one per reducer transition.',
        unit: '{transition}',
      });
      this._evictions = meter.createCounter(`${this._options.namespace}.${GUARD_EVICTION_METRIC_SUFFIX}`, {
        description:
          'Prompts whose guard state was dropped before they finished (capacity or idle expiry); an evicted prompt never enforces.',
        unit: '{prompt}',
      });
    }
    const lp = this._options.loggerProvider ?? logs.getLoggerProvider();
    if (lp !== this._loggerProvider) {
      this._loggerProvider = lp;
      this._logger = lp.getLogger(INSTRUMENTATION_SCOPE_NAME, VERSION);
    }
  }
}

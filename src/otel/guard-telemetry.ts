import { metrics } from '@opentelemetry/api';
import { outputId } from './output-id.js';
import { executionErrorTypeLabel } from '../engine/error-vocabulary.js';
import type { Attributes, Counter, MeterProvider } from '@opentelemetry/api';
import { globalLoggerProvider, SEVERITY_NUMBER_INFO, SEVERITY_NUMBER_WARN } from './global-logs.js';
import type { GuardLogger, GuardLoggerProvider } from './global-logs.js';
import { batchCountBucket, failureCountBucket } from '../core/buckets.js';
import type {
  BatchDecision,
  FailureEngineListener,
  EvictionReason,
  UnjudgedReason,
} from '../engine/failure-types.js';
import type { RepetitionDecisionRecord, RepetitionListener } from '../engine/repetition-engine.js';
import {
  GUARD_CLOCK_ANOMALY_METRIC_SUFFIX,
  GUARD_UNREAD_METRIC_SUFFIX,
  GUARD_UNJUDGED_METRIC_SUFFIX,
  ATTR_EVENT_NAME,
  ATTR_EVENT_TIMESTAMP,
  ATTR_EXECUTION_STATUS,
  ATTR_PROMPT_ID,
  ATTR_SESSION_ID,
  ATTR_TOOL_TYPE,
  EVENT_LOOP_DETECTED,
  ATTR_BATCH_COUNT_BUCKET,
  ATTR_CANDIDATE_ORDINAL,
  ATTR_DECISION,
  ATTR_EXECUTION_ERROR_TYPE,
  ATTR_FAILURE_COUNT_BUCKET,
  ATTR_LOOP_TYPE,
  ATTR_MODE,
  ATTR_PHASE_AFTER,
  ATTR_PHASE_BEFORE,
  ATTR_RESET_REASON,
  ATTR_ROUTE,
  ATTR_TERMINAL_STATUS,
  GUARD_EVENT_SUFFIX,
  GUARD_EVICTED_FILTER_RATE_METRIC_SUFFIX,
  GUARD_EVICTION_METRIC_SUFFIX,
  GUARD_METRIC_SUFFIX,
  ATTR_RUN_LENGTH_BUCKET,
  LOOP_TYPE_CONSECUTIVE_IDENTICAL_TOOL_CALLS,
  LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE,
  REPETITION_EVENT_SUFFIX,
  REPETITION_METRIC_SUFFIX,
  RUM_EXCLUDE_SUFFIX,
} from './semconv.js';
import { INSTRUMENTATION_SCOPE_NAME } from '../profiles/wire-profile.js';
import { VERSION } from './version.js';

/** Options of {@link GuardTelemetry}. */
export interface GuardTelemetryOptions {
  /** Name prefix of the emitted event and metrics. */
  readonly namespace: string;
  /** Where counters go; the global MeterProvider (looked up at first use) when absent. */
  readonly meterProvider?: MeterProvider;
  /** Where diagnostic logs and the loop event go; the global LoggerProvider when absent. */
  readonly loggerProvider?: GuardLoggerProvider;
  /**
   * The profile's closed vocabulary of execution error types: `execution_error_type` is one of
   * these or `other`. @defaultValue none (keys from the engine are trusted to be classified)
   */
  readonly executionErrorTypes?: ReadonlySet<string>;
  /**
   * Under `auto`: the agent whose profile reads a prompt, whose namespace and error-type
   * vocabulary that prompt's decisions, evictions and unjudged batches are emitted with (a Claude
   * Code prompt counts under `claude-code.*`, with Claude Code's failure classes). `undefined`
   * (or a prompt no profile reads): `namespace` and `executionErrorTypes`. Must not throw.
   */
  readonly agentOf?: (promptId: string) => TelemetryAgent | undefined;
  /**
   * The evicted-prompt filter's estimated false-positive rate now (0 to 1), observed as a gauge
   * (`<namespace>.repeated_tool_failure_guard.evicted_filter.false_positive_rate`). @defaultValue no gauge
   */
  readonly evictedFilterFalsePositiveRate?: () => number;
}

/** The names one agent's decisions are emitted with. */
export interface TelemetryAgent {
  /** Name prefix of the events and metrics (the profile's `defaultNamespace`). */
  readonly namespace: string;
  /** The profile's closed vocabulary of execution error types. */
  readonly executionErrorTypes: ReadonlySet<string>;
}

/** The counters of one namespace. */
interface Instruments {
  readonly decisions: Counter;
  readonly repetition: Counter;
  readonly evictions: Counter;
  readonly unjudged: Counter;
  readonly clockAnomalies: Counter;
  readonly unreadRecords: Counter;
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
export function decisionLogAttributes(
  d: BatchDecision,
  eventName: string,
  metricAttributes = decisionMetricAttributes(d),
  vocabulary?: ReadonlySet<string>,
): Attributes {
  const o = d.outcome;
  const attrs: Attributes = Object.assign(
    {
      [ATTR_EVENT_NAME]: eventName,
      [ATTR_EVENT_TIMESTAMP]: new Date(d.decidedAtMillis).toISOString(),
      [ATTR_PROMPT_ID]: outputId(d.promptId),
    },
    metricAttributes,
  );
  attrs[ATTR_CANDIDATE_ORDINAL] = o.candidateOrdinal;
  // A closed vocabulary: the raw value never leaves (issue 13 item 3).
  if (o.candidate !== undefined) attrs[ATTR_EXECUTION_ERROR_TYPE] = executionErrorTypeLabel(o.candidate.executionErrorType, vocabulary);
  return attrs;
}

/**
 * Metric attributes of one repetition decision: route, mode, phases, decision, run-length bucket,
 * tool type. Never the fingerprint, the tool name or the prompt id.
 */
export function repetitionMetricAttributes(r: RepetitionDecisionRecord): Attributes {
  const attrs: Attributes = {
    [ATTR_ROUTE]: r.route,
    [ATTR_MODE]: r.mode,
    [ATTR_PHASE_BEFORE]: r.outcome.phaseBefore,
    [ATTR_PHASE_AFTER]: r.outcome.phaseAfter,
    [ATTR_DECISION]: r.outcome.decision,
    [ATTR_RUN_LENGTH_BUCKET]: failureCountBucket(r.outcome.runLength),
  };
  if (r.toolType !== undefined) attrs[ATTR_TOOL_TYPE] = r.toolType;
  return attrs;
}

/**
 * Turns engine decisions into the guard's counters, one diagnostic log per transition, and the
 * terminal loop event. Decisions `none` emit nothing. Every emission is best effort: the engine
 * catches and reports what this throws, and nothing here changes a decision.
 */
export class GuardTelemetry implements FailureEngineListener, RepetitionListener {
  private readonly _options: GuardTelemetryOptions;
  private readonly _own: TelemetryAgent;
  /** Counters by namespace, from the current meter provider. */
  private readonly _instruments = new Map<string, Instruments>();
  private _logger: GuardLogger | undefined;
  private _meterProvider: MeterProvider | undefined;
  private _loggerProvider: GuardLoggerProvider | undefined;

  constructor(options: GuardTelemetryOptions) {
    this._options = options;
    this._own = { namespace: options.namespace, executionErrorTypes: options.executionErrorTypes ?? new Set() };
  }

  /** The names a prompt's telemetry goes under: its agent's under `auto`, else the guard's own. */
  private _agent(promptId: string): { agent: TelemetryAgent; vocabulary: ReadonlySet<string> | undefined } {
    const agent = this._options.agentOf?.(promptId);
    return agent === undefined ? { agent: this._own, vocabulary: this._options.executionErrorTypes } : { agent, vocabulary: agent.executionErrorTypes };
  }

  onDecision(d: BatchDecision): void {
    if (d.outcome.decision === 'none') return;
    const { agent, vocabulary } = this._agent(d.promptId);
    const eventName = `${agent.namespace}.${GUARD_EVENT_SUFFIX}`;
    const metricAttributes = decisionMetricAttributes(d);
    this._counters(agent.namespace)?.decisions.add(1, metricAttributes);
    this._logger?.emit({
      eventName,
      timestamp: d.decidedAtMillis,
      severityNumber: SEVERITY_NUMBER_INFO,
      severityText: 'INFO',
      body: `Repeated tool failure guard decision: ${d.outcome.decision}.`,
      attributes: decisionLogAttributes(d, eventName, metricAttributes, vocabulary),
    });
    if (d.outcome.decision === 'stopped') {
      // The design keeps the guard's stop out of QwenLogger/RUM: the marker lets a collector route it.
      this._emitLoop(LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE, agent.namespace, d.promptId, d.sessionId, d.decidedAtMillis, true);
    }
  }

  onRepetitionDecision(r: RepetitionDecisionRecord): void {
    const { agent } = this._agent(r.promptId);
    const attrs = repetitionMetricAttributes(r);
    this._counters(agent.namespace)?.repetition.add(1, attrs);
    const eventName = `${agent.namespace}.${REPETITION_EVENT_SUFFIX}`;
    this._logger?.emit({
      eventName,
      timestamp: r.decidedAtMillis,
      severityNumber: SEVERITY_NUMBER_INFO,
      severityText: 'INFO',
      body: `Tool call repetition guard decision: ${r.outcome.decision}.`,
      attributes: {
        [ATTR_EVENT_NAME]: eventName,
        [ATTR_EVENT_TIMESTAMP]: new Date(r.decidedAtMillis).toISOString(),
        [ATTR_PROMPT_ID]: outputId(r.promptId),
        ...attrs,
      },
    });
    if (r.outcome.decision === 'aborted') {
      this._emitLoop(LOOP_TYPE_CONSECUTIVE_IDENTICAL_TOOL_CALLS, agent.namespace, r.promptId, r.sessionId, r.decidedAtMillis, false);
    }
  }

  /** One `loop_detected` event (wire reference §2.3), optionally marked to stay out of RUM. */
  private _emitLoop(loopType: string, namespace: string, promptId: string, sessionId: string | undefined, timeMillis: number, rumExclude: boolean): void {
    const attrs: Attributes = {
      [ATTR_EVENT_NAME]: EVENT_LOOP_DETECTED,
      [ATTR_EVENT_TIMESTAMP]: new Date(timeMillis).toISOString(),
      [ATTR_LOOP_TYPE]: loopType,
      [ATTR_PROMPT_ID]: outputId(promptId),
    };
    if (rumExclude) attrs[`${namespace}.${RUM_EXCLUDE_SUFFIX}`] = true;
    if (sessionId !== undefined) attrs[ATTR_SESSION_ID] = outputId(sessionId);
    this._logger?.emit({
      eventName: EVENT_LOOP_DETECTED,
      timestamp: timeMillis,
      severityNumber: SEVERITY_NUMBER_WARN,
      severityText: 'WARN',
      body: `Loop detected. Type: ${loopType}.`,
      attributes: attrs,
    });
  }

  onEviction(promptId: string, reason: EvictionReason): void {
    this._counters(this._agent(promptId).agent.namespace)?.evictions.add(1, { reason });
  }

  onUnjudgedBatch(promptId: string, reason: UnjudgedReason): void {
    this._counters(this._agent(promptId).agent.namespace)?.unjudged.add(1, { reason });
  }

  /** Count spans that ended before they started (seen out of process; the SDK clamps them in process). */
  recordClockAnomalies(count: number): void {
    if (count <= 0) return;
    this._counters(this._own.namespace)?.clockAnomalies.add(count);
  }

  /**
   * Count received records no profile reads (`serve`), by `signal` (`traces` or `logs`: a closed
   * vocabulary). Their producers' names go to stderr, never to telemetry.
   */
  recordUnreadRecords(count: number, signal: 'traces' | 'logs'): void {
    if (count <= 0) return;
    this._counters(this._own.namespace)?.unreadRecords.add(count, { signal });
  }

  /**
   * The counters of a namespace. Instruments follow the global providers until a provider is
   * passed in options (NodeSDK sets globals late); the logger too.
   */
  /** The gauge of the evicted-prompt filter's rate, one per guard (under the configured namespace). */
  private _observeFilterRate(mp: MeterProvider): void {
    const rate = this._options.evictedFilterFalsePositiveRate;
    if (rate === undefined) return;
    mp.getMeter(INSTRUMENTATION_SCOPE_NAME, VERSION)
      .createObservableGauge(`${this._options.namespace}.${GUARD_EVICTED_FILTER_RATE_METRIC_SUFFIX}`, {
        description:
          'Estimated share of new prompts the evicted-prompt filter would take for evicted ones (never tracked: a miss, never a false stop); bounded by the filter aging.',
        unit: '1',
      })
      .addCallback((result) => {
        try {
          result.observe(rate());
        } catch {
          // a metric callback never throws into the SDK
        }
      });
  }

  private _counters(namespace: string): Instruments | undefined {
    const mp = this._options.meterProvider ?? metrics.getMeterProvider();
    if (mp !== this._meterProvider) {
      this._meterProvider = mp;
      this._instruments.clear();
      this._observeFilterRate(mp);
    }
    const lp = this._options.loggerProvider ?? globalLoggerProvider();
    if (lp !== this._loggerProvider) {
      this._loggerProvider = lp;
      this._logger = lp?.getLogger(INSTRUMENTATION_SCOPE_NAME, VERSION);
    }
    let instruments = this._instruments.get(namespace);
    if (instruments === undefined) {
      const meter = mp.getMeter(INSTRUMENTATION_SCOPE_NAME, VERSION);
      instruments = {
        decisions: meter.createCounter(`${namespace}.${GUARD_METRIC_SUFFIX}`, {
          description: 'Repeated tool failure guard decisions, one per reducer transition.',
          unit: '{transition}',
        }),
        repetition: meter.createCounter(`${namespace}.${REPETITION_METRIC_SUFFIX}`, {
          description: 'Identical tool-call repetition guard decisions: warn, abort, and the end of a warned run.',
          unit: '{transition}',
        }),
        evictions: meter.createCounter(`${namespace}.${GUARD_EVICTION_METRIC_SUFFIX}`, {
          description:
            'Prompts whose guard state was dropped before they finished (capacity or idle expiry); an evicted prompt never enforces.',
          unit: '{prompt}',
        }),
        unjudged: meter.createCounter(`${namespace}.${GUARD_UNJUDGED_METRIC_SUFFIX}`, {
          description:
            'Batches not judged on their outcomes, by reason: a final batch that ended the turn first, or a batch with no terminal record of any call (a missing logs signal).',
          unit: '{batch}',
        }),
        clockAnomalies: meter.createCounter(`${namespace}.${GUARD_CLOCK_ANOMALY_METRIC_SUFFIX}`, {
          description: 'Received spans that end before they start (a clock step); judged by their terminal records.',
          unit: '{span}',
        }),
        unreadRecords: meter.createCounter(`${namespace}.${GUARD_UNREAD_METRIC_SUFFIX}`, {
          description: 'Received spans and log records no profile reads (their producer is no supported agent), by signal; they are not judged.',
          unit: '{record}',
        }),
      };
      // Bounded: the guard's own namespace and one per built-in profile.
      this._instruments.set(namespace, instruments);
    }
    return instruments;
  }
}

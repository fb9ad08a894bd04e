import { diag } from '@opentelemetry/api';
import { BindOnceFuture, globalErrorHandler } from '@opentelemetry/core';
import { validateOptions } from './config.js';
import { flushGuardDiagnostics, hasHeldGuardDiagnostics, reportGuardDiagnostics, UNREAD_TELEMETRY_WARNING_CODE } from './diagnostics.js';
import type { RepeatedToolFailureGuardOptions, ResolvedGuardOptions } from './config.js';
import { GuardControl } from './guard-control.js';
import { FailureEngine } from '../engine/failure-engine.js';
import type { FailureEngineListener } from '../engine/failure-types.js';
import { GuardTelemetry } from './guard-telemetry.js';
import type { TelemetryAgent } from './guard-telemetry.js';
import { ALL_EXECUTION_ERROR_TYPES, WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileDefinition } from '../profiles/registry.js';
import { describeUnreadProducers, RoutingProfile, supportedAgents } from '../profiles/router/routing-profile.js';
import type { UnreadProducerCount } from '../profiles/router/routing-profile.js';
import { RepetitionEngine } from '../engine/repetition-engine.js';
import type { RepetitionListener } from '../engine/repetition-engine.js';
import { RepeatedToolFailureGuardLogRecordProcessor } from './repeated-tool-failure-guard-log-record-processor.js';
import { RepeatedToolFailureGuardSpanProcessor } from './repeated-tool-failure-guard-span-processor.js';
import { INSTRUMENTATION_SCOPE_NAME } from '../profiles/wire-profile.js';
import type { GuardMode } from '../core/failure/types.js';
import { UNTYPED_EXECUTION_ERROR_TYPE } from '../core/failure/reducer.js';
import type { TelemetrySink } from './telemetry-sink.js';
import type { LogRecordView, SpanView, WireProfile } from '../profiles/wire-profile.js';

/** Unread records after which the in-process guard says, once, that telemetry goes unread. */
const UNREAD_DIAGNOSTIC_AFTER = 64;
/** Producers the diagnostic names; the rest are counted (each name is bounded, their number too). */
const UNREAD_PRODUCERS_NAMED = 5;

/**
 * One guard: a span processor, a log-record processor and a control hook sharing one engine.
 *
 * @example
 * ```ts
 * const guard = createRepeatedToolFailureGuard({ mode: 'shadow' });
 * const sdk = new NodeSDK({
 *   spanProcessors: [guard.spanProcessor, new BatchSpanProcessor({ exporter: traceExporter })], // @opentelemetry/sdk-trace
 *   logRecordProcessors: [guard.logRecordProcessor, new BatchLogRecordProcessor({ exporter: logExporter })],
 * });
 * ```
 */
export class RepeatedToolFailureGuard implements TelemetrySink {
  /** Register with the tracer provider. */
  readonly spanProcessor: RepeatedToolFailureGuardSpanProcessor;
  /** Register with the logger provider. */
  readonly logRecordProcessor: RepeatedToolFailureGuardLogRecordProcessor;
  /** The Session-side hook for `warn` and `enforce`. */
  readonly control: GuardControl;
  /** The engine (for replay, serve and tests). */
  readonly engine: FailureEngine;
  /** The identical tool-call repetition breaker. */
  readonly repetition: RepetitionEngine;
  /** The guard's own counters, diagnostic logs and loop event. */
  readonly telemetry: GuardTelemetry;
  /** The resolved options. */
  readonly options: ResolvedGuardOptions;
  private readonly _profile: WireProfile;
  private readonly _shutdownOnce: BindOnceFuture<void>;
  private readonly _timer: ReturnType<typeof setInterval> | undefined;
  private readonly _active: boolean;
  private _unreadRecords = 0;
  private _unreadWarned = false;

  /**
   * @param options - see {@link RepeatedToolFailureGuardOptions}. Nothing throws: every invalid
   *   value (or `options` that is not an object) falls back to its default with one diagnostic,
   *   shown through `diag.warn` or, when no diag logger is installed, as a Node process warning.
   */
  constructor(options?: RepeatedToolFailureGuardOptions) {
    const validated = validateOptions(options);
    const diagnostics = [...validated.diagnostics];
    this.options = validated.options;
    const o = this.options;
    this._active = o.mode !== 'off' || o.repetitionMode !== 'off';
    // A factory profile declares no vocabulary: every execution error type it reports is emitted as `other`.
    // `auto` routes to every built-in profile: their vocabularies together (each closed).
    // The opt-in key of untyped failures is emitted as its own value, `untyped`.
    const vocabulary: ReadonlySet<string> = new Set([
      ...(o.profile === 'auto' ? ALL_EXECUTION_ERROR_TYPES : typeof o.profile === 'string' ? WIRE_PROFILES[o.profile].executionErrorTypes : []),
      ...(o.untypedFailures === 'key-by-tool' ? [UNTYPED_EXECUTION_ERROR_TYPE] : []),
    ]);
    this.engine = new FailureEngine({
      mode: o.mode,
      offMessageTypes: o.offMessageTypes,
      maxOpenPrompts: o.maxOpenPrompts,
      maxCallsPerBatch: o.maxCallsPerBatch,
      promptIdleMillis: o.promptIdleMillis,
      evictedPromptFilterBytes: o.evictedPromptFilterBytes,
      maxHeldBytes: o.maxHeldBytes,
      executionErrorTypes: vocabulary,
      controlHookRequired: o.controlHookRequired,
      untypedFailures: o.untypedFailures,
      promptStartRequiredFromMillis: o.promptStartRequiredFromMillis,
      now: o.clock,
      reportError: (err) => globalErrorHandler(err as Error),
    });
    this.repetition = new RepetitionEngine({
      mode: o.repetitionMode,
      config: o.repetition,
      maxSessions: o.maxOpenPrompts,
      sessionIdleMillis: o.promptIdleMillis,
      telemetryCanAct: !o.controlHookRequired,
      now: o.clock,
      reportError: (err) => globalErrorHandler(err as Error),
    });
    const telemetry = new GuardTelemetry({
      namespace: o.namespace,
      meterProvider: o.meterProvider,
      loggerProvider: o.loggerProvider,
      executionErrorTypes: vocabulary,
      // Under `auto` each prompt's telemetry carries its own agent's names, unless a namespace was given.
      ...(o.profile === 'auto' && !o.namespaceGiven ? { agentOf: (promptId: string) => agentTelemetry(this.profileOfPrompt(promptId)) } : {}),
      evictedFilterFalsePositiveRate: () => this.engine.evictedFilterFalsePositiveRate,
    });
    this.telemetry = telemetry;
    this.engine.addListener(telemetry);
    this.repetition.addListener(telemetry);
    const terminal = typeof o.profile === 'string' && o.profile !== 'auto' ? WIRE_PROFILES[o.profile].terminalRecord : undefined;
    let warned = false;
    this.engine.addListener({
      onUnjudgedBatch: (_promptId, reason) => {
        if (reason !== 'no_terminal_records' || warned) return;
        warned = true;
        diag.warn(
          `RepeatedToolFailureGuard: a tool batch closed with no terminal record of any call${terminal === undefined ? '' : ` (${terminal.description})`}; its failures cannot be judged. Is the ${terminal?.signal === 'traces' ? 'span' : 'log-record'} processor registered and the ${terminal?.signal ?? 'logs'} signal exported?`,
        );
      },
    });
    this._profile = this._createProfile(diagnostics);
    reportGuardDiagnostics(diagnostics);
    this._shutdownOnce = new BindOnceFuture(this._shutdown, this);
    this.spanProcessor = new RepeatedToolFailureGuardSpanProcessor(this);
    this.logRecordProcessor = new RepeatedToolFailureGuardLogRecordProcessor(this);
    this.control = new GuardControl(this.engine, this.repetition, () => this._shutdownOnce.isCalled);
    if (this._active && o.sweepIntervalMillis > 0) {
      this._timer = setInterval(() => this.sweep(), o.sweepIntervalMillis);
      this._timer.unref?.();
    }
  }

  /** The profile from the options; one that cannot be built falls back to `qwen-code` with a diagnostic. */
  private _createProfile(diagnostics: string[]): WireProfile {
    const o = this.options;
    try {
      const profile =
        typeof o.profile === 'function'
          ? o.profile(this.engine, this.repetition)
          : o.profile === 'auto'
            ? new RoutingProfile(this.engine, this.repetition, {
                batchSpan: o.batchSpan,
                recognizer: o.producers,
                // A shared recognizer's owner (serve, replay) names unread telemetry itself.
                ...(o.producers === undefined ? { onUnread: () => this._onUnread() } : {}),
              })
            : WIRE_PROFILES[o.profile].create(this.engine, this.repetition, { batchSpan: o.batchSpan });
      const valid =
        typeof profile === 'object' &&
        profile !== null &&
        typeof profile.onSpanStart === 'function' &&
        typeof profile.onSpanEnd === 'function' &&
        typeof profile.onLogRecord === 'function';
      if (valid) return profile;
    } catch {
      // reported below
    }
    diagnostics.push('profile could not be created; using qwen-code');
    return WIRE_PROFILES['qwen-code'].create(this.engine, this.repetition);
  }

  /**
   * The profile that reads a prompt the engine holds: under `auto`, the profile of the prompt's
   * producer (`undefined` when the prompt is not held); otherwise the one profile's name.
   */
  profileOfPrompt(promptId: string): string | undefined {
    return this._profile instanceof RoutingProfile ? this._profile.profileOfPrompt(promptId) : this._profile.name;
  }

  /**
   * Under `auto`: producers whose records no profile read and that none recognises now, named by
   * `service.name` and scope names (never values), with their record counts. Empty otherwise.
   */
  unreadProducers(): UnreadProducerCount[] {
    return this._profile instanceof RoutingProfile ? this._profile.unreadProducers() : [];
  }

  /** Under `auto`: every record no profile read so far, by signal (zeros otherwise). */
  unreadRecords(): { readonly spans: number; readonly logs: number } {
    return this._profile instanceof RoutingProfile ? this._profile.unreadRecords : { spans: 0, logs: 0 };
  }

  /**
   * One diagnostic for telemetry no profile reads, once a producer stays unrecognised for
   * {@link UNREAD_DIAGNOSTIC_AFTER} records (its first records may precede the ones that name it),
   * or at shutdown. Only in process: with a shared recognizer (`producers`), its owner says it.
   */
  private _onUnread(): void {
    if (this._unreadWarned || ++this._unreadRecords < UNREAD_DIAGNOSTIC_AFTER) return;
    this._warnUnread();
  }

  private _warnUnread(): void {
    if (this.options.producers !== undefined) return;
    const unread = this.unreadProducers();
    if (this._unreadWarned) return;
    if (unread.length === 0) {
      // Its producers recognised since: look again after as many unread records, not at each one.
      this._unreadRecords = 0;
      return;
    }
    this._unreadWarned = true;
    const named = describeUnreadProducers(unread.slice(0, UNREAD_PRODUCERS_NAMED));
    const more = unread.length > UNREAD_PRODUCERS_NAMED ? ` and ${unread.length - UNREAD_PRODUCERS_NAMED} more producer(s)` : '';
    reportGuardDiagnostics(
      [`telemetry no profile reads (not judged): ${named.join('; ')}${more}. Supported agents: ${supportedAgents()}.`],
      UNREAD_TELEMETRY_WARNING_CODE,
    );
  }

  /** The process-wide mode in force. */
  get mode(): GuardMode {
    return this.options.mode;
  }

  /** Add a listener for every reduced batch and every reported repetition decision (replay, serve). */
  addListener(listener: FailureEngineListener & RepetitionListener): void {
    this.engine.addListener(listener);
    this.repetition.addListener(listener);
  }

  /** Evict idle prompts now, after letting the profile end what it held for time to pass. Never throws. */
  sweep(): void {
    try {
      this._profile.sweep?.();
      this.engine.sweep();
      this.repetition.sweep();
    } catch (err) {
      globalErrorHandler(err as Error);
    }
  }

  /**
   * End every prompt still held, reducing its last batch (replay calls this at the end of its
   * input). Never throws.
   */
  finishAll(): void {
    try {
      this.engine.finishAll();
    } catch (err) {
      globalErrorHandler(err as Error);
    }
  }

  /** Nothing is buffered; resolves at once (after shutdown, with the shutdown promise). */
  forceFlush(): Promise<void> {
    if (this._shutdownOnce.isCalled) return this._shutdownOnce.promise;
    return Promise.resolve();
  }

  /** Stop the sweep timer, reduce what is held, stop accepting telemetry. Idempotent. */
  shutdown(): Promise<void> {
    return this._shutdownOnce.call();
  }

  /** {@link TelemetrySink}: called by the processors. Never throws. */
  onSpanStart(span: SpanView): void {
    if (hasHeldGuardDiagnostics()) flushGuardDiagnostics();
    if (!this._active || this._shutdownOnce.isCalled) return;
    try {
      this._profile.onSpanStart(span);
    } catch (err) {
      globalErrorHandler(err as Error);
    }
  }

  /** {@link TelemetrySink}: called by the processors. Never throws. */
  onSpanEnd(span: SpanView): void {
    if (hasHeldGuardDiagnostics()) flushGuardDiagnostics();
    if (!this._active || this._shutdownOnce.isCalled) return;
    try {
      this._profile.onSpanEnd(span);
    } catch (err) {
      globalErrorHandler(err as Error);
    }
  }

  /** {@link TelemetrySink}: called by the processors. Never throws. */
  onLogRecord(record: LogRecordView): void {
    if (hasHeldGuardDiagnostics()) flushGuardDiagnostics();
    if (!this._active || this._shutdownOnce.isCalled) return;
    try {
      if (record.instrumentationScope?.name === INSTRUMENTATION_SCOPE_NAME) return;
      this._profile.onLogRecord(record);
    } catch (err) {
      globalErrorHandler(err as Error);
    }
  }

  private _shutdown(): Promise<void> {
    this._warnUnread();
    flushGuardDiagnostics();
    if (this._timer !== undefined) clearInterval(this._timer);
    this.finishAll();
    return Promise.resolve();
  }
}

/**
 * Create a guard. Shorthand for `new RepeatedToolFailureGuard(options)`.
 *
 * @returns `{ spanProcessor, logRecordProcessor, control, ... }`; nothing throws
 */
export function createRepeatedToolFailureGuard(options?: RepeatedToolFailureGuardOptions): RepeatedToolFailureGuard {
  return new RepeatedToolFailureGuard(options);
}

/** Each built-in profile's telemetry names (its namespace and error-type vocabulary). */
const AGENT_TELEMETRY: ReadonlyMap<string, TelemetryAgent> = new Map(
  Object.entries(WIRE_PROFILES).map(([name, d]: [string, WireProfileDefinition]) => [
    name,
    { namespace: d.defaultNamespace, executionErrorTypes: new Set(d.executionErrorTypes) },
  ]),
);

/** The telemetry names of a built-in profile (`undefined`: none, or not a built-in). */
function agentTelemetry(profile: string | undefined): TelemetryAgent | undefined {
  return profile === undefined ? undefined : AGENT_TELEMETRY.get(profile);
}

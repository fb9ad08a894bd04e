/**
 * Options of {@link createRepeatedToolFailureGuard}, their defaults, and their resolution.
 */
import { diag } from '@opentelemetry/api';
import type { MeterProvider } from '@opentelemetry/api';
import type { LoggerProvider } from '@opentelemetry/api-logs';
import { resolveGuardModeFromEnv } from '../profiles/qwen-code/mode-sources.js';
import { resolveRepetitionConfig } from '../core/repetition/config.js';
import type { RepetitionConfig } from '../core/repetition/config.js';
import type { BatchSpanProfileOptions } from '../profiles/batch-span/batch-span-profile.js';
import { DEFAULT_NAMESPACE } from './semconv.js';
import type { GuardMode } from '../core/failure/types.js';
import type { WireProfileFactory } from '../profiles/wire-profile.js';
import { WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileName } from '../profiles/registry.js';


/** Options of the guard. Every field is optional. */
export interface RepeatedToolFailureGuardOptions {
  /**
   * Guard mode for every prompt. When absent it is resolved from
   * `QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD` in {@link RepeatedToolFailureGuardOptions.env}
   * (missing or invalid → `shadow`; see `resolveGuardMode`).
   */
  readonly mode?: GuardMode;
  /** Environment read when `mode` is absent. @defaultValue `process.env` */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * How telemetry becomes batches: `qwen-code` (the real 0.24.4 wire), `batch-span` (the design's
   * `runToolCalls` span), or a factory for another agent. @defaultValue `'qwen-code'`
   */
  readonly profile?: WireProfileName | WireProfileFactory;
  /** Options of the `batch-span` profile. */
  readonly batchSpan?: BatchSpanProfileOptions;
  /**
   * Prefix of emitted event and metric names. @defaultValue the profile's own prefix (`'qwen-code'`
   * for `qwen-code` and `batch-span`: the in-tree names; a factory profile: `'qwen-code'`)
   */
  readonly namespace?: string;
  /** MeterProvider for the guard's counters. @defaultValue the global MeterProvider */
  readonly meterProvider?: MeterProvider;
  /** LoggerProvider for the guard's diagnostic logs and loop event. @defaultValue the global LoggerProvider */
  readonly loggerProvider?: LoggerProvider;
  /** `qwen-code.message_type` values whose prompts are forced `off`. @defaultValue `['cron']` (design: cron routes stay off) */
  readonly offMessageTypes?: readonly string[];
  /** Prompts held at once; the least recently created is evicted beyond it. Minimum `1`. @defaultValue `10000` */
  readonly maxOpenPrompts?: number;
  /** Calls held per batch; a larger batch is reduced as `incomplete`. Minimum `1`. @defaultValue `1024` */
  readonly maxCallsPerBatch?: number;
  /**
   * A prompt with no telemetry for this long is evicted (4x as long while a call is still running),
   * in milliseconds. Minimum `1000`. @defaultValue `7200000` (2 h)
   */
  readonly promptIdleMillis?: number;
  /** How often idle prompts are swept, in milliseconds; `0` disables the timer. @defaultValue `60000` */
  readonly sweepIntervalMillis?: number;
  /** Clock in milliseconds since the epoch (replay passes a virtual clock). @defaultValue `Date.now` */
  readonly clock?: () => number;
  /**
   * Whether `warn` and `enforce` need the Session's {@link GuardControl.afterToolBatch} call for
   * each batch (a batch without it counts as an unreliable drain). `false` decides every batch at
   * close with an assumed reliable, empty drain: for out-of-process analysis (`replay`, `serve`).
   * @defaultValue `true`
   */
  readonly controlHookRequired?: boolean;
  /**
   * The identical tool-call repetition breaker (second guard). `mode` defaults to the failure
   * guard's mode; thresholds default to `{ enabled: true, warn: 3, abort: 5, windowSize: 0 }`
   * (the seed PR); `abort <= warn` is clamped to `warn + 1`.
   */
  readonly repetition?: Partial<RepetitionConfig> & { readonly mode?: GuardMode };
}

/** Resolved options. */
export interface ResolvedGuardOptions {
  readonly mode: GuardMode;
  readonly profile: WireProfileName | WireProfileFactory;
  readonly batchSpan: BatchSpanProfileOptions;
  readonly namespace: string;
  readonly meterProvider: MeterProvider | undefined;
  readonly loggerProvider: LoggerProvider | undefined;
  readonly offMessageTypes: readonly string[];
  readonly maxOpenPrompts: number;
  readonly maxCallsPerBatch: number;
  readonly promptIdleMillis: number;
  readonly sweepIntervalMillis: number;
  readonly clock: () => number;
  readonly controlHookRequired: boolean;
  readonly repetitionMode: GuardMode;
  readonly repetition: RepetitionConfig;
}

/** Defaults of the numeric and list options. */
export const DEFAULT_OPTIONS = {
  profile: 'qwen-code',
  namespace: DEFAULT_NAMESPACE,
  offMessageTypes: ['cron'],
  maxOpenPrompts: 10_000,
  maxCallsPerBatch: 1_024,
  promptIdleMillis: 7_200_000,
  sweepIntervalMillis: 60_000,
} as const satisfies Partial<ResolvedGuardOptions>;

function clampInt(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || Math.floor(value) !== value || value < min) {
    diag.warn(`RepeatedToolFailureGuard: ${name} must be an integer >= ${min}, using ${fallback}`);
    return fallback;
  }
  return value;
}

/**
 * Apply defaults. Invalid numbers are replaced by their default with one `diag.warn`; nothing
 * throws. An invalid mode from the environment is reported through `diag.warn` too.
 */
export function resolveOptions(options: RepeatedToolFailureGuardOptions = {}): ResolvedGuardOptions {
  let mode = options.mode;
  if (mode === undefined) {
    const resolved = resolveGuardModeFromEnv(options.env ?? process.env);
    for (const d of resolved.diagnostics) diag.warn(`RepeatedToolFailureGuard: ${d}`);
    mode = resolved.mode;
  }
  const { mode: repetitionMode, ...repetitionInput } = options.repetition ?? {};
  const repetition = resolveRepetitionConfig(repetitionInput);
  for (const issue of repetition.issues) diag.warn(`RepeatedToolFailureGuard: repetition ${issue}`);
  const profile = options.profile ?? DEFAULT_OPTIONS.profile;
  const namespace = options.namespace?.trim()
    ? options.namespace.trim()
    : typeof profile === 'string'
      ? WIRE_PROFILES[profile].defaultNamespace
      : DEFAULT_OPTIONS.namespace;
  return {
    mode,
    profile,
    batchSpan: options.batchSpan ?? {},
    namespace,
    meterProvider: options.meterProvider,
    loggerProvider: options.loggerProvider,
    offMessageTypes: options.offMessageTypes ?? DEFAULT_OPTIONS.offMessageTypes,
    maxOpenPrompts: clampInt('maxOpenPrompts', options.maxOpenPrompts, DEFAULT_OPTIONS.maxOpenPrompts, 1),
    maxCallsPerBatch: clampInt('maxCallsPerBatch', options.maxCallsPerBatch, DEFAULT_OPTIONS.maxCallsPerBatch, 1),
    promptIdleMillis: clampInt('promptIdleMillis', options.promptIdleMillis, DEFAULT_OPTIONS.promptIdleMillis, 1000),
    sweepIntervalMillis: clampInt('sweepIntervalMillis', options.sweepIntervalMillis, DEFAULT_OPTIONS.sweepIntervalMillis, 0),
    clock: options.clock ?? Date.now,
    controlHookRequired: options.controlHookRequired ?? true,
    repetitionMode: repetitionMode ?? mode,
    repetition: repetition.config,
  };
}

/**
 * Options of {@link createRepeatedToolFailureGuard}, their defaults, and their resolution.
 */
import type { MeterProvider } from '@opentelemetry/api';
import type { GuardLoggerProvider } from './global-logs.js';
import { GUARD_MODE_VARIABLES, resolveGuardModeFromEnv } from '../profiles/qwen-code/mode-sources.js';
import { DEFAULT_GUARD_MODE, parseGuardMode } from '../core/mode.js';
import { DEFAULT_EVICTED_PROMPT_FILTER_BYTES, DEFAULT_MAX_HELD_BYTES } from '../engine/failure-types.js';
import { reportGuardDiagnostics } from './diagnostics.js';
import { resolveRepetitionConfig } from '../core/repetition/config.js';
import type { RepetitionConfig } from '../core/repetition/config.js';
import type { BatchSpanProfileOptions } from '../profiles/batch-span/batch-span-profile.js';
import { DEFAULT_NAMESPACE } from './semconv.js';
import type { GuardMode } from '../core/failure/types.js';
import { UNTYPED_FAILURE_POLICIES } from '../core/failure/reducer.js';
import type { UntypedFailurePolicy } from '../core/failure/reducer.js';
import type { WireProfileFactory } from '../profiles/wire-profile.js';
import { ProducerRecognizer } from '../profiles/router/producer-recognizer.js';
import { isWireProfileName, WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileName } from '../profiles/registry.js';

/** Options of the guard. Every field is optional. */
export interface RepeatedToolFailureGuardOptions {
  /**
   * Guard mode for every prompt, parsed like the environment variable (case-insensitive, trimmed:
   * `'ENFORCE'` is `enforce`); an invalid value gives `shadow` and a diagnostic. When absent it is
   * resolved from `QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD`, else the agent-neutral
   * `REPEATED_TOOL_FAILURE_GUARD_MODE`, in {@link RepeatedToolFailureGuardOptions.env} (missing or
   * invalid → `shadow`; see `resolveGuardMode`).
   */
  readonly mode?: GuardMode | (string & Record<never, never>);
  /** Environment read when `mode` is absent. @defaultValue `process.env` */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * How telemetry becomes batches: `auto` (every record read by the profile of the agent that
   * produced it, told per Resource from the producer's names; docs/adding-an-agent.md), one
   * built-in profile for every record (`qwen-code`, `batch-span`, `claude-code`, `genai`), or a
   * factory for another agent. @defaultValue `'auto'`
   */
  readonly profile?: WireProfileName | 'auto' | WireProfileFactory;
  /**
   * With `profile: 'auto'`: what tells each producer's (each Resource's) profile, when it is
   * shared with another reader of the same records (`serve`'s projection at ingest) or knows the
   * producers beforehand (`replay`: `new ProducerRecognizer({ producerProfile })`).
   * @defaultValue a new `ProducerRecognizer`: every producer recognised from its records
   */
  readonly producers?: ProducerRecognizer;
  /** Options of the `batch-span` profile. */
  readonly batchSpan?: BatchSpanProfileOptions;
  /**
   * Prefix of emitted event and metric names. @defaultValue the profile's own prefix (`'qwen-code'`
   * for `qwen-code` and `batch-span`: the in-tree names; a factory profile: `'qwen-code'`); under
   * `auto`, each prompt's telemetry carries the prefix of the profile that reads it (`claude-code`,
   * `gemini-cli`, `agent` for the GenAI conventions…), and what belongs to no agent `'qwen-code'`
   */
  readonly namespace?: string;
  /** MeterProvider for the guard's counters. @defaultValue the global MeterProvider */
  readonly meterProvider?: MeterProvider;
  /** LoggerProvider for the guard's diagnostic logs and loop event. @defaultValue the global LoggerProvider */
  readonly loggerProvider?: GuardLoggerProvider;
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
  /**
   * Bytes of the filter that remembers evicted prompt ids for good, so an evicted prompt is never
   * tracked again (allocated on the first eviction). Its false positives (about 1% after 875,000
   * evictions at the default) make a new prompt untracked: a miss, never a wrong action. Minimum
   * `64`. @defaultValue `1048576` (1 MiB)
   */
  readonly evictedPromptFilterBytes?: number;
  /**
   * Most bytes the prompt state may hold, estimated (1 KiB a prompt, 256 bytes a call held, 96
   * bytes a judged call id remembered); beyond it the oldest prompts are evicted (`capacity`), so
   * the guard's memory is bounded in bytes whatever the batch sizes. Minimum `65536`.
   * @defaultValue `268435456` (256 MiB)
   */
  readonly maxHeldBytes?: number;
  /** How often idle prompts are swept, in milliseconds; `0` disables the timer. @defaultValue `60000` */
  readonly sweepIntervalMillis?: number;
  /**
   * Clock in milliseconds since the epoch (replay passes a virtual clock). A reading that is not a
   * finite number (or a clock that throws) is replaced by `Date.now()`, with one diagnostic.
   * @defaultValue `Date.now`
   */
  readonly clock?: () => number;
  /**
   * Whether `warn` and `enforce` need the Session's {@link GuardControl.afterToolBatch} call for
   * each batch (a batch without it counts as an unreliable drain). `false` decides every batch at
   * close with an assumed reliable, empty drain: for out-of-process analysis (`replay`, `serve`).
   * @defaultValue `true`
   */
  readonly controlHookRequired?: boolean;
  /**
   * Judge only prompts whose start record (qwen-code: `qwen-code.user_prompt`) arrives with an
   * event time at or after this time, in milliseconds since the epoch, before any of their calls.
   * For out-of-process replicas (`serve --new-prompts-only` passes its own start time): a process
   * that starts mid-prompt never judges a prompt it saw only part of. Profiles without a start
   * record then judge nothing. @defaultValue `undefined` (every prompt is judged)
   */
  readonly promptStartRequiredFromMillis?: number;
  /**
   * What a failed call with no type at all is (status error, no `error.type`, no exception type:
   * OpenAI Agents under OpenLLMetry or OpenInference). `'ineligible'` is the design's rule: such a
   * failure is `unknown`, resets the candidate and disables enforcement for the prompt, so the
   * guard never fires for a producer that never types its failures (the summary and report count
   * them). `'key-by-tool'` is an explicit opt-in: every untyped failure of a tool is the key
   * `(tool, untyped)`, so two different failures of one tool count as one streak (the report's
   * policy what-if shows what this would do on your telemetry first). Emitted as the execution error
   * type `untyped`. @defaultValue `'ineligible'`
   */
  readonly untypedFailures?: UntypedFailurePolicy;
  /**
   * The identical tool-call repetition breaker (second guard). `mode` defaults to the failure
   * guard's mode; thresholds default to `{ enabled: true, warn: 3, abort: 5, windowSize: 0 }`
   * (the seed PR); `abort <= warn` is clamped to `warn + 1`.
   */
  readonly repetition?: Partial<RepetitionConfig> & { readonly mode?: GuardMode | (string & Record<never, never>) };
}

/** Resolved options. */
export interface ResolvedGuardOptions {
  readonly mode: GuardMode;
  readonly profile: WireProfileName | 'auto' | WireProfileFactory;
  readonly producers: ProducerRecognizer | undefined;
  readonly batchSpan: BatchSpanProfileOptions;
  readonly namespace: string;
  /** Whether `namespace` was given (under `auto`, a given namespace holds for every agent's telemetry). */
  readonly namespaceGiven: boolean;
  readonly meterProvider: MeterProvider | undefined;
  readonly loggerProvider: GuardLoggerProvider | undefined;
  readonly offMessageTypes: readonly string[];
  readonly maxOpenPrompts: number;
  readonly maxCallsPerBatch: number;
  readonly promptIdleMillis: number;
  readonly evictedPromptFilterBytes: number;
  readonly maxHeldBytes: number;
  readonly sweepIntervalMillis: number;
  readonly clock: () => number;
  readonly controlHookRequired: boolean;
  readonly promptStartRequiredFromMillis: number | undefined;
  readonly untypedFailures: UntypedFailurePolicy;
  readonly repetitionMode: GuardMode;
  readonly repetition: RepetitionConfig;
}

/** Defaults of the numeric and list options. */
export const DEFAULT_OPTIONS = {
  mode: DEFAULT_GUARD_MODE,
  profile: 'auto',
  namespace: DEFAULT_NAMESPACE,
  offMessageTypes: ['cron'],
  maxOpenPrompts: 10_000,
  maxCallsPerBatch: 1_024,
  promptIdleMillis: 7_200_000,
  evictedPromptFilterBytes: DEFAULT_EVICTED_PROMPT_FILTER_BYTES,
  maxHeldBytes: DEFAULT_MAX_HELD_BYTES,
  sweepIntervalMillis: 60_000,
  controlHookRequired: true,
  untypedFailures: 'ineligible',
} as const satisfies Partial<ResolvedGuardOptions>;

/** Result of {@link validateOptions}: usable options, and one diagnostic per invalid input. */
export interface ValidatedGuardOptions {
  readonly options: ResolvedGuardOptions;
  /** Operator messages, e.g. `mode must be one of off, shadow, warn, enforce; using shadow`. Never echo a value. */
  readonly diagnostics: readonly string[];
}

/** Instrument names: ASCII, a letter first (OpenTelemetry instrument name syntax), at most 63 characters as a prefix. */
const NAMESPACE_SHAPE = /^[A-Za-z][A-Za-z0-9_.\-/]{0,62}$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Read a property without letting a throwing getter or proxy escape. */
function prop(o: Record<string, unknown>, key: string, issues: string[]): unknown {
  try {
    return o[key];
  } catch {
    issues.push(`${key} could not be read; using its default`);
    return undefined;
  }
}

function intOption(issues: string[], name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    issues.push(`${name} must be an integer >= ${min}; using ${fallback}`);
    return fallback;
  }
  return value;
}

function modeOption(issues: string[], name: string, value: unknown, fallback: GuardMode): GuardMode {
  const mode = typeof value === 'string' ? parseGuardMode(value) : undefined;
  if (mode !== undefined) return mode;
  issues.push(`${name} must be one of off, shadow, warn, enforce (any case); using ${fallback}`);
  return fallback;
}

/** A clock whose non-finite readings (and throws) are replaced by `Date.now()`, reported once. */
function safeClock(clock: () => number, report: (message: string) => void): () => number {
  let reported = false;
  return () => {
    let v: unknown;
    try {
      v = clock();
    } catch {
      v = undefined;
    }
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (!reported) {
      reported = true;
      report('clock returned a value that is not a finite number; using Date.now() for such readings');
    }
    return Date.now();
  };
}

/**
 * Validate every option in one pass. Pure apart from reading `process.env` when `env` is absent:
 * nothing is logged and nothing throws. An invalid value (wrong type, out of range, unknown name)
 * is replaced by its default and described by one diagnostic; `options` that is not an object
 * (`null`, a string) counts as no options, with a diagnostic.
 *
 * @param options - anything; normally a {@link RepeatedToolFailureGuardOptions}
 * @param report - where a later problem (a clock reading that is not a number) is reported
 */
export function validateOptions(
  options: unknown,
  report: (message: string) => void = (m) => reportGuardDiagnostics([m]),
): ValidatedGuardOptions {
  const issues: string[] = [];
  let o: Record<string, unknown> = {};
  if (isRecord(options)) o = options;
  else if (options !== undefined) issues.push('options must be an object; using the defaults');
  const get = (key: string): unknown => prop(o, key, issues);

  // mode: one parser for every source
  let mode: GuardMode;
  const rawMode = get('mode');
  if (rawMode !== undefined) mode = modeOption(issues, 'mode', rawMode, DEFAULT_GUARD_MODE);
  else {
    const rawEnv = get('env');
    const values: Record<string, string | undefined> = {};
    if (rawEnv !== undefined && !isRecord(rawEnv)) issues.push('env must be an object of strings; using process.env');
    for (const name of GUARD_MODE_VARIABLES) {
      if (!isRecord(rawEnv)) values[name] = process.env[name];
      else {
        const v = prop(rawEnv, name, issues);
        if (typeof v === 'string' || v === undefined) values[name] = v;
        else issues.push(`env.${name} must be a string; ignored`);
      }
    }
    const resolved = resolveGuardModeFromEnv(values);
    issues.push(...resolved.diagnostics);
    mode = resolved.mode;
  }

  // repetition: an object of numbers and a mode
  const rawRepetition = get('repetition');
  let repetitionInput: Record<string, unknown> = {};
  if (isRecord(rawRepetition)) repetitionInput = { ...rawRepetition };
  else if (rawRepetition !== undefined) issues.push('repetition must be an object; using its defaults');
  const { mode: rawRepetitionMode, ...repetitionRest } = repetitionInput;
  const repetitionMode = rawRepetitionMode === undefined ? mode : modeOption(issues, 'repetition.mode', rawRepetitionMode, mode);
  const repetition = resolveRepetitionConfig(repetitionRest as Partial<RepetitionConfig>);
  for (const issue of repetition.issues) issues.push(`repetition: ${issue}`);

  // profile: a built-in name or a factory
  const rawProfile = get('profile');
  let profile: WireProfileName | 'auto' | WireProfileFactory = DEFAULT_OPTIONS.profile;
  if (typeof rawProfile === 'function') profile = rawProfile as WireProfileFactory;
  else if (rawProfile === 'auto' || isWireProfileName(rawProfile)) profile = rawProfile;
  else if (rawProfile !== undefined) {
    issues.push(`profile must be one of auto, ${Object.keys(WIRE_PROFILES).join(', ')} or a factory function; using ${DEFAULT_OPTIONS.profile}`);
  }
  const rawProducers = get('producers');
  let producers: ProducerRecognizer | undefined;
  if (rawProducers instanceof ProducerRecognizer) producers = rawProducers;
  else if (rawProducers !== undefined) issues.push('producers must be a ProducerRecognizer; recognising every producer from its records');

  const rawBatchSpan = get('batchSpan');
  let batchSpan: BatchSpanProfileOptions = {};
  if (isRecord(rawBatchSpan)) batchSpan = rawBatchSpan as BatchSpanProfileOptions;
  else if (rawBatchSpan !== undefined) issues.push('batchSpan must be an object; using its defaults');

  // namespace: a prefix of instrument and event names
  const profileNamespace = typeof profile === 'string' && profile !== 'auto' ? WIRE_PROFILES[profile].defaultNamespace : DEFAULT_OPTIONS.namespace;
  const rawNamespace = get('namespace');
  let namespace: string = profileNamespace;
  if (typeof rawNamespace === 'string' && NAMESPACE_SHAPE.test(rawNamespace.trim())) namespace = rawNamespace.trim();
  else if (rawNamespace !== undefined) {
    issues.push(`namespace must be a name of letters, digits, '.', '_', '-' or '/' starting with a letter; using ${profileNamespace}`);
  }

  const rawMeterProvider = get('meterProvider');
  let meterProvider: MeterProvider | undefined;
  if (isRecord(rawMeterProvider) && typeof rawMeterProvider.getMeter === 'function') meterProvider = rawMeterProvider as unknown as MeterProvider;
  else if (rawMeterProvider !== undefined) issues.push('meterProvider must be a MeterProvider; using the global one');
  const rawLoggerProvider = get('loggerProvider');
  let loggerProvider: GuardLoggerProvider | undefined;
  if (isRecord(rawLoggerProvider) && typeof rawLoggerProvider.getLogger === 'function') loggerProvider = rawLoggerProvider as unknown as GuardLoggerProvider;
  else if (rawLoggerProvider !== undefined) issues.push('loggerProvider must be a LoggerProvider; using the global one');

  // offMessageTypes: a list of exact values (a string would otherwise match substrings)
  const rawOff = get('offMessageTypes');
  let offMessageTypes: readonly string[] = DEFAULT_OPTIONS.offMessageTypes;
  if (Array.isArray(rawOff) && rawOff.every((v) => typeof v === 'string')) offMessageTypes = Object.freeze([...(rawOff as string[])]);
  else if (rawOff !== undefined) issues.push(`offMessageTypes must be an array of strings; using ['${DEFAULT_OPTIONS.offMessageTypes.join("', '")}']`);

  const rawClock = get('clock');
  let clock: () => number = Date.now;
  if (typeof rawClock === 'function') clock = safeClock(rawClock as () => number, report);
  else if (rawClock !== undefined) issues.push('clock must be a function returning milliseconds; using Date.now');

  const rawHook = get('controlHookRequired');
  let controlHookRequired: boolean = DEFAULT_OPTIONS.controlHookRequired;
  if (typeof rawHook === 'boolean') controlHookRequired = rawHook;
  else if (rawHook !== undefined) issues.push(`controlHookRequired must be a boolean; using ${String(DEFAULT_OPTIONS.controlHookRequired)}`);

  const rawStart = get('promptStartRequiredFromMillis');
  let promptStartRequiredFromMillis: number | undefined;
  if (typeof rawStart === 'number' && Number.isFinite(rawStart)) promptStartRequiredFromMillis = rawStart;
  else if (rawStart !== undefined) issues.push('promptStartRequiredFromMillis must be a finite number of milliseconds; judging every prompt');

  const rawUntyped = get('untypedFailures');
  let untypedFailures: UntypedFailurePolicy = DEFAULT_OPTIONS.untypedFailures;
  if (typeof rawUntyped === 'string' && (UNTYPED_FAILURE_POLICIES as readonly string[]).includes(rawUntyped)) untypedFailures = rawUntyped as UntypedFailurePolicy;
  else if (rawUntyped !== undefined) issues.push(`untypedFailures must be one of ${UNTYPED_FAILURE_POLICIES.join(', ')}; using ${DEFAULT_OPTIONS.untypedFailures}`);

  const resolved: ResolvedGuardOptions = {
    mode,
    profile,
    producers,
    batchSpan,
    namespace,
    namespaceGiven: typeof rawNamespace === 'string' && NAMESPACE_SHAPE.test(rawNamespace.trim()),
    meterProvider,
    loggerProvider,
    offMessageTypes,
    maxOpenPrompts: intOption(issues, 'maxOpenPrompts', get('maxOpenPrompts'), DEFAULT_OPTIONS.maxOpenPrompts, 1),
    maxCallsPerBatch: intOption(issues, 'maxCallsPerBatch', get('maxCallsPerBatch'), DEFAULT_OPTIONS.maxCallsPerBatch, 1),
    promptIdleMillis: intOption(issues, 'promptIdleMillis', get('promptIdleMillis'), DEFAULT_OPTIONS.promptIdleMillis, 1000),
    evictedPromptFilterBytes: intOption(issues, 'evictedPromptFilterBytes', get('evictedPromptFilterBytes'), DEFAULT_OPTIONS.evictedPromptFilterBytes, 64),
    maxHeldBytes: intOption(issues, 'maxHeldBytes', get('maxHeldBytes'), DEFAULT_OPTIONS.maxHeldBytes, 65_536),
    sweepIntervalMillis: intOption(issues, 'sweepIntervalMillis', get('sweepIntervalMillis'), DEFAULT_OPTIONS.sweepIntervalMillis, 0),
    clock,
    controlHookRequired,
    promptStartRequiredFromMillis,
    untypedFailures,
    repetitionMode,
    repetition: repetition.config,
  };
  return { options: resolved, diagnostics: issues };
}

/**
 * Apply defaults. Invalid values are replaced by their default with one diagnostic each (see
 * {@link validateOptions}); diagnostics go to `diag.warn`, or, when no diag logger is installed
 * yet, are held and shown once one is (else as a Node process warning). Never throws.
 */
export function resolveOptions(options?: RepeatedToolFailureGuardOptions): ResolvedGuardOptions {
  const { options: resolved, diagnostics } = validateOptions(options);
  reportGuardDiagnostics(diagnostics);
  return resolved;
}

/**
 * Pure core of the identical tool-call repetition breaker.
 *
 * Catches a model that re-emits a byte-identical tool call every turn and succeeds each time
 * (a loop the failure guard never sees, because nothing fails). Source: the seed PR
 * "generic tool-call repetition breaker" (billion-context-pi #311/#314, issue #308).
 *
 * This module reads no clock, no randomness and no crypto: fingerprints arrive on the event as
 * opaque strings (see `argumentsFingerprint` in `canonical-json.ts`).
 *
 * @packageDocumentation
 */

/**
 * How the guard acts on what it detects.
 *
 * - `'off'`: inert; every event yields decision `'none'` and the same state object.
 * - `'shadow'`: counts and reports `'would_warn'` / `'would_abort'`; never acts.
 * - `'warn'`: appends {@link REPETITION_WARNING_TEXT}; never blocks.
 * - `'enforce'`: warns, then blocks the call and stops the turn.
 */
export type RepetitionMode = 'off' | 'shadow' | 'warn' | 'enforce';

/**
 * Thresholds of the repetition breaker. Resolve user input with {@link resolveRepetitionConfig};
 * {@link reduceRepetition} assumes a resolved config.
 */
export type RepetitionConfig = {
  /**
   * Master switch; `false` makes the guard inert, like mode `'off'`.
   * @defaultValue true
   */
  readonly enabled: boolean;
  /**
   * Run length (in calls) at which the warning is emitted.
   * Minimum: `1`. @defaultValue 3
   */
  readonly warn: number;
  /**
   * Run length (in calls) at which the call is blocked and the turn stopped (mode `'enforce'`).
   * Always greater than `warn`. @defaultValue 5
   */
  readonly abort: number;
  /**
   * Counting window, in calls.
   *
   * - `0` (default): strict consecutive run: the run length is the number of identical calls in
   *   a row, and any other call restarts it at 1. Misses A-B-A-B alternation.
   * - `N > 0`: the run length of a call is the number of occurrences of its fingerprint among the
   *   last `N` calls (this one included), so A-B-A-B alternation is caught. Trade-off: legitimate
   *   polling (re-reading a status until it changes) or alternating reads of two files can trip
   *   it where strict mode would not. An A-B alternation reaches at most `ceil(N / 2)`, so
   *   catching it at `abort` needs `N >= 2 * abort - 1`.
   *
   * Minimum: `0`; a value between `1` and `abort - 1` could never reach `abort` and is raised to
   * `abort` by {@link resolveRepetitionConfig}. Memory: one fingerprint string per window slot.
   * @defaultValue 0
   */
  readonly windowSize: number;
};

/**
 * Defaults; source: the seed PR (`repetitionGuard: { enabled: true, warn: 3, abort: 5 }`,
 * strict consecutive counting).
 */
export const DEFAULT_REPETITION_CONFIG: RepetitionConfig = Object.freeze({
  enabled: true,
  warn: 3,
  abort: 5,
  windowSize: 0,
});

/** Result of {@link resolveRepetitionConfig}. */
export type ResolvedRepetitionConfig = {
  /** The config to use; always valid. */
  readonly config: RepetitionConfig;
  /** One human-readable line per value that was replaced or clamped; empty when none. */
  readonly issues: string[];
};

/**
 * Applies defaults and clamps invalid values; never throws.
 *
 * Rules, in order:
 * - `enabled` not a boolean: issue, default.
 * - `warn` not an integer, or `< 1`: issue, default (`3`).
 * - `abort` not an integer: issue, default (`5`); then `abort <= warn`: issue, `abort = warn + 1`
 *   (the seed's clamp).
 * - `windowSize` not an integer: issue, `0`; `< 0`: issue, `0`; between `1` and `abort - 1`:
 *   issue, raised to `abort`.
 *
 * A missing (`undefined`) field takes its default silently.
 *
 * @param input - Partial, unvalidated config (e.g. from a JSON file).
 * @returns The resolved config and the list of issues.
 *
 * @example
 * ```ts
 * resolveRepetitionConfig({ warn: 4, abort: 2 });
 * // => { config: { enabled: true, warn: 4, abort: 5, windowSize: 0 }, issues: ['…'] }
 * ```
 */
export function resolveRepetitionConfig(
  input: Partial<RepetitionConfig>,
): ResolvedRepetitionConfig {
  const issues: string[] = [];
  const defaults = DEFAULT_REPETITION_CONFIG;

  let enabled = defaults.enabled;
  if (input.enabled !== undefined) {
    if (typeof input.enabled === 'boolean') enabled = input.enabled;
    else issues.push(`RepetitionConfig: enabled must be a boolean; using ${String(defaults.enabled)}`);
  }

  let warn = defaults.warn;
  if (input.warn !== undefined) {
    if (!Number.isInteger(input.warn)) {
      issues.push(`RepetitionConfig: warn must be an integer, got ${String(input.warn)}; using ${defaults.warn}`);
    } else if (input.warn < 1) {
      issues.push(`RepetitionConfig: warn must be >= 1, got ${input.warn}; using ${defaults.warn}`);
    } else {
      warn = input.warn;
    }
  }

  let abort = defaults.abort;
  if (input.abort !== undefined) {
    if (Number.isInteger(input.abort)) abort = input.abort;
    else issues.push(`RepetitionConfig: abort must be an integer, got ${String(input.abort)}; using ${defaults.abort}`);
  }
  if (abort <= warn) {
    issues.push(`RepetitionConfig: abort (${abort}) must be greater than warn (${warn}); using ${warn + 1}`);
    abort = warn + 1;
  }

  let windowSize = defaults.windowSize;
  if (input.windowSize !== undefined) {
    if (!Number.isInteger(input.windowSize)) {
      issues.push(`RepetitionConfig: windowSize must be an integer, got ${String(input.windowSize)}; using 0`);
    } else if (input.windowSize < 0) {
      issues.push(`RepetitionConfig: windowSize must be >= 0, got ${input.windowSize}; using 0`);
    } else if (input.windowSize > 0 && input.windowSize < abort) {
      issues.push(`RepetitionConfig: windowSize (${input.windowSize}) is below abort (${abort}) and could never abort; using ${abort}`);
      windowSize = abort;
    } else {
      windowSize = input.windowSize;
    }
  }

  return { config: { enabled, warn, abort, windowSize }, issues };
}

/** No tool call seen since the last user prompt (or ever). */
export type RepetitionIdleState = { readonly status: 'idle' };

/**
 * Fields shared by the non-idle states.
 * @see {@link RepetitionTrackingState}
 */
export type RepetitionCounters = {
  /** Fingerprint of the most recent counted tool call. */
  readonly fingerprint: string;
  /**
   * Run length of the most recent counted call, in calls: consecutive identical calls
   * (`windowSize` 0) or occurrences within the window (`windowSize` > 0). Minimum `1`.
   */
  readonly runLength: number;
  /**
   * The last `windowSize` fingerprints, oldest first, the most recent included. Always empty
   * when `windowSize` is `0`.
   */
  readonly recent: readonly string[];
};

/** Counting; the current run length is below `warn`. */
export type RepetitionTrackingState = RepetitionCounters & { readonly status: 'tracking' };

/** Counting; the current run length has reached `warn` (and, in mode `'warn'`, maybe `abort`). */
export type RepetitionWarnedState = RepetitionCounters & { readonly status: 'warned' };

/**
 * Absorbing until the next user prompt: the run reached `abort` in mode `'enforce'` or
 * `'shadow'`. Tool calls are no longer counted and nothing more is emitted for this prompt
 * (the turn has been stopped once; stopping it again is the shell's business). Counters are
 * frozen at their values when the abort fired.
 */
export type RepetitionLatchedState = RepetitionCounters & { readonly status: 'latched' };

/** Per-prompt state of the repetition breaker, discriminated on `status`. */
export type RepetitionState =
  | RepetitionIdleState
  | RepetitionTrackingState
  | RepetitionWarnedState
  | RepetitionLatchedState;

/**
 * Phase of the guard, mirroring the failure guard: `idle | tracking | warned | latched`.
 * It is the `status` of {@link RepetitionState}.
 */
export type RepetitionPhase = RepetitionState['status'];

/** The state before any event; also the state after a user prompt. */
export const INITIAL_REPETITION_STATE: RepetitionIdleState = Object.freeze({ status: 'idle' });

/**
 * A completed (or attempted) tool call of the agent.
 */
export type RepetitionToolCallEvent = {
  readonly type: 'tool_call';
  /** Opaque fingerprint of tool name + arguments (see `argumentsFingerprint`). */
  readonly fingerprint: string;
  /** Tool origin, carried for telemetry; it does not affect counting. */
  readonly toolType?: 'native' | 'mcp';
};

/** A new real user prompt: resets the guard to idle. */
export type RepetitionUserPromptEvent = { readonly type: 'user_prompt' };

/**
 * A message injected by the agent's own extensions (nudges, reminders). Does not reset the run;
 * the reducer returns the same state object.
 */
export type RepetitionInjectedMessageEvent = { readonly type: 'injected_message' };

/** Input of {@link reduceRepetition}, discriminated on `type`. */
export type RepetitionEvent =
  | RepetitionToolCallEvent
  | RepetitionUserPromptEvent
  | RepetitionInjectedMessageEvent;

/**
 * What an event amounted to.
 *
 * - `'none'`: nothing happened (guard inert, latched, or an event that does not count).
 * - `'reset'`: a user prompt cleared a non-idle state, or a tool call's run length is `1` while
 *   the previous call's was `>= 2` (an argument change or tool switch broke a repetition).
 * - `'tracked'`: a tool call was counted with no threshold crossed.
 * - `'would_warn'` / `'would_abort'`: mode `'shadow'` equivalents of `'warned'` / `'aborted'`.
 * - `'warned'`: run length reached `warn` (modes `'warn'`, `'enforce'`), or `abort` in mode `'warn'`.
 * - `'aborted'`: run length reached `abort` in mode `'enforce'`.
 */
export type RepetitionDecision =
  | 'none'
  | 'reset'
  | 'tracked'
  | 'would_warn'
  | 'warned'
  | 'would_abort'
  | 'aborted';

/** No action for the shell. */
export type RepetitionNoAction = { readonly type: 'none' };

/** Append `text` to the tool result the model will read; the call itself still runs. */
export type RepetitionWarnAction = { readonly type: 'warn'; readonly text: string };

/** Do not execute the call, give the model `text` instead, and stop the current turn. */
export type RepetitionBlockAction = { readonly type: 'block'; readonly text: string };

/** Effect for the shell to execute, discriminated on `type`; plain data. */
export type RepetitionAction = RepetitionNoAction | RepetitionWarnAction | RepetitionBlockAction;

/** Second element of the {@link reduceRepetition} result. */
export type RepetitionOutcome = {
  readonly decision: RepetitionDecision;
  readonly phaseBefore: RepetitionPhase;
  readonly phaseAfter: RepetitionPhase;
  /**
   * Run length after the event, in calls: of the counted call for `tool_call`; `0` after a
   * reset by user prompt; otherwise the state's current value (`0` when idle).
   */
  readonly runLength: number;
  readonly action: RepetitionAction;
};

/**
 * Warning appended to the tool result at `warn`. Fixed text: carries no tool name or arguments.
 */
export const REPETITION_WARNING_TEXT =
  'System: you have issued this identical tool call repeatedly and it is not making progress. ' +
  'Stop issuing it: change the arguments or the approach, or stop and explain the blocker.';

/**
 * Text given to the model instead of the blocked call's result at `abort` (mode `'enforce'`).
 * Fixed text: carries no tool name or arguments.
 */
export const REPETITION_ABORT_TEXT =
  'System: this identical tool call was blocked and not executed because it was repeated too ' +
  'many times; the turn has been stopped. Do not issue it again. Explain the blocker or take a ' +
  'different approach.';

const NO_ACTION: RepetitionNoAction = Object.freeze({ type: 'none' });
const WARN_ACTION: RepetitionWarnAction = Object.freeze({ type: 'warn', text: REPETITION_WARNING_TEXT });
const BLOCK_ACTION: RepetitionBlockAction = Object.freeze({ type: 'block', text: REPETITION_ABORT_TEXT });
const EMPTY_RECENT: readonly string[] = Object.freeze([]);

/**
 * Advances the repetition breaker by one event. Pure: reads no clock, randomness or I/O, never
 * mutates its inputs, never throws.
 *
 * `tool_call` (mode not `'off'`, `config.enabled`, state not latched) computes the call's run
 * length `n` (see {@link RepetitionConfig.windowSize}) and decides, first match wins:
 *
 * 1. `n >= abort`: `'enforce'` → `'aborted'`, block action, latched; `'shadow'` → `'would_abort'`,
 *    latched; `'warn'` → `'warned'` with the warning again when `n === abort`, else `'tracked'`,
 *    staying warned (mode `'warn'` never blocks).
 * 2. `n === warn`: `'warned'` + warn action (`'warn'`, `'enforce'`) or `'would_warn'` (`'shadow'`).
 * 3. `n === 1` and the previous call's run length was `>= 2`: `'reset'`.
 * 4. otherwise `'tracked'`.
 *
 * The phase after a counted call is `warned` when `n >= warn`, else `tracking` (so a reset
 * returns to tracking). In latched state a tool call returns the same state and `'none'`.
 * `user_prompt` returns to idle (`'reset'`; from idle: `'none'` and the same state object).
 * `injected_message` returns the same state object and `'none'`. Mode `'off'` or
 * `enabled: false`: `'none'` and the same state object for every event.
 *
 * @param state - Current state; start from {@link INITIAL_REPETITION_STATE}.
 * @param event - The event.
 * @param mode - The guard mode.
 * @param config - A resolved config (see {@link resolveRepetitionConfig}).
 * @returns `[nextState, outcome]`; `nextState` is `state` itself when nothing changed.
 *
 * @example
 * ```ts
 * let state: RepetitionState = INITIAL_REPETITION_STATE;
 * const [next, outcome] = reduceRepetition(
 *   state, { type: 'tool_call', fingerprint }, 'enforce', DEFAULT_REPETITION_CONFIG);
 * if (outcome.action.type === 'block') { … }
 * state = next;
 * ```
 */
export function reduceRepetition(
  state: RepetitionState,
  event: RepetitionEvent,
  mode: RepetitionMode,
  config: RepetitionConfig,
): readonly [RepetitionState, RepetitionOutcome] {
  if (mode === 'off' || !config.enabled) return unchanged(state);
  switch (event.type) {
    case 'tool_call':
      return reduceToolCall(state, event.fingerprint, mode, config);
    case 'user_prompt':
      if (state.status === 'idle') return unchanged(state);
      return [
        INITIAL_REPETITION_STATE,
        { decision: 'reset', phaseBefore: state.status, phaseAfter: 'idle', runLength: 0, action: NO_ACTION },
      ];
    case 'injected_message':
      return unchanged(state);
    default: {
      const _exhaustive: never = event;
      return unchanged(_exhaustive);
    }
  }
}

function currentRunLength(state: RepetitionState): number {
  return state.status === 'idle' ? 0 : state.runLength;
}

function unchanged(state: RepetitionState): readonly [RepetitionState, RepetitionOutcome] {
  return [
    state,
    {
      decision: 'none',
      phaseBefore: state.status,
      phaseAfter: state.status,
      runLength: currentRunLength(state),
      action: NO_ACTION,
    },
  ];
}

type Verdict = {
  readonly decision: RepetitionDecision;
  readonly action: RepetitionAction;
  readonly latch: boolean;
};

function reduceToolCall(
  state: RepetitionState,
  fingerprint: string,
  mode: Exclude<RepetitionMode, 'off'>,
  config: RepetitionConfig,
): readonly [RepetitionState, RepetitionOutcome] {
  let previousRunLength: number;
  switch (state.status) {
    case 'idle':
      previousRunLength = 0;
      break;
    case 'tracking':
    case 'warned':
      previousRunLength = state.runLength;
      break;
    case 'latched':
      return unchanged(state);
    default: {
      const _exhaustive: never = state;
      return unchanged(_exhaustive);
    }
  }

  let recent: readonly string[];
  let runLength: number;
  if (config.windowSize > 0) {
    const previous = state.status === 'idle' ? EMPTY_RECENT : state.recent;
    recent = [...previous, fingerprint].slice(-config.windowSize);
    runLength = recent.filter((f) => f === fingerprint).length;
  } else {
    recent = EMPTY_RECENT;
    runLength = state.status !== 'idle' && state.fingerprint === fingerprint ? state.runLength + 1 : 1;
  }

  const verdict = decide(runLength, previousRunLength, mode, config);
  const status = verdict.latch ? 'latched' : runLength >= config.warn ? 'warned' : 'tracking';
  const next: RepetitionState = { status, fingerprint, runLength, recent };
  return [
    next,
    { decision: verdict.decision, phaseBefore: state.status, phaseAfter: status, runLength, action: verdict.action },
  ];
}

function decide(
  runLength: number,
  previousRunLength: number,
  mode: Exclude<RepetitionMode, 'off'>,
  config: RepetitionConfig,
): Verdict {
  if (runLength >= config.abort) {
    switch (mode) {
      case 'enforce':
        return { decision: 'aborted', action: BLOCK_ACTION, latch: true };
      case 'shadow':
        return { decision: 'would_abort', action: NO_ACTION, latch: true };
      case 'warn':
        return runLength === config.abort
          ? { decision: 'warned', action: WARN_ACTION, latch: false }
          : { decision: 'tracked', action: NO_ACTION, latch: false };
      default: {
        const _exhaustive: never = mode;
        return _exhaustive;
      }
    }
  }
  if (runLength === config.warn) {
    return mode === 'shadow'
      ? { decision: 'would_warn', action: NO_ACTION, latch: false }
      : { decision: 'warned', action: WARN_ACTION, latch: false };
  }
  if (runLength === 1 && previousRunLength >= 2) {
    return { decision: 'reset', action: NO_ACTION, latch: false };
  }
  return { decision: 'tracked', action: NO_ACTION, latch: false };
}

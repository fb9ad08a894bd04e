/**
 * State, event and outcome types of the identical tool-call repetition breaker. Types only.
 */
import type { RepetitionMode } from './config.js';

/** No tool call seen since the last user prompt (or ever). */
export type RepetitionIdleState = { readonly phase: 'idle' };

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
export type RepetitionTrackingState = RepetitionCounters & { readonly phase: 'tracking' };

/** Counting; the current run length has reached `warn` (and, in mode `'warn'`, maybe `abort`). */
export type RepetitionWarnedState = RepetitionCounters & { readonly phase: 'warned' };

/**
 * Absorbing until the next user prompt: the run reached `abort` in mode `'enforce'` or
 * `'shadow'`. Tool calls are no longer counted and nothing more is emitted for this prompt
 * (the turn has been stopped once; stopping it again is the shell's business). Counters are
 * frozen at their values when the abort fired.
 */
export type RepetitionLatchedState = RepetitionCounters & { readonly phase: 'latched' };

/** Per-prompt state of the repetition breaker, discriminated on `phase`. */
export type RepetitionState =
  | RepetitionIdleState
  | RepetitionTrackingState
  | RepetitionWarnedState
  | RepetitionLatchedState;

/**
 * Phase of the guard, mirroring the failure guard: `idle | tracking | warned | latched`.
 * It is the `phase` of {@link RepetitionState}.
 */
export type RepetitionPhase = RepetitionState['phase'];


/**
 * A completed (or attempted) tool call of the agent.
 */
export type RepetitionToolCallEvent = {
  readonly type: 'tool_call';
  /** Guard mode of the prompt. */
  readonly mode: RepetitionMode;
  /** Opaque fingerprint of tool name + arguments (see `argumentsFingerprint`). */
  readonly fingerprint: string;
  /** Tool origin, carried for telemetry; it does not affect counting. */
  readonly toolType?: 'native' | 'mcp';
};

/** A new real user prompt: resets the guard to idle. */
export type RepetitionUserPromptEvent = { readonly type: 'user_prompt'; readonly mode: RepetitionMode };

/**
 * A message injected by the agent's own extensions (nudges, reminders). Does not reset the run;
 * the reducer returns the same state object.
 */
export type RepetitionInjectedMessageEvent = { readonly type: 'injected_message'; readonly mode: RepetitionMode };

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

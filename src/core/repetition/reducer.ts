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
import { DEFAULT_REPETITION_CONFIG } from './config.js';
import type { RepetitionConfig, RepetitionMode } from './config.js';
import type {
  RepetitionAction,
  RepetitionBlockAction,
  RepetitionDecision,
  RepetitionEvent,
  RepetitionIdleState,
  RepetitionNoAction,
  RepetitionOutcome,
  RepetitionState,
  RepetitionWarnAction,
} from './types.js';

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

const IDLE: RepetitionIdleState = Object.freeze({ phase: 'idle' });

/** The state before any event; also the state after a user prompt (one shared frozen object). */
export function initialRepetitionState(): RepetitionIdleState {
  return IDLE;
}

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
 * @param state - Current state; start from {@link initialRepetitionState}.
 * @param event - The event; its `mode` is the guard mode of the prompt.
 * @param config - A resolved config (see {@link resolveRepetitionConfig}).
 *   @defaultValue {@link DEFAULT_REPETITION_CONFIG}
 * @returns `[nextState, outcome]`; `nextState` is `state` itself when nothing changed.
 *
 * @example
 * ```ts
 * let state: RepetitionState = initialRepetitionState();
 * const [next, outcome] = reduceRepetition(
 *   state, { type: 'tool_call', mode: 'enforce', fingerprint });
 * if (outcome.action.type === 'block') { … }
 * state = next;
 * ```
 */
export function reduceRepetition(
  state: RepetitionState,
  event: RepetitionEvent,
  config: RepetitionConfig = DEFAULT_REPETITION_CONFIG,
): readonly [RepetitionState, RepetitionOutcome] {
  const mode = event.mode;
  if (mode === 'off' || !config.enabled) return unchanged(state);
  switch (event.type) {
    case 'tool_call':
      return reduceToolCall(state, event.fingerprint, mode, config);
    case 'user_prompt':
      if (state.phase === 'idle') return unchanged(state);
      return [
        IDLE,
        { decision: 'reset', phaseBefore: state.phase, phaseAfter: 'idle', runLength: 0, action: NO_ACTION },
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
  return state.phase === 'idle' ? 0 : state.runLength;
}

function unchanged(state: RepetitionState): readonly [RepetitionState, RepetitionOutcome] {
  return [
    state,
    {
      decision: 'none',
      phaseBefore: state.phase,
      phaseAfter: state.phase,
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
  switch (state.phase) {
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
    const previous = state.phase === 'idle' ? EMPTY_RECENT : state.recent;
    recent = [...previous, fingerprint].slice(-config.windowSize);
    runLength = recent.filter((f) => f === fingerprint).length;
  } else {
    recent = EMPTY_RECENT;
    runLength = state.phase !== 'idle' && state.fingerprint === fingerprint ? state.runLength + 1 : 1;
  }

  const verdict = decide(runLength, previousRunLength, mode, config);
  const phase = verdict.latch ? 'latched' : runLength >= config.warn ? 'warned' : 'tracking';
  const next: RepetitionState = { phase, fingerprint, runLength, recent };
  return [
    next,
    { decision: verdict.decision, phaseBefore: state.phase, phaseAfter: phase, runLength, action: verdict.action },
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

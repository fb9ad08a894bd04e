import { describe, expectTypeOf, it } from 'vitest';
import { reduceRepetition } from '../src/core/repetition/reducer.js';
import type {
  RepetitionAction,
  RepetitionDecision,
  RepetitionEvent,
  RepetitionOutcome,
  RepetitionPhase,
  RepetitionState,
} from '../src/core/repetition/types.js';
import type { RepetitionMode } from '../src/core/repetition/config.js';

// Each switch below has no `return` after it: adding a variant without a case makes the
// `satisfies never` fail to compile (and the function lose its definite return).

function decisionLabel(decision: RepetitionDecision): string {
  switch (decision) {
    case 'none':
    case 'reset':
    case 'tracked':
      return 'quiet';
    case 'would_warn':
    case 'would_abort':
      return 'shadow';
    case 'warned':
    case 'aborted':
      return 'acted';
    default:
      return decision satisfies never;
  }
}

function phaseLabel(phase: RepetitionPhase): string {
  switch (phase) {
    case 'idle':
    case 'tracking':
    case 'warned':
    case 'latched':
      return phase;
    default:
      return phase satisfies never;
  }
}

function stateRunLength(state: RepetitionState): number {
  switch (state.phase) {
    case 'idle':
      return 0;
    case 'tracking':
    case 'warned':
    case 'latched':
      return state.runLength;
    default:
      return state satisfies never;
  }
}

function eventLabel(event: RepetitionEvent): string {
  switch (event.type) {
    case 'tool_call':
      return event.fingerprint;
    case 'user_prompt':
    case 'injected_message':
      return event.type;
    default:
      return event satisfies never;
  }
}

function actionText(action: RepetitionAction): string | undefined {
  switch (action.type) {
    case 'none':
      return undefined;
    case 'warn':
    case 'block':
      return action.text;
    default:
      return action satisfies never;
  }
}

function modeActs(mode: RepetitionMode): boolean {
  switch (mode) {
    case 'off':
    case 'shadow':
      return false;
    case 'warn':
    case 'enforce':
      return true;
    default:
      return mode satisfies never;
  }
}

describe('repetition reducer types', () => {
  it('has closed unions', () => {
    expectTypeOf<RepetitionDecision>().toEqualTypeOf<
      'none' | 'reset' | 'tracked' | 'would_warn' | 'warned' | 'would_abort' | 'aborted'
    >();
    expectTypeOf<RepetitionPhase>().toEqualTypeOf<'idle' | 'tracking' | 'warned' | 'latched'>();
    expectTypeOf<RepetitionMode>().toEqualTypeOf<'off' | 'shadow' | 'warn' | 'enforce'>();
    expectTypeOf<RepetitionEvent['type']>().toEqualTypeOf<'tool_call' | 'user_prompt' | 'injected_message'>();
    expectTypeOf<RepetitionAction['type']>().toEqualTypeOf<'none' | 'warn' | 'block'>();
  });

  it('returns a readonly [state, outcome] pair', () => {
    expectTypeOf(reduceRepetition).returns.toEqualTypeOf<readonly [RepetitionState, RepetitionOutcome]>();
    expectTypeOf<RepetitionOutcome['phaseBefore']>().toEqualTypeOf<RepetitionPhase>();
  });

  it('keeps the exhaustive helpers referenced', () => {
    expectTypeOf(decisionLabel).returns.toBeString();
    expectTypeOf(phaseLabel).returns.toBeString();
    expectTypeOf(stateRunLength).returns.toBeNumber();
    expectTypeOf(eventLabel).returns.toBeString();
    expectTypeOf(actionText).returns.toEqualTypeOf<string | undefined>();
    expectTypeOf(modeActs).returns.toBeBoolean();
  });
});

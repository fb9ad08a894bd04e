import { expectTypeOf, test } from 'vitest';
import type {
  FailureAction,
  FailureDecision,
  FailureEvent,
  GuardMode,
  FailurePhase,
  FailureState,
  ResetReason,
  ToolCallObservation,
} from '../src/core/failure/types.js';

// Each function below stops compiling when a variant is added to the union and not handled here.
function decisionName(d: FailureDecision): string {
  switch (d) {
    case 'none':
    case 'reset':
    case 'tracked':
    case 'would_warn':
    case 'warned':
    case 'would_stop':
    case 'stopped':
      return d;
    default: {
      const _exhaustive: never = d;
      return _exhaustive;
    }
  }
}

function resetName(r: ResetReason): string {
  switch (r) {
    case 'success':
    case 'cancelled':
    case 'not_started':
    case 'post_execution_failure':
    case 'unknown':
    case 'mixed':
    case 'incomplete':
    case 'external_input':
    case 'queued_prompt':
    case 'unreliable_input':
    case 'contract_violation':
      return r;
    default: {
      const _exhaustive: never = r;
      return _exhaustive;
    }
  }
}

function phaseOf(s: FailureState): FailurePhase {
  switch (s.phase) {
    case 'idle':
      return s.phase;
    case 'tracking':
    case 'warned':
    case 'latched':
      return s.key ? s.phase : s.phase;
    default: {
      const _exhaustive: never = s;
      return _exhaustive;
    }
  }
}

function actionText(a: FailureAction): string | undefined {
  switch (a.type) {
    case 'none':
      return undefined;
    case 'remind':
    case 'stop':
      return a.text;
    default: {
      const _exhaustive: never = a;
      return _exhaustive;
    }
  }
}

function eventType(e: FailureEvent): string {
  switch (e.type) {
    case 'batch_settled':
      return e.type;
    default: {
      const _exhaustive: never = e.type;
      return _exhaustive;
    }
  }
}

test('closed unions', () => {
  expectTypeOf(decisionName).parameter(0).toEqualTypeOf<
    'none' | 'reset' | 'tracked' | 'would_warn' | 'warned' | 'would_stop' | 'stopped'
  >();
  expectTypeOf(resetName).returns.toBeString();
  expectTypeOf(phaseOf).returns.toEqualTypeOf<FailurePhase>();
  expectTypeOf(actionText).returns.toEqualTypeOf<string | undefined>();
  expectTypeOf(eventType).returns.toBeString();
  expectTypeOf<GuardMode>().toEqualTypeOf<'off' | 'shadow' | 'warn' | 'enforce'>();
  expectTypeOf<FailurePhase>().toEqualTypeOf<'idle' | 'tracking' | 'warned' | 'latched'>();
});

test('an observation has no room for arguments, results, paths or error text', () => {
  expectTypeOf<keyof ToolCallObservation>().toEqualTypeOf<
    | 'callId'
    | 'policyToolName'
    | 'toolType'
    | 'terminalStatus'
    | 'executionStatus'
    | 'executionErrorType'
    | 'providerDuplicate'
  >();
});

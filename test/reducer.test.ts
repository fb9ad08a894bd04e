import { describe, expect, it } from 'vitest';
import {
  initialFailureState,
  reduceFailure,
  REPEATED_TOOL_FAILURE_REMINDER,
  REPEATED_TOOL_FAILURE_STOP_TEXT,
} from '../src/core/failure/reducer.js';
import type {
  BatchSettledEvent,
  FailureDecision,
  GuardMode,
  FailureOutcome,
  FailurePhase,
  FailureState,
  ResetReason,
} from '../src/core/failure/types.js';
import { batch, fail, obs, ok, outcome, times, trackingState } from './helpers/observations.js';

function run(events: readonly BatchSettledEvent[], start: FailureState = initialFailureState()) {
  let state = start;
  const outcomes: FailureOutcome[] = [];
  for (const e of events) {
    const [next, out] = reduceFailure(state, e);
    state = next;
    outcomes.push(out);
  }
  return { state, outcomes };
}

const warnedState = (over: Partial<FailureState> = {}): FailureState =>
  trackingState(8, 2, { phase: 'warned', ...over } as Partial<FailureState>);

interface Expect {
  decision: FailureDecision;
  phaseBefore: FailurePhase;
  phaseAfter: FailurePhase;
  resetReason?: ResetReason;
  failureCount: number;
  batchCount: number;
  candidateOrdinal: number;
  action: 'none' | 'remind' | 'stop';
  enforcementDisabled?: boolean;
}

interface Case {
  desc: string;
  state: FailureState;
  event: BatchSettledEvent;
  expected: Expect;
}

const T = (f: number, b: number, over: Partial<FailureState> = {}) => trackingState(f, b, over);

describe('reduceFailure: one batch', () => {
  it.each<Case>([
    // --- threshold ---
    {
      desc: 'eight failures in one batch only track (one batch is not enough)',
      state: initialFailureState(),
      event: batch(times(8, () => fail())),
      expected: { decision: 'tracked', phaseBefore: 'idle', phaseAfter: 'tracking', failureCount: 8, batchCount: 1, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: '4 + 4 across two batches warns in enforce with the reminder',
      state: T(4, 1),
      event: batch(times(4, () => fail())),
      expected: { decision: 'warned', phaseBefore: 'tracking', phaseAfter: 'warned', failureCount: 8, batchCount: 2, candidateOrdinal: 1, action: 'remind' },
    },
    {
      desc: '4 + 4 across two batches gives would_warn in shadow, no action',
      state: T(4, 1),
      event: batch(times(4, () => fail()), { mode: 'shadow' }),
      expected: { decision: 'would_warn', phaseBefore: 'tracking', phaseAfter: 'warned', failureCount: 8, batchCount: 2, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'warn mode reminds',
      state: T(4, 1),
      event: batch(times(4, () => fail()), { mode: 'warn' }),
      expected: { decision: 'warned', phaseBefore: 'tracking', phaseAfter: 'warned', failureCount: 8, batchCount: 2, candidateOrdinal: 1, action: 'remind' },
    },
    {
      desc: '7 failures across two batches stay tracking',
      state: T(4, 1),
      event: batch(times(3, () => fail())),
      expected: { decision: 'tracked', phaseBefore: 'tracking', phaseAfter: 'tracking', failureCount: 7, batchCount: 2, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'next matching batch after warned stops in enforce',
      state: warnedState(),
      event: batch([fail()]),
      expected: { decision: 'stopped', phaseBefore: 'warned', phaseAfter: 'latched', failureCount: 9, batchCount: 3, candidateOrdinal: 1, action: 'stop' },
    },
    {
      desc: 'next matching batch after warned is would_stop in shadow',
      state: warnedState(),
      event: batch([fail()], { mode: 'shadow' }),
      expected: { decision: 'would_stop', phaseBefore: 'warned', phaseAfter: 'latched', failureCount: 9, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'warn mode never stops: would_stop without action',
      state: warnedState(),
      event: batch([fail()], { mode: 'warn' }),
      expected: { decision: 'would_stop', phaseBefore: 'warned', phaseAfter: 'latched', failureCount: 9, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'enforce with enforcement disabled acts as warn: would_stop, no stop',
      state: warnedState({ enforcementDisabled: true }),
      event: batch([fail()]),
      expected: { decision: 'would_stop', phaseBefore: 'warned', phaseAfter: 'latched', failureCount: 9, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'enforce with enforcement disabled still reminds (warn behaviour)',
      state: T(4, 1, { enforcementDisabled: true }),
      event: batch(times(4, () => fail())),
      expected: { decision: 'warned', phaseBefore: 'tracking', phaseAfter: 'warned', failureCount: 8, batchCount: 2, candidateOrdinal: 1, action: 'remind', enforcementDisabled: true },
    },
    // --- resets from a candidate, every reason ---
    {
      desc: 'same-tool success resets (success)',
      state: T(6, 3),
      event: batch([ok()]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'success', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'same-tool success in the failing batch drops that tool\'s failures and resets (success)',
      state: T(6, 3),
      event: batch([fail(), fail(), ok()]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'success', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'cancellation resets (terminal cancelled)',
      state: T(6, 3),
      event: batch([fail(), outcome('cancelled', 'cancelled')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'cancelled', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'error with execution cancelled resets as cancelled (status wins arbitration)',
      state: T(6, 3),
      event: batch([outcome('error', 'cancelled')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'cancelled', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'not_started resets',
      state: T(6, 3),
      event: batch([fail(), outcome('error', 'not_started', 'invalid_tool_params')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'not_started', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'post-execution failure resets',
      state: T(6, 3),
      event: batch([outcome('error', 'success', 'execution_denied')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'post_execution_failure', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'execution status unknown resets and disables enforcement',
      state: T(6, 3),
      event: batch([outcome('error', 'unknown', 'file_not_found')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'unknown', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'missing execution status resets as unknown',
      state: T(6, 3),
      event: batch([outcome('error', undefined, 'file_not_found')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'unknown', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'error type unknown is ineligible (unknown)',
      state: T(6, 3),
      event: batch([outcome('error', 'error', 'unknown')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'unknown', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'missing error type is ineligible (unknown)',
      state: T(6, 3),
      event: batch([outcome('error', 'error', undefined)]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'unknown', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'blank tool identity is ineligible (unknown)',
      state: T(6, 3),
      event: batch([obs({ policyToolName: '' })]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'unknown', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'missing terminal status is ineligible (unknown)',
      state: T(6, 3),
      event: batch([outcome(undefined, 'error', 'file_not_found')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'unknown', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'success/error is a contract violation and disables enforcement',
      state: T(6, 3),
      event: batch([outcome('success', 'error')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'contract_violation', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'success/cancelled is a contract violation',
      state: T(6, 3),
      event: batch([outcome('success', 'cancelled')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'contract_violation', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'two remaining keys reset as mixed',
      state: T(6, 3),
      event: batch([fail(), fail('run_shell_command', 'shell_execute_error')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'mixed', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'same tool, two error types reset as mixed',
      state: T(6, 3),
      event: batch([fail(), fail('read_file', 'permission_denied')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'mixed', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'incomplete batch resets',
      state: T(6, 3),
      event: batch([fail()], { complete: false }),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'incomplete', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'unreliable drain resets and disables enforcement',
      state: T(6, 3),
      event: batch([fail()], { inputReliable: false }),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'unreliable_input', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'new external input resets',
      state: T(6, 3),
      event: batch([fail()], { hasExternalInput: true }),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'external_input', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'a queued prompt resets',
      state: T(6, 3),
      event: batch([fail()], { hasQueuedPrompt: true }),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'queued_prompt', failureCount: 6, batchCount: 3, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'queued input takes precedence over a stop',
      state: warnedState(),
      event: batch([fail()], { hasQueuedPrompt: true }),
      expected: { decision: 'reset', phaseBefore: 'warned', phaseAfter: 'idle', resetReason: 'queued_prompt', failureCount: 8, batchCount: 2, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'cancellation takes precedence over a stop',
      state: warnedState(),
      event: batch([fail(), outcome('cancelled', 'not_started')]),
      expected: { decision: 'reset', phaseBefore: 'warned', phaseAfter: 'idle', resetReason: 'cancelled', failureCount: 8, batchCount: 2, candidateOrdinal: 1, action: 'none' },
    },
    // --- reset precedence ---
    {
      desc: 'precedence: contract_violation over cancelled',
      state: T(2, 1),
      event: batch([outcome('cancelled', 'cancelled'), outcome('success', 'error')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'contract_violation', failureCount: 2, batchCount: 1, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'precedence: cancelled over unknown (and unknown still disables)',
      state: T(2, 1),
      event: batch([outcome('error', 'unknown', 'x'), outcome('cancelled', 'cancelled')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'cancelled', failureCount: 2, batchCount: 1, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'precedence: unknown over not_started',
      state: T(2, 1),
      event: batch([outcome('error', 'not_started', 'invalid_tool_params'), outcome('error', 'error', 'unknown')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'unknown', failureCount: 2, batchCount: 1, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'precedence: not_started over post_execution_failure',
      state: T(2, 1),
      event: batch([outcome('error', 'success', 'execution_denied'), outcome('error', 'not_started', 'invalid_tool_params')]),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'not_started', failureCount: 2, batchCount: 1, candidateOrdinal: 1, action: 'none' },
    },
    {
      desc: 'drain precedence: unreliable_input over external_input',
      state: T(2, 1),
      event: batch([fail()], { inputReliable: false, hasExternalInput: true }),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'unreliable_input', failureCount: 2, batchCount: 1, candidateOrdinal: 1, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'drain precedence: external_input over queued_prompt over incomplete',
      state: T(2, 1),
      event: batch([fail()], { hasExternalInput: true, hasQueuedPrompt: true, complete: false }),
      expected: { decision: 'reset', phaseBefore: 'tracking', phaseAfter: 'idle', resetReason: 'external_input', failureCount: 2, batchCount: 1, candidateOrdinal: 1, action: 'none' },
    },
    // --- neutral events ---
    {
      desc: 'other-tool success inside a failing batch is ignored (still counts)',
      state: T(4, 1),
      event: batch([...times(4, () => fail()), ok('list_directory'), ok('glob')]),
      expected: { decision: 'warned', phaseBefore: 'tracking', phaseAfter: 'warned', failureCount: 8, batchCount: 2, candidateOrdinal: 1, action: 'remind' },
    },
    {
      desc: 'other-tool success after warned does not hide the repeat: the matching batch stops',
      state: warnedState(),
      event: batch([ok('list_directory'), fail()]),
      expected: { decision: 'stopped', phaseBefore: 'warned', phaseAfter: 'latched', failureCount: 9, batchCount: 3, candidateOrdinal: 1, action: 'stop' },
    },
    {
      desc: 'a new key starts a new streak with the next ordinal',
      state: T(6, 3),
      event: batch([fail('run_shell_command', 'shell_execute_error')]),
      expected: { decision: 'tracked', phaseBefore: 'tracking', phaseAfter: 'tracking', failureCount: 1, batchCount: 1, candidateOrdinal: 2, action: 'none' },
    },
    {
      desc: 'a new key while warned starts a new streak (warned -> tracking)',
      state: warnedState(),
      event: batch([fail('read_file', 'permission_denied')]),
      expected: { decision: 'tracked', phaseBefore: 'warned', phaseAfter: 'tracking', failureCount: 1, batchCount: 1, candidateOrdinal: 2, action: 'none' },
    },
    {
      desc: 'unreliable drain on idle is emitted once as idle -> idle reset with zeros',
      state: initialFailureState(),
      event: batch([fail()], { inputReliable: false, mode: 'shadow' }),
      expected: { decision: 'reset', phaseBefore: 'idle', phaseAfter: 'idle', resetReason: 'unreliable_input', failureCount: 0, batchCount: 0, candidateOrdinal: 0, action: 'none', enforcementDisabled: true },
    },
    {
      desc: 'contract violation on idle newly disables enforcement and is emitted',
      state: initialFailureState(),
      event: batch([outcome('success', 'error')]),
      expected: { decision: 'reset', phaseBefore: 'idle', phaseAfter: 'idle', resetReason: 'contract_violation', failureCount: 0, batchCount: 0, candidateOrdinal: 0, action: 'none', enforcementDisabled: true },
    },
  ])('$desc', ({ state, event, expected }) => {
    const [next, out] = reduceFailure(state, event);
    expect(out.decision).toBe(expected.decision);
    expect(out.phaseBefore).toBe(expected.phaseBefore);
    expect(out.phaseAfter).toBe(expected.phaseAfter);
    expect(next.phase).toBe(expected.phaseAfter);
    expect(out.resetReason).toBe(expected.resetReason);
    expect(out.failureCount).toBe(expected.failureCount);
    expect(out.batchCount).toBe(expected.batchCount);
    expect(out.candidateOrdinal).toBe(expected.candidateOrdinal);
    expect(out.action.type).toBe(expected.action);
    expect(next.enforcementDisabled).toBe(expected.enforcementDisabled ?? false);
    if (expected.decision === 'reset') expect(out.candidate).toBeUndefined();
    else expect(out.candidate).toMatchObject({ terminalStatus: 'error', executionStatus: 'error' });
  });
});

describe('reduceFailure: events that change nothing return the same state object', () => {
  it.each<{ desc: string; state: FailureState; event: BatchSettledEvent }>([
    { desc: 'mode off', state: T(6, 3), event: batch([fail()], { mode: 'off' }) },
    { desc: 'latched ignores a matching batch', state: trackingState(9, 3, { phase: 'latched' } as Partial<FailureState>), event: batch([fail()]) },
    { desc: 'latched ignores a reset condition', state: trackingState(9, 3, { phase: 'latched' } as Partial<FailureState>), event: batch([ok()], { hasQueuedPrompt: true }) },
    { desc: 'only provider duplicates', state: T(6, 3), event: batch([obs({ providerDuplicate: true }), obs({ providerDuplicate: true, terminalStatus: 'cancelled' })]) },
    { desc: 'empty batch', state: T(6, 3), event: batch([]) },
    { desc: 'unrelated success batch leaves the streak unchanged', state: T(6, 3), event: batch([ok('list_directory'), ok('glob')]) },
    { desc: 'cancelled batch on idle emits nothing', state: initialFailureState(), event: batch([outcome('cancelled', 'cancelled')]) },
    { desc: 'not_started batch on idle emits nothing', state: initialFailureState(), event: batch([outcome('error', 'not_started', 'invalid_tool_params')]) },
    { desc: 'incomplete batch on idle emits nothing', state: initialFailureState(), event: batch([fail()], { complete: false }) },
    { desc: 'a second unreliable drain on a disabled idle guard emits nothing', state: { phase: 'idle', nextCandidateOrdinal: 1, enforcementDisabled: true }, event: batch([fail()], { inputReliable: false }) },
    { desc: 'same-tool success on idle emits nothing', state: initialFailureState(), event: batch([ok()]) },
  ])('$desc', ({ state, event }) => {
    const [next, out] = reduceFailure(state, event);
    expect(next).toBe(state);
    expect(out.decision).toBe('none');
    expect(out.action).toEqual({ type: 'none' });
  });
});

describe('reduceFailure: provider duplicates', () => {
  it('neither count nor reset', () => {
    const state = T(4, 1);
    const dupCancelled = obs({ providerDuplicate: true, terminalStatus: 'cancelled', executionStatus: 'not_started' });
    const [next, out] = reduceFailure(state, batch([...times(4, () => fail()), dupCancelled, obs({ providerDuplicate: true })]));
    expect(out.decision).toBe('warned');
    expect(out.failureCount).toBe(8);
    expect(next.phase).toBe('warned');
  });
});

describe('reduceFailure: sequences', () => {
  const twoFailures = (mode: GuardMode) => batch([fail(), fail()], { mode });

  it.each<{ mode: GuardMode; decisions: FailureDecision[]; actions: string[] }>([
    { mode: 'enforce', decisions: ['tracked', 'tracked', 'tracked', 'warned', 'stopped', 'none'], actions: ['none', 'none', 'none', 'remind', 'stop', 'none'] },
    { mode: 'warn', decisions: ['tracked', 'tracked', 'tracked', 'warned', 'would_stop', 'none'], actions: ['none', 'none', 'none', 'remind', 'none', 'none'] },
    { mode: 'shadow', decisions: ['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop', 'none'], actions: ['none', 'none', 'none', 'none', 'none', 'none'] },
  ])('two failing read_file calls per batch, $mode (the fixtures\' shape)', ({ mode, decisions, actions }) => {
    const { outcomes } = run(times(6, () => twoFailures(mode)));
    expect(outcomes.map((o) => o.decision)).toEqual(decisions);
    expect(outcomes.map((o) => o.action.type)).toEqual(actions);
    expect(outcomes.slice(0, 5).map((o) => [o.failureCount, o.batchCount])).toEqual([
      [2, 1],
      [4, 2],
      [6, 3],
      [8, 4],
      [10, 5],
    ]);
  });

  it('issue #10887: nine failing git calls (exit 128, shell_execute_error) give tracked -> would_warn -> would_stop in shadow', () => {
    const git = () => fail('run_shell_command', 'shell_execute_error');
    // The seed: nine distinct git calls, four main model requests; the ninth result still reaches
    // the main continuation. Three tool batches: 4 + 4 + 1.
    const { outcomes, state } = run([
      batch(times(4, git), { mode: 'shadow' }),
      batch(times(4, git), { mode: 'shadow' }),
      batch([git()], { mode: 'shadow' }),
    ]);
    expect(outcomes.map((o) => o.decision)).toEqual(['tracked', 'would_warn', 'would_stop']);
    expect(outcomes.map((o) => o.candidateOrdinal)).toEqual([1, 1, 1]);
    expect(outcomes.every((o) => o.action.type === 'none')).toBe(true);
    expect(outcomes[2]?.candidate?.executionErrorType).toBe('shell_execute_error');
    expect(state.phase).toBe('latched');
  });

  it('warn injects exactly one reminder per candidate; a reset and a new candidate may remind again', () => {
    const { outcomes } = run([
      batch(times(4, () => fail()), { mode: 'warn' }),
      batch(times(4, () => fail()), { mode: 'warn' }),
      batch([ok()], { mode: 'warn' }),
      batch(times(4, () => fail()), { mode: 'warn' }),
      batch(times(4, () => fail()), { mode: 'warn' }),
    ]);
    expect(outcomes.map((o) => [o.decision, o.candidateOrdinal])).toEqual([
      ['tracked', 1],
      ['warned', 1],
      ['reset', 1],
      ['tracked', 2],
      ['warned', 2],
    ]);
    expect(outcomes.filter((o) => o.action.type === 'remind')).toHaveLength(2);
  });

  it('a mixed batch ends the candidate and the next key takes the next ordinal, even if it never warned', () => {
    const { outcomes } = run([
      batch([fail()]),
      batch([fail(), fail('glob', 'glob_execution_error')]),
      batch([fail()]),
      batch([fail('glob', 'glob_execution_error')]),
    ]);
    expect(outcomes.map((o) => [o.decision, o.candidateOrdinal, o.resetReason])).toEqual([
      ['tracked', 1, undefined],
      ['reset', 1, 'mixed'],
      ['tracked', 2, undefined],
      ['tracked', 3, undefined],
    ]);
  });

  it('unsupported outcome combinations never enforce for the rest of the prompt', () => {
    const { outcomes } = run([
      batch([outcome('success', 'error')]),
      ...times(4, () => batch([fail(), fail()])),
      batch([fail(), fail()]),
    ]);
    expect(outcomes.map((o) => o.decision)).toEqual(['reset', 'tracked', 'tracked', 'tracked', 'warned', 'would_stop']);
    expect(outcomes.some((o) => o.action.type === 'stop')).toBe(false);
  });

  it('an unreliable drain blocks accumulation while it stays unreliable, and is reported once', () => {
    const { outcomes } = run(times(6, () => batch([fail(), fail()], { inputReliable: false, mode: 'shadow' })));
    expect(outcomes.map((o) => o.decision)).toEqual(['reset', 'none', 'none', 'none', 'none', 'none']);
    expect(outcomes[0]?.resetReason).toBe('unreliable_input');
  });
});

describe('fixed texts', () => {
  it.each([REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_TEXT])('%s holds no tool data', (text) => {
    expect(text).not.toMatch(/read_file|run_shell_command|file_not_found|shell_execute_error|\/|\{|"/);
  });

  it('are byte-exact with the design', () => {
    expect(REPEATED_TOOL_FAILURE_REMINDER).toBe(
      'System: the same tool execution has failed repeatedly for the same classified reason. Do not repeat the same approach. Inspect the returned result, change the approach or required preconditions, or explain the blocker.',
    );
    expect(REPEATED_TOOL_FAILURE_STOP_TEXT).toBe(
      'System: Automatic continuation stopped because the same tool execution failure continued after a corrective reminder. New user input is required to continue.',
    );
  });

  it('the actions carry exactly these texts', () => {
    const [, warnOut] = reduceFailure(T(4, 1), batch(times(4, () => fail())));
    const [, stopOut] = reduceFailure(warnedState(), batch([fail()]));
    expect(warnOut.action).toEqual({ type: 'remind', text: REPEATED_TOOL_FAILURE_REMINDER });
    expect(stopOut.action).toEqual({ type: 'stop', text: REPEATED_TOOL_FAILURE_STOP_TEXT });
  });
});

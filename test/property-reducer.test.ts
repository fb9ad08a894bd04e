/**
 * R3: the design's Phase 1 invariants hold for the pure reducer over arbitrary batch sequences
 * (design "Phase 1: shadow", "Required invariants"; "State machine").
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { initialFailureState, reduceFailure } from '../src/core/failure/reducer.js';
import type { BatchSettledEvent, FailureDecision, GuardMode, FailureOutcome, FailureState, ToolCallObservation } from '../src/core/failure/types.js';
import { arbBatchEvent, arbObservation, MODES } from './helpers/generators.js';

const ADVANCING: ReadonlySet<FailureDecision> = new Set(['tracked', 'would_warn', 'warned', 'would_stop', 'stopped']);

const isEligible = (o: ToolCallObservation): boolean =>
  o.terminalStatus === 'error' &&
  o.executionStatus === 'error' &&
  !!o.policyToolName &&
  !!o.executionErrorType &&
  o.executionErrorType !== 'unknown';

const isSuccess = (o: ToolCallObservation): boolean =>
  o.terminalStatus === 'success' && (o.executionStatus === 'success' || o.executionStatus === 'not_started') && !!o.policyToolName;

interface Step {
  readonly before: FailureState;
  readonly event: BatchSettledEvent;
  readonly next: FailureState;
  readonly outcome: FailureOutcome;
}

function run(events: readonly BatchSettledEvent[]): Step[] {
  let state: FailureState = initialFailureState();
  const steps: Step[] = [];
  for (const event of events) {
    const [next, outcome] = reduceFailure(state, event);
    steps.push({ before: state, event, next, outcome });
    state = next;
  }
  return steps;
}

/** Every invariant over one prompt's sequence; throws (via expect) on the first violation. */
function checkInvariants(steps: readonly Step[]): void {
  const warnedOrdinals = new Set<number>();
  let latched = false;
  let unreliableSeen = false;
  let disabledSeen = false;
  steps.forEach(({ before, event, next, outcome: o }, i) => {
    const where = `step ${i}: ${JSON.stringify({ event, before, outcome: o })}`;
    expect(o.phaseBefore, where).toBe(before.phase);
    expect(o.phaseAfter, where).toBe(next.phase);

    // nothing after latched
    if (latched) {
      expect(o.decision, where).toBe('none');
      expect(next, where).toBe(before);
    }

    // mode off: nothing
    if (event.mode === 'off') expect(o.decision, where).toBe('none');

    // no decision on an incomplete batch or an unusable drain, other than reset/none
    if (!event.batch.complete || !event.inputReliable || event.hasExternalInput || event.hasQueuedPrompt) {
      expect(['reset', 'none'], where).toContain(o.decision);
    }

    if (ADVANCING.has(o.decision)) {
      const counted = event.batch.observations.filter((x) => !x.providerDuplicate);
      // no ineligible outcome in an advancing batch (provider duplicates ignored)
      for (const x of counted) expect(isEligible(x) || isSuccess(x), `${where}\nineligible ${JSON.stringify(x)}`).toBe(true);
      // exactly the batch's eligible failures (minus same-tool successes) were added, all of one key
      const succeeded = new Set(counted.filter(isSuccess).map((x) => x.policyToolName));
      const failures = counted.filter((x) => isEligible(x) && !succeeded.has(x.policyToolName));
      expect(new Set(failures.map((x) => `${x.policyToolName}\u0000${x.executionErrorType}`)).size, where).toBe(1);
      expect(o.candidate?.executionErrorType, where).toBe(failures[0]?.executionErrorType);
      const prev = before.phase !== 'idle' && before.candidateOrdinal === o.candidateOrdinal ? before : undefined;
      expect(o.failureCount - (prev?.failureCount ?? 0), where).toBe(failures.length);
      expect(o.batchCount, where).toBe(prev === undefined ? 1 : prev.batchCount + 1);
      expect(o.candidate, where).toBeDefined();
    } else {
      expect(o.candidate, where).toBeUndefined();
    }

    // every stop / would_stop is preceded by warn / would_warn of the same candidate ordinal
    if (o.decision === 'would_warn' || o.decision === 'warned') warnedOrdinals.add(o.candidateOrdinal);
    if (o.decision === 'would_stop' || o.decision === 'stopped') {
      expect(warnedOrdinals.has(o.candidateOrdinal), where).toBe(true);
      expect(before.phase, where).toBe('warned');
    }

    // actions: shadow never acts; no stop in warn, shadow, or after enforcement was disabled
    if (event.mode === 'shadow' || event.mode === 'off') expect(o.action.type, where).toBe('none');
    if (o.action.type === 'stop') {
      expect(event.mode, where).toBe('enforce');
      expect(before.enforcementDisabled, where).toBe(false);
      expect(unreliableSeen, where).toBe(false);
      expect(disabledSeen, where).toBe(false);
    }
    expect(o.action.type === 'stop', where).toBe(o.decision === 'stopped');
    expect(o.action.type === 'remind', where).toBe(o.decision === 'warned');

    // enforcement, once disabled, stays disabled
    if (before.enforcementDisabled) expect(next.enforcementDisabled, where).toBe(true);
    if (o.enforcementNewlyDisabled) {
      expect(before.enforcementDisabled, where).toBe(false);
      expect(next.enforcementDisabled, where).toBe(true);
      disabledSeen = true;
    }
    if (!event.inputReliable && event.mode !== 'off' && !latched) unreliableSeen = true;
    if (next.enforcementDisabled) disabledSeen = true;
    if (o.phaseAfter === 'latched') latched = true;
  });
}

const RUNS = { numRuns: 300 };

describe('R3: reducer Phase 1 invariants (fast-check)', () => {
  it('hold for arbitrary sequences with one mode per prompt', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<GuardMode>(...MODES).chain((mode) => fc.array(arbBatchEvent(mode), { minLength: 1, maxLength: 30 })),
        (events) => checkInvariants(run(events)),
      ),
      RUNS,
    );
  });

  it('hold when the mode changes from batch to batch', () => {
    fc.assert(
      fc.property(fc.array(arbBatchEvent(), { minLength: 1, maxLength: 30 }), (events) => checkInvariants(run(events))),
      RUNS,
    );
  });

  it('the generators do reach every decision (the properties are not vacuous)', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        fc.constantFrom<GuardMode>('shadow', 'warn', 'enforce').chain((mode) => fc.array(arbBatchEvent(mode), { minLength: 5, maxLength: 30 })),
        (events) => {
          for (const s of run(events)) seen.add(s.outcome.decision);
        },
      ),
      { numRuns: 400, seed: 42 },
    );
    expect([...seen].sort()).toEqual(['none', 'reset', 'stopped', 'tracked', 'warned', 'would_stop', 'would_warn'].sort());
  });

  it('provider duplicates are ignored: adding any duplicates changes no outcome', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(arbBatchEvent(), fc.array(arbObservation().map((o) => ({ ...o, providerDuplicate: true })), { maxLength: 3 }), fc.nat()),
          { minLength: 1, maxLength: 25 },
        ),
        (items) => {
          const plain = items.map(([e]) => e);
          const withDuplicates = items.map(([e, dups, at]): BatchSettledEvent => {
            const obs = [...e.batch.observations];
            obs.splice(at % (obs.length + 1), 0, ...dups);
            return { ...e, batch: { ...e.batch, observations: obs } };
          });
          const a = run(plain);
          const b = run(withDuplicates);
          expect(b.map((s) => s.outcome)).toEqual(a.map((s) => s.outcome));
          expect(b.map((s) => s.next)).toEqual(a.map((s) => s.next));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the reduction is order-independent within a batch (tool type aside)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(arbBatchEvent(), fc.array(fc.nat(), { maxLength: 6 })), { minLength: 1, maxLength: 20 }),
        (items) => {
          const plain = items.map(([e]) => e);
          const shuffled = items.map(([e, keys]): BatchSettledEvent => {
            const obs = e.batch.observations
              .map((o, i) => [keys[i] ?? i, i, o] as const)
              .sort((x, y) => x[0] - y[0] || x[1] - y[1])
              .map((x) => x[2]);
            return { ...e, batch: { ...e.batch, observations: obs } };
          });
          const strip = (o: FailureOutcome) => ({ ...o, candidate: o.candidate === undefined ? undefined : { ...o.candidate, toolType: null } });
          expect(run(shuffled).map((s) => strip(s.outcome))).toEqual(run(plain).map((s) => strip(s.outcome)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('is pure: the same state and event give the same result and never mutate their input', () => {
    fc.assert(
      fc.property(fc.array(arbBatchEvent(), { minLength: 1, maxLength: 20 }), (events) => {
        const frozen = JSON.stringify(events);
        const a = run(events);
        const b = run(events);
        expect(b.map((s) => s.outcome)).toEqual(a.map((s) => s.outcome));
        expect(JSON.stringify(events)).toBe(frozen);
      }),
      { numRuns: 100 },
    );
  });
});

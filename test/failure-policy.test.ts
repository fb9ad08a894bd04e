import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FAILURE_POLICY,
  initialFailureState,
  reduceFailure,
  REPEATED_TOOL_FAILURE_BATCH_THRESHOLD,
  REPEATED_TOOL_FAILURE_THRESHOLD,
} from '../src/core/failure/reducer.js';
import type { FailurePolicy } from '../src/core/failure/reducer.js';
import type { BatchSettledEvent, FailureDecision, FailureState } from '../src/core/failure/types.js';
import { arbBatchEvent } from './helpers/generators.js';
import { batch, fail, ok, times } from './helpers/observations.js';

function decisions(events: readonly BatchSettledEvent[], policy?: FailurePolicy): FailureDecision[] {
  let state: FailureState = initialFailureState();
  return events.map((e) => {
    const [next, out] = policy === undefined ? reduceFailure(state, e) : reduceFailure(state, e, policy);
    state = next;
    return out.decision;
  });
}

const twoFailures = (n: number) => times(n, () => batch([fail(), fail()], { mode: 'shadow' }));

describe('FailurePolicy (opt-in parameters of the failure reducer)', () => {
  it('the default policy is the design: 8 failures, 2 batches, no other-tool reset', () => {
    expect(DEFAULT_FAILURE_POLICY.failureThreshold).toBe(REPEATED_TOOL_FAILURE_THRESHOLD);
    expect(DEFAULT_FAILURE_POLICY.batchThreshold).toBe(REPEATED_TOOL_FAILURE_BATCH_THRESHOLD);
    expect([REPEATED_TOOL_FAILURE_THRESHOLD, REPEATED_TOOL_FAILURE_BATCH_THRESHOLD]).toEqual([8, 2]);
    expect(DEFAULT_FAILURE_POLICY.resetOnSuccessOf.size).toBe(0);
  });

  it('passing the default policy changes nothing, for arbitrary batch sequences', () => {
    fc.assert(
      fc.property(fc.array(arbBatchEvent(), { maxLength: 30 }), (events) => {
        let a: FailureState = initialFailureState();
        let b: FailureState = initialFailureState();
        for (const e of events) {
          const [na, oa] = reduceFailure(a, e);
          const [nb, ob] = reduceFailure(b, e, DEFAULT_FAILURE_POLICY);
          expect(ob).toEqual(oa);
          expect(nb).toEqual(na);
          a = na;
          b = nb;
        }
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    { failureThreshold: 4, batchThreshold: 1, warnAt: 2 },
    { failureThreshold: 4, batchThreshold: 3, warnAt: 3 },
    { failureThreshold: 8, batchThreshold: 2, warnAt: 4 },
    { failureThreshold: 16, batchThreshold: 3, warnAt: 8 },
  ])('$failureThreshold failures x $batchThreshold batches (2 a batch): would_warn at batch $warnAt, would_stop next', ({ failureThreshold, batchThreshold, warnAt }) => {
    const d = decisions(twoFailures(warnAt + 2), { ...DEFAULT_FAILURE_POLICY, failureThreshold, batchThreshold });
    expect(d.indexOf('would_warn') + 1).toBe(warnAt);
    expect(d.indexOf('would_stop') + 1).toBe(warnAt + 1);
    expect(d.at(-1)).toBe('none');
  });

  it('resetOnSuccessOf: a listed tool succeeding resets another tool\'s candidate; its failures start a new streak', () => {
    const policy = { ...DEFAULT_FAILURE_POLICY, resetOnSuccessOf: new Set(['edit']) };
    const events = [batch([fail(), fail()]), batch([ok('edit')]), batch([fail(), fail(), ok('edit')]), batch([fail(), fail()])];
    expect(decisions(events)).toEqual(['tracked', 'none', 'tracked', 'tracked']);
    expect(decisions(events, policy)).toEqual(['tracked', 'reset', 'tracked', 'tracked']);
    let state: FailureState = initialFailureState();
    const ordinals = events.map((e) => {
      const [next, out] = reduceFailure(state, e, policy);
      state = next;
      return out.candidateOrdinal;
    });
    // The reset keeps the ended candidate's ordinal on its event; the new streak takes the next one.
    expect(ordinals).toEqual([1, 1, 2, 2]);
    // An unlisted tool's success still neither advances nor resets.
    expect(decisions([batch([fail(), fail()]), batch([ok('list_directory')])], policy)).toEqual(['tracked', 'none']);
    // The candidate's own tool keeps the design's reset.
    expect(decisions([batch([fail(), fail()]), batch([ok('read_file')])], policy)).toEqual(['tracked', 'reset']);
  });
});

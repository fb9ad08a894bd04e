/**
 * Batch-by-batch comparison of replayed decisions with the in-tree guard's own events.
 */
import { batchCountBucket, failureCountBucket } from '../core/buckets.js';
import type { BatchDecision } from '../engine/failure-types.js';
import type { InTreeGuardEvent } from '../profiles/qwen-code/in-tree.js';

/** Tolerance for an in-tree event logged in the same millisecond as its batch's last record. */
const SAME_MILLISECOND = 1;

/**
 * The compared fields of one batch on one side (the in-tree event's decision fields); `undefined`
 * means decision `none` (nothing emitted).
 */
export type ComparedDecision = Omit<InTreeGuardEvent, 'promptId' | 'timeMillis' | 'mode'>;

/** One compared batch. */
export interface BatchComparison {
  readonly promptId: string;
  /** 1-based batch index; `0` for an in-tree event that no replayed batch precedes. */
  readonly batch: number;
  readonly ours: ComparedDecision | undefined;
  readonly inTree: ComparedDecision | undefined;
  readonly agree: boolean;
}

/** Result of {@link compareWithInTree}. */
export interface ComparisonResult {
  readonly batches: readonly BatchComparison[];
  readonly agreeing: number;
  readonly total: number;
  /**
   * Prompts left out: the in-tree guard does not run on their route (headless), or it left no event
   * at all for them, so whether it ran cannot be told (its mode was `off`, or it is not this build).
   */
  readonly skippedPrompts: readonly string[];
  /** Why each of {@link ComparisonResult.skippedPrompts} was left out, by prompt id. */
  readonly skipReasons: ReadonlyMap<string, 'no_in_tree_guard_on_route' | 'no_in_tree_events'>;
}

function fromOurs(d: BatchDecision): ComparedDecision | undefined {
  const o = d.outcome;
  if (o.decision === 'none') return undefined;
  return {
    decision: o.decision,
    phaseBefore: o.phaseBefore,
    phaseAfter: o.phaseAfter,
    failureCountBucket: failureCountBucket(o.failureCount),
    batchCountBucket: batchCountBucket(o.batchCount),
    candidateOrdinal: o.candidateOrdinal,
    resetReason: o.resetReason,
  };
}

function fromInTree(e: InTreeGuardEvent): ComparedDecision {
  return {
    decision: e.decision,
    phaseBefore: e.phaseBefore,
    phaseAfter: e.phaseAfter,
    failureCountBucket: e.failureCountBucket,
    batchCountBucket: e.batchCountBucket,
    candidateOrdinal: e.candidateOrdinal,
    resetReason: e.resetReason,
  };
}

function same(a: ComparedDecision | undefined, b: ComparedDecision | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.decision === b.decision &&
    a.phaseBefore === b.phaseBefore &&
    a.phaseAfter === b.phaseAfter &&
    a.failureCountBucket === b.failureCountBucket &&
    a.batchCountBucket === b.batchCountBucket &&
    a.candidateOrdinal === b.candidateOrdinal &&
    a.resetReason === b.resetReason
  );
}

/**
 * Align each in-tree event with the latest replayed batch of its prompt whose last record precedes
 * it (the in-tree guard reduces right after the batch settles), then compare every batch. A batch
 * with no in-tree event means the in-tree decision was `none`. A prompt with no in-tree event at
 * all for which the replay made a transition is not compared: on the headless route qwen-code has no
 * in-tree guard, and on ACP an absent guard (mode `off`) looks the same as one that decided `none`
 * throughout.
 */
export function compareWithInTree(decisions: readonly BatchDecision[], inTree: readonly InTreeGuardEvent[]): ComparisonResult {
  const byPrompt = new Map<string, BatchDecision[]>();
  for (const d of decisions) {
    const list = byPrompt.get(d.promptId) ?? [];
    list.push(d);
    byPrompt.set(d.promptId, list);
  }
  const eventsByPrompt = new Map<string, InTreeGuardEvent[]>();
  for (const e of inTree) {
    const list = eventsByPrompt.get(e.promptId) ?? [];
    list.push(e);
    eventsByPrompt.set(e.promptId, list);
  }
  const prompts = [...new Set([...byPrompt.keys(), ...eventsByPrompt.keys()])];
  const batches: BatchComparison[] = [];
  const skippedPrompts: string[] = [];
  const skipReasons = new Map<string, 'no_in_tree_guard_on_route' | 'no_in_tree_events'>();
  for (const promptId of prompts) {
    const ours = (byPrompt.get(promptId) ?? []).slice().sort((a, b) => a.batch - b.batch);
    const events = eventsByPrompt.get(promptId) ?? [];
    if (events.length === 0 && ours.some((d) => d.outcome.decision !== 'none')) {
      // Nothing to compare against: a headless prompt has no in-tree guard; an ACP prompt with no
      // event at all had it off (or a build without it). Disagreement cannot be told from silence.
      // (When both sides are silent, they agree batch by batch, whatever the in-tree mode was.)
      skippedPrompts.push(promptId);
      skipReasons.set(promptId, ours.length > 0 && ours.every((d) => d.route !== 'acp_foreground') ? 'no_in_tree_guard_on_route' : 'no_in_tree_events');
      continue;
    }
    const matched = new Map<number, InTreeGuardEvent[]>();
    for (const e of events) {
      let target = 0;
      for (const d of ours) if (d.lastActivityMillis <= e.timeMillis + SAME_MILLISECOND) target = d.batch;
      const list = matched.get(target) ?? [];
      list.push(e);
      matched.set(target, list);
    }
    for (const e of matched.get(0) ?? []) {
      batches.push({ promptId, batch: 0, ours: undefined, inTree: fromInTree(e), agree: false });
    }
    for (const d of ours) {
      const evs = matched.get(d.batch) ?? [];
      const mine = fromOurs(d);
      if (evs.length === 0) {
        batches.push({ promptId, batch: d.batch, ours: mine, inTree: undefined, agree: mine === undefined });
        continue;
      }
      evs.forEach((e, i) => {
        const theirs = fromInTree(e);
        const agree = i === 0 && same(mine, theirs);
        batches.push({ promptId, batch: d.batch, ours: i === 0 ? mine : undefined, inTree: theirs, agree });
      });
    }
  }
  const agreeing = batches.filter((b) => b.agree).length;
  return { batches, agreeing, total: batches.length, skippedPrompts, skipReasons };
}

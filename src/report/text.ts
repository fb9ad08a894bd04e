/**
 * Text and JSON-lines rendering of replay results.
 */
import { batchCountBucket, failureCountBucket } from '../core/buckets.js';
import type { BatchDecision } from '../engine/failure-engine.js';
import type { RepetitionDecisionRecord } from '../engine/repetition-engine.js';
import type { InvariantResult } from '../replay/audit.js';
import type { ComparisonResult } from '../replay/compare.js';

/** The `--format json` object of one decision; `resetReason` only on resets. */
export interface DecisionLine {
  readonly promptId: string;
  readonly batch: number;
  readonly mode: string;
  readonly decision: string;
  readonly phaseBefore: string;
  readonly phaseAfter: string;
  readonly failureCountBucket: string;
  readonly batchCountBucket: string;
  readonly candidateOrdinal: number;
  readonly resetReason?: string;
}

/** The JSON line of a decision (never called for `none`). */
export function decisionLine(d: BatchDecision): DecisionLine {
  const o = d.outcome;
  const line: DecisionLine = {
    promptId: d.promptId,
    batch: d.batch,
    mode: d.mode,
    decision: o.decision,
    phaseBefore: o.phaseBefore,
    phaseAfter: o.phaseAfter,
    failureCountBucket: failureCountBucket(o.failureCount),
    batchCountBucket: batchCountBucket(o.batchCount),
    candidateOrdinal: o.candidateOrdinal,
  };
  return o.resetReason === undefined ? line : { ...line, resetReason: o.resetReason };
}

/** Counts for the summary. */
export interface ReplaySummary {
  readonly prompts: number;
  readonly batches: number;
  readonly decisions: Readonly<Record<string, number>>;
  readonly resetReasons: Readonly<Record<string, number>>;
  readonly wouldWarn: number;
  readonly wouldStop: number;
  readonly warned: number;
  readonly stopped: number;
}

/** Summarise decisions. */
export function summarise(decisions: readonly BatchDecision[]): ReplaySummary {
  const decisionsCount: Record<string, number> = {};
  const reasons: Record<string, number> = {};
  const prompts = new Set<string>();
  for (const d of decisions) {
    prompts.add(d.promptId);
    const k = d.outcome.decision;
    decisionsCount[k] = (decisionsCount[k] ?? 0) + 1;
    if (d.outcome.resetReason !== undefined) reasons[d.outcome.resetReason] = (reasons[d.outcome.resetReason] ?? 0) + 1;
  }
  return {
    prompts: prompts.size,
    batches: decisions.length,
    decisions: decisionsCount,
    resetReasons: reasons,
    wouldWarn: decisionsCount.would_warn ?? 0,
    wouldStop: decisionsCount.would_stop ?? 0,
    warned: decisionsCount.warned ?? 0,
    stopped: decisionsCount.stopped ?? 0,
  };
}

function counts(r: Readonly<Record<string, number>>): string {
  const parts = Object.entries(r).map(([k, v]) => `${k} ${v}`);
  return parts.length === 0 ? '-' : parts.join(', ');
}

/** Human-readable timeline, per prompt, batch by batch. */
export function renderTimeline(decisions: readonly BatchDecision[]): string[] {
  const lines: string[] = [];
  let current: string | undefined;
  for (const d of [...decisions].sort((a, b) => (a.promptId < b.promptId ? -1 : a.promptId > b.promptId ? 1 : a.batch - b.batch))) {
    if (d.promptId !== current) {
      current = d.promptId;
      lines.push(`prompt ${d.promptId} (route ${d.route}, mode ${d.mode})`);
    }
    const o = d.outcome;
    const obs = d.receipt.observations.length;
    const detail =
      o.decision === 'none'
        ? 'no transition'
        : `${o.phaseBefore} -> ${o.phaseAfter}  failures ${failureCountBucket(o.failureCount)}  batches ${batchCountBucket(o.batchCount)}  candidate ${o.candidateOrdinal}` +
          (o.resetReason === undefined ? '' : `  reason ${o.resetReason}`) +
          (o.action.type === 'none' ? '' : `  action ${o.action.type}`);
    lines.push(`  batch ${String(d.batch).padStart(3)}  ${o.decision.padEnd(10)}  ${detail}  (${obs} call${obs === 1 ? '' : 's'}${d.receipt.complete ? '' : ', incomplete'})`);
  }
  return lines;
}

/** Summary lines. */
export function renderSummary(
  s: ReplaySummary,
  spans: number,
  logs: number,
  unjudged: readonly { readonly promptId: string; readonly reason: string }[] = [],
  evictions: readonly { readonly promptId: string; readonly reason: string }[] = [],
): string[] {
  return [
    `summary: ${s.prompts} prompt(s), ${s.batches} batch(es) from ${spans} span(s) and ${logs} log record(s)`,
    ...evictions.slice(0, 10).map((e) => `  prompt ${e.promptId} evicted (${e.reason}): its later batches were not judged`),
    ...(evictions.length > 10 ? [`  ... ${evictions.length - 10} more evicted prompt(s)`] : []),
    ...unjudged.map((u) => `  final batch of ${u.promptId} not judged: the turn ended first (${u.reason.replace(/_/g, ' ')})`),
    `  decisions: ${counts(s.decisions)}`,
    `  reset reasons: ${counts(s.resetReasons)}`,
    `  would_warn ${s.wouldWarn}, would_stop ${s.wouldStop}, warned ${s.warned}, stopped ${s.stopped}`,
  ];
}

function side(d: ComparisonResult['batches'][number]['ours']): string {
  if (d === undefined) return 'none';
  return `${d.decision}(${d.phaseBefore}->${d.phaseAfter} ${d.failureCountBucket}/${d.batchCountBucket} #${d.candidateOrdinal}${d.resetReason ? ` ${d.resetReason}` : ''})`;
}

/** Comparison lines: disagreements, then `agreement: N/M batches`. */
export function renderComparison(c: ComparisonResult): string[] {
  const lines: string[] = [];
  for (const b of c.batches) {
    if (!b.agree) lines.push(`  differs: ${b.promptId} batch ${b.batch}: replay ${side(b.ours)}, in-tree ${side(b.inTree)}`);
  }
  for (const p of c.skippedPrompts) lines.push(`  not compared: ${p} (no in-tree guard on this route)`);
  lines.push(`agreement: ${c.agreeing}/${c.total} batches`);
  return lines;
}

/** Invariant lines. */
export function renderInvariants(results: readonly InvariantResult[]): string[] {
  const lines = ['invariants:'];
  for (const r of results) {
    lines.push(`  ${r.held ? 'held    ' : 'VIOLATED'}  ${r.description}`);
    for (const v of r.violations.slice(0, 10)) lines.push(`            ${v}`);
    if (r.violations.length > 10) lines.push(`            ... ${r.violations.length - 10} more`);
  }
  return lines;
}

/** Lines of the identical tool-call repetition breaker: its reported decisions per prompt, and a count. */
export function renderRepetition(records: readonly RepetitionDecisionRecord[]): string[] {
  const counts: Record<string, number> = {};
  const lines: string[] = [];
  for (const r of records) {
    counts[r.outcome.decision] = (counts[r.outcome.decision] ?? 0) + 1;
    lines.push(
      `  ${r.promptId}: ${r.outcome.decision} (${r.outcome.phaseBefore} -> ${r.outcome.phaseAfter}, run ${failureCountBucket(r.outcome.runLength)})`,
    );
  }
  return [`identical-call repetition guard: ${Object.keys(counts).length > 0 ? Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ') : 'no warn or abort'}`, ...lines];
}

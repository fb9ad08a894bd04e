/**
 * Text and JSON-lines rendering of replay results.
 */
import { outputId } from '../otel/output-id.js';
import { batchCountBucket, failureCountBucket } from '../core/buckets.js';
import { isUntypedFailure } from '../core/failure/reducer.js';
import type { UntypedFailurePolicy } from '../core/failure/reducer.js';
import type { BatchDecision, UnjudgedReason } from '../engine/failure-types.js';
import type { UnjudgedBatch } from '../replay/replay.js';
import type { RepetitionDecisionRecord } from '../engine/repetition-engine.js';
import type { InvariantResult } from '../replay/audit.js';
import type { ComparisonResult } from '../replay/compare.js';

/** Value of the `guard` key of the failure guard's `--format json` records. */
export const FAILURE_GUARD = 'repeated_tool_failure';
/** Value of the `guard` key of the identical-call breaker's `--format json` records. */
export const REPETITION_GUARD = 'identical_call';

/** The `--format json` object of one decision; `resetReason` only on resets. */
export interface DecisionLine {
  readonly guard: typeof FAILURE_GUARD;
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
    guard: FAILURE_GUARD,
    promptId: outputId(d.promptId),
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

/** The `--format json` object of a batch that was not judged on its outcomes (no `decision` key). */
export interface UnjudgedLine {
  readonly guard: typeof FAILURE_GUARD;
  readonly promptId: string;
  readonly batch: number;
  readonly judged: false;
  readonly reason: UnjudgedReason;
}

/** The JSON line of an unjudged batch. */
export function unjudgedLine(u: UnjudgedBatch): UnjudgedLine {
  return { guard: FAILURE_GUARD, promptId: outputId(u.promptId), batch: u.batch, judged: false, reason: u.reason };
}

/** The `--format json` object of one reported decision of the identical-call breaker. */
export interface RepetitionLine {
  readonly guard: typeof REPETITION_GUARD;
  readonly promptId: string;
  readonly mode: string;
  readonly decision: string;
  readonly phaseBefore: string;
  readonly phaseAfter: string;
  /** Run length bucket (`0 | 1-2 | 3-4 | 5-7 | 8+`), as on the breaker's counter. */
  readonly runLengthBucket: string;
  /** Where the call was seen: the Session's hook, or telemetry. */
  readonly source: string;
}

/** The JSON line of a breaker decision. */
export function repetitionLine(r: RepetitionDecisionRecord): RepetitionLine {
  return {
    guard: REPETITION_GUARD,
    promptId: outputId(r.promptId),
    mode: r.mode,
    decision: r.outcome.decision,
    phaseBefore: r.outcome.phaseBefore,
    phaseAfter: r.outcome.phaseAfter,
    runLengthBucket: failureCountBucket(r.outcome.runLength),
    source: r.source,
  };
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
  /**
   * Calls that failed with no execution error type (`error`/`error`, type missing or `unknown`):
   * untyped, so ineligible by the design (a batch holding one resets the candidate). Counted so
   * that a wire whose failures carry no type (Codex's bare `success: "false"`) shows them.
   */
  readonly untypedFailures: number;
  /** Batches holding at least one untyped failure. */
  readonly untypedFailureBatches: number;
  /** Untyped failures per agent: the producer's `service.name` where its profile reads it, else `-`. */
  readonly untypedFailuresByAgent: Readonly<Record<string, number>>;
  /** What the untyped failures were under: the design's `ineligible`, or the opt-in `key-by-tool`. */
  readonly untypedFailurePolicy: UntypedFailurePolicy;
}

/**
 * Summarise decisions.
 *
 * @param untypedFailurePolicy - the policy the decisions were made under (how the summary words
 *   the untyped failures); @defaultValue `'ineligible'`
 */
export function summarise(decisions: readonly BatchDecision[], untypedFailurePolicy: UntypedFailurePolicy = 'ineligible'): ReplaySummary {
  const decisionsCount: Record<string, number> = {};
  const reasons: Record<string, number> = {};
  const prompts = new Set<string>();
  let untypedFailures = 0;
  let untypedFailureBatches = 0;
  const byAgent: Record<string, number> = {};
  for (const d of decisions) {
    prompts.add(d.promptId);
    const untyped = d.receipt.observations.filter(isUntypedFailure).length;
    untypedFailures += untyped;
    if (untyped > 0) {
      untypedFailureBatches += 1;
      const agent = d.serviceName ?? '-';
      byAgent[agent] = (byAgent[agent] ?? 0) + untyped;
    }
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
    untypedFailures,
    untypedFailureBatches,
    untypedFailuresByAgent: byAgent,
    untypedFailurePolicy,
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
      lines.push(`prompt ${outputId(d.promptId)} (route ${d.route}, mode ${d.mode})`);
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

/** What the summary says of each unjudged reason. */
const UNJUDGED_TEXT: Readonly<Record<UnjudgedReason, string>> = {
  turn_cancelled: 'the turn ended first (turn cancelled)',
  cancelled_call: 'the turn ended first (cancelled call)',
  other_loop_stop: 'the turn ended first (other loop stop)',
  no_terminal_records: 'no terminal record of any call',
};

/** Summary lines. */
export function renderSummary(
  s: ReplaySummary,
  spans: number,
  logs: number,
  unjudged: readonly UnjudgedBatch[] = [],
  evictions: readonly { readonly promptId: string; readonly reason: string }[] = [],
  clockAnomalies = 0,
): string[] {
  const finals = unjudged.filter((u) => u.reason !== 'no_terminal_records');
  const blind = unjudged.filter((u) => u.reason === 'no_terminal_records');
  return [
    `summary: ${s.prompts} prompt(s), ${s.batches} batch(es) from ${spans} span(s) and ${logs} log record(s)`,
    ...evictions.slice(0, 10).map((e) => `  prompt ${outputId(e.promptId)} evicted (${e.reason}): its later batches were not judged`),
    ...(evictions.length > 10 ? [`  ... ${evictions.length - 10} more evicted prompt(s)`] : []),
    ...finals.map((u) => `  final batch of ${outputId(u.promptId)} not judged: ${UNJUDGED_TEXT[u.reason]}`),
    ...(blind.length === 0 ? [] : [`  ${blind.length} batch(es) of ${new Set(blind.map((u) => u.promptId)).size} prompt(s) not judged: ${UNJUDGED_TEXT.no_terminal_records}`]),
    ...(clockAnomalies === 0 ? [] : [`  ${clockAnomalies} span(s) end before they start (a clock step): judged by their terminal records`]),
    `  decisions: ${counts(s.decisions)}`,
    `  reset reasons: ${counts(s.resetReasons)}`,
    ...(s.untypedFailures === 0
      ? []
      : [
          s.untypedFailurePolicy === 'key-by-tool'
            ? `  untyped failures: ${s.untypedFailures} call(s) in ${s.untypedFailureBatches} batch(es) failed with no error type: keyed by tool alone (--untyped-failures key-by-tool)`
            : `  untyped failures: ${s.untypedFailures} call(s) in ${s.untypedFailureBatches} batch(es) failed with no error type: counted here, never toward a stop (the design's unknown: each such batch resets the candidate; --untyped-failures key-by-tool keys them by tool)`,
          `    per agent (service.name): ${counts(s.untypedFailuresByAgent)}`,
        ]),
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
    if (!b.agree) lines.push(`  differs: ${outputId(b.promptId)} batch ${b.batch}: replay ${side(b.ours)}, in-tree ${side(b.inTree)}`);
  }
  for (const p of c.skippedPrompts) {
    const why = c.skipReasons.get(p) === 'no_in_tree_events' ? 'no in-tree guard event for this prompt: the in-tree guard was off' : 'no in-tree guard on this route';
    lines.push(`  not compared: ${p} (${why})`);
  }
  lines.push(`agreement: ${c.agreeing}/${c.total} batches`);
  return lines;
}

/** What the profile's telemetry cannot show (its registry entry's fixed sentences), under the summary. */
export function renderBlindSpots(blindSpots: readonly string[] | undefined): string[] {
  return (blindSpots ?? []).map((b) => `  not visible in this telemetry: ${b}`);
}

/**
 * Invariant lines: `held`, `VIOLATED`, or `not checkable` (with why) when the input could not show
 * a violation and none was found.
 */
export function renderInvariants(results: readonly InvariantResult[]): string[] {
  const lines = ['invariants:'];
  for (const r of results) {
    if (r.held && r.notCheckable !== undefined) {
      lines.push(`  not checkable  ${r.description}: ${r.notCheckable}`);
      continue;
    }
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
      `  ${outputId(r.promptId)}: ${r.outcome.decision} (${r.outcome.phaseBefore} -> ${r.outcome.phaseAfter}, run ${failureCountBucket(r.outcome.runLength)})`,
    );
  }
  return [`identical-call repetition guard: ${Object.keys(counts).length > 0 ? Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ') : 'no warn or abort'}`, ...lines];
}

/**
 * The rollout gate's per-prompt facts ({@link GatePrompt}) from the replay's decisions, its
 * unjudged batches and the agents' report inputs. Definitions: docs/report.md, "The rollout gate".
 */
import type { BatchDecision } from '../engine/failure-types.js';
import type { PromptRecord, UsageRecord } from '../profiles/report-inputs.js';
import type { InTreeGuardEvent } from '../profiles/qwen-code/in-tree.js';
import type { UnjudgedBatch } from '../replay/replay.js';
import type { GatePrompt } from './gate.js';

/** Ten minutes: the design's "disconnect-or-retry-within-ten-minutes" window. */
export const RETRY_WINDOW_MILLIS = 600_000;

const COHORTS = new Set(['shadow', 'warn', 'enforce']);

function cohortOf(value: string | undefined): GatePrompt['cohort'] {
  const v = value?.trim().toLowerCase();
  return v !== undefined && COHORTS.has(v) ? (v as GatePrompt['cohort']) : undefined;
}

/** What {@link gatePrompts} reads. */
export interface GateSources {
  readonly decisionsByPrompt: ReadonlyMap<string, readonly BatchDecision[]>;
  readonly unjudged: readonly UnjudgedBatch[];
  readonly usageByPrompt: ReadonlyMap<string, readonly UsageRecord[]>;
  readonly prompts: ReadonlyMap<string, PromptRecord>;
  /** The in-tree guard's events (its recorded mode is a prompt's cohort when the telemetry states none). */
  readonly inTree: readonly InTreeGuardEvent[];
  /** A prompt's extent (first and last record). */
  readonly extent: (promptId: string) => readonly [number, number];
  /** A prompt's environment label. */
  readonly environment: (promptId: string) => string;
}

/**
 * Every prompt of the input (judged, or seen by an agent's collector) as the gate sees it.
 * A prompt's cohort is the mode its telemetry states (the cohort attribute on its records or
 * Resource), else the mode the in-tree guard recorded for it; otherwise it is not known and the
 * prompt is left out of the cohort comparisons (the verdict counts it).
 */
export function gatePrompts(s: GateSources): GatePrompt[] {
  const unjudged = new Map<string, Set<string>>();
  for (const u of s.unjudged) {
    const set = unjudged.get(u.promptId) ?? new Set<string>();
    set.add(u.reason);
    unjudged.set(u.promptId, set);
  }
  const inTreeMode = new Map<string, string>();
  for (const e of s.inTree) if (e.mode !== undefined && !inTreeMode.has(e.promptId)) inTreeMode.set(e.promptId, e.mode);
  const ids = new Set([...s.decisionsByPrompt.keys(), ...s.prompts.keys()]);
  const out: (GatePrompt & { readonly promptId: string; readonly follow: string })[] = [];
  for (const promptId of ids) {
    const decisions = s.decisionsByPrompt.get(promptId) ?? [];
    const info = s.prompts.get(promptId);
    const reasons = unjudged.get(promptId);
    const usage = s.usageByPrompt.get(promptId) ?? [];
    const [start, end] = s.extent(promptId);
    const cancelled = reasons?.has('turn_cancelled') === true || reasons?.has('cancelled_call') === true;
    const stops = decisions.filter((d) => d.outcome.decision === 'stopped');
    const warnedOrdinals = new Set<number>();
    let stopsWithoutReminder = 0;
    for (const d of decisions) {
      if (d.outcome.decision === 'warned') warnedOrdinals.add(d.outcome.candidateOrdinal);
      if (d.outcome.decision === 'stopped' && (!warnedOrdinals.has(d.outcome.candidateOrdinal) || !d.receipt.complete)) stopsWithoutReminder++;
    }
    out.push({
      promptId,
      follow: info?.sessionId ?? info?.owner ?? decisions[0]?.sessionId ?? promptId,
      cluster: info?.owner ?? info?.sessionId ?? decisions[0]?.sessionId ?? promptId,
      cohort: cohortOf(info?.cohort) ?? cohortOf(inTreeMode.get(promptId)),
      environment: s.environment(promptId),
      startMillis: start,
      endMillis: end,
      unreliableDrain: decisions.some((d) => d.outcome.resetReason === 'unreliable_input'),
      cancelled,
      completed: !cancelled && stops.length === 0 && reasons?.has('other_loop_stop') !== true,
      retriedWithinTenMinutes: false,
      rounds: usage.length,
      tokens: usage.reduce((sum, u) => sum + (u.inputTokens ?? 0) + (u.outputTokens ?? 0), 0),
      stoppedLoop: decisions.some((d) => d.outcome.decision === 'would_stop' || d.outcome.decision === 'stopped'),
      stops: stops.length,
      stopsWithoutReminder,
    });
  }
  // Retry: a prompt that did not complete, followed by another prompt of the same session (else
  // owner) that starts within ten minutes of its end.
  const bySession = new Map<string, (typeof out)[number][]>();
  for (const p of out) {
    const list = bySession.get(p.follow) ?? [];
    list.push(p);
    bySession.set(p.follow, list);
  }
  const retried = new Set<string>();
  for (const list of bySession.values()) {
    list.sort((a, b) => a.startMillis - b.startMillis);
    for (let i = 0; i < list.length - 1; i++) {
      const p = list[i] as (typeof out)[number];
      const next = list[i + 1] as (typeof out)[number];
      if (!p.completed && next.startMillis - p.endMillis <= RETRY_WINDOW_MILLIS) retried.add(p.promptId);
    }
  }
  return out.map(({ promptId, follow: _follow, ...p }) => ({ ...p, retriedWithinTenMinutes: retried.has(promptId) }));
}

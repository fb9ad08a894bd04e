/**
 * The operator's verdict: what the run was (its title), the loop keys ranked by what they cost,
 * the daily trend of reminders and stops per environment, and the one-paragraph verdict's figures.
 * Pure: from the replay's decisions and the report's savings; closed labels, counts, days and money only.
 */
import type { BatchDecision } from '../engine/failure-types.js';
import type { SpendAfter } from './what-if.js';
import { addSpend, NO_SPEND } from './what-if.js';

/** What the run was, from its decisions' modes. */
export type RunMode = 'shadow' | 'warn' | 'enforce' | 'mixed';

/**
 * The run's mode: the one mode every decision ran under, `mixed` when they differ, `shadow` (the
 * design's default) when there is no decision.
 */
export function runModeOf(decisions: readonly Pick<BatchDecision, 'mode'>[]): RunMode {
  const modes = new Set<string>();
  for (const d of decisions) modes.add(d.mode);
  if (modes.size === 0) return 'shadow';
  if (modes.size > 1) return 'mixed';
  const [only] = modes;
  return only === 'warn' || only === 'enforce' ? only : 'shadow';
}

/** One loop key (by closed labels: agent, execution error type, tool type) and what its loops cost. */
export interface KeyCostRow {
  readonly agent: string;
  readonly executionErrorType: string;
  readonly toolType: string;
  /** Prompts whose candidate with this key reached the reminder. */
  readonly prompts: number;
  /** Of those, prompts that reached the stop point. */
  readonly stopped: number;
  readonly afterReminder: SpendAfter;
  readonly afterStop: SpendAfter;
}

/** One day of one environment: reminders and stops (would or actual) decided that day (UTC). */
export interface TrendRow {
  /** `YYYY-MM-DD`, UTC. */
  readonly day: string;
  readonly environment: string;
  readonly wouldWarn: number;
  readonly wouldStop: number;
}

/** The prompt-level facts the ranking needs. */
export interface RankedPrompt {
  readonly agent: string;
  readonly executionErrorType: string;
  readonly toolType: string;
  readonly stopped: boolean;
  readonly afterReminder: SpendAfter;
  readonly afterStop: SpendAfter;
}

/**
 * Loop keys ranked by cost: money after the reminder (known money), then tokens after it, then
 * prompts; ties by label.
 */
export function rankKeysByCost(prompts: readonly RankedPrompt[]): KeyCostRow[] {
  const rows = new Map<string, { agent: string; executionErrorType: string; toolType: string; prompts: number; stopped: number; afterReminder: SpendAfter; afterStop: SpendAfter }>();
  for (const p of prompts) {
    const k = `${p.agent}\u0000${p.executionErrorType}\u0000${p.toolType}`;
    const row = rows.get(k) ?? { agent: p.agent, executionErrorType: p.executionErrorType, toolType: p.toolType, prompts: 0, stopped: 0, afterReminder: NO_SPEND, afterStop: NO_SPEND };
    row.prompts++;
    if (p.stopped) row.stopped++;
    row.afterReminder = addSpend(row.afterReminder, p.afterReminder);
    row.afterStop = addSpend(row.afterStop, p.afterStop);
    rows.set(k, row);
  }
  const tokens = (s: SpendAfter): number => s.inputTokens + s.outputTokens + s.cacheReadTokens + s.cacheCreationTokens;
  return [...rows.values()].sort(
    (a, b) =>
      b.afterReminder.costUsd - a.afterReminder.costUsd ||
      tokens(b.afterReminder) - tokens(a.afterReminder) ||
      b.prompts - a.prompts ||
      (`${a.agent} ${a.executionErrorType} ${a.toolType}` < `${b.agent} ${b.executionErrorType} ${b.toolType}` ? -1 : 1),
  );
}

const DAY = 86_400_000;

/** The UTC day of a time, `YYYY-MM-DD`. */
export function utcDay(millis: number): string {
  return new Date(Math.floor(millis / DAY) * DAY).toISOString().slice(0, 10);
}

/**
 * Reminders and stops per environment and UTC day, every day from the input's first to its last
 * record (days without any as zeros), environments in label order.
 *
 * @param decisions - the decisions, each with its prompt's environment label
 * @param firstMillis - the input's first record time
 * @param lastMillis - the input's last record time
 * @param maxDays - days shown at most (the last ones). @defaultValue `92`
 */
export function dailyTrend(
  decisions: readonly { readonly atMillis: number; readonly environment: string; readonly decision: string }[],
  firstMillis: number | undefined,
  lastMillis: number | undefined,
  maxDays = 92,
): TrendRow[] {
  if (firstMillis === undefined || lastMillis === undefined) return [];
  const environments = new Set<string>();
  const counts = new Map<string, { wouldWarn: number; wouldStop: number }>();
  for (const d of decisions) {
    environments.add(d.environment);
    const warn = d.decision === 'would_warn' || d.decision === 'warned';
    const stop = d.decision === 'would_stop' || d.decision === 'stopped';
    if (!warn && !stop) continue;
    const k = `${utcDay(d.atMillis)}\u0000${d.environment}`;
    const c = counts.get(k) ?? { wouldWarn: 0, wouldStop: 0 };
    if (warn) c.wouldWarn++;
    else c.wouldStop++;
    counts.set(k, c);
  }
  const first = Math.max(Math.floor(firstMillis / DAY), Math.floor(lastMillis / DAY) - maxDays + 1);
  const rows: TrendRow[] = [];
  for (let day = first; day <= Math.floor(lastMillis / DAY); day++) {
    const label = utcDay(day * DAY);
    for (const environment of [...environments].sort()) {
      const c = counts.get(`${label}\u0000${environment}`);
      rows.push({ day: label, environment, wouldWarn: c?.wouldWarn ?? 0, wouldStop: c?.wouldStop ?? 0 });
    }
  }
  return rows;
}

/** The figures of the verdict paragraph. */
export interface Verdict {
  readonly runMode: RunMode;
  readonly prompts: number;
  /** Prompts that reached the reminder (a loop by the design's threshold). */
  readonly looped: number;
  /** Prompts enforce would have stopped (or stopped). */
  readonly stopped: number;
  readonly savedAfterStop: SpendAfter;
  readonly invariantsHeld: number;
  readonly invariantsViolated: number;
  readonly invariantsNotCheckable: number;
  /** Reminded prompts whose candidate tool later succeeded without new input (design default policy). */
  readonly falsePositiveCandidates: number;
  /** Agents whose usage is not in the input. */
  readonly agentsWithoutUsage: readonly string[];
  /** Batches not judged, all reasons. */
  readonly unjudgedBatches: number;
  /** Records of producers no profile reads (not judged at all). */
  readonly unreadRecords: number;
  /** Prompts evicted before they ended. */
  readonly evictedPrompts: number;
  /** Prompts whose cohort (mode) the telemetry does not state. */
  readonly promptsWithoutCohort: number;
}

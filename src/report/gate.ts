/**
 * The rollout gate (design, "Rollout"; issue 35): each criterion of Phase 1 → 2, Phase 2 → 3 and
 * Phase 3 → promote, computed from telemetry, PASS / FAIL / NOT ENOUGH DATA with its figure and,
 * for cohort comparisons, a confidence interval from resampling owners ({@link clusterBootstrap}).
 * Every measure is defined in docs/report.md ("The rollout gate").
 *
 * Pure: from per-prompt facts ({@link GatePrompt}) the report assembles from the replay and the
 * agents' telemetry. Holds numbers and closed labels only (owners are never part of the result).
 */
import { clusterBootstrap, meanOf, quantileOf, rate } from './bootstrap.js';
import type { BootstrapOptions, Cluster, Interval } from './bootstrap.js';

/** What the gate knows of one prompt. */
export interface GatePrompt {
  /** The cluster the prompt is resampled with: its owner, else its session, else itself. */
  readonly cluster: string;
  /** The mode it ran under (its cohort); `undefined`: not stated, left out of the comparisons. */
  readonly cohort: 'shadow' | 'warn' | 'enforce' | undefined;
  /** `deployment.environment` label (`(unset)` when the Resource has none). */
  readonly environment: string;
  readonly startMillis: number;
  readonly endMillis: number;
  /** The input drain was unreliable in the prompt (a reset with reason `unreliable_input`): not a supported-host prompt. */
  readonly unreliableDrain: boolean;
  /** The user cancelled the turn (a batch not judged as `turn_cancelled` or `cancelled_call`). */
  readonly cancelled: boolean;
  /** The turn ended on its own: not cancelled, not stopped by this guard or another loop guard. */
  readonly completed: boolean;
  /** Not completed, and the same session (else owner) started another prompt within ten minutes of its end. */
  readonly retriedWithinTenMinutes: boolean;
  /** Model requests (rounds) of the prompt. */
  readonly rounds: number;
  /** Input + output tokens of its requests. */
  readonly tokens: number;
  /** It reached the stop point (`would_stop` in shadow and warn, `stopped` in enforce). */
  readonly stoppedLoop: boolean;
  /** Stops in it not preceded by their candidate's reminder, or whose stop batch was incomplete. */
  readonly stopsWithoutReminder: number;
  /** Stops (`stopped`) in it. */
  readonly stops: number;
}

/** A gate verdict. */
export type GateStatus = 'PASS' | 'FAIL' | 'NOT ENOUGH DATA';

/** The phase transition a criterion gates. */
export type GatePhase = 'phase1_to_2' | 'phase2_to_3' | 'phase3_to_promote';

/** The criteria, by id (docs/report.md defines each). */
export const GATE_CRITERIA = [
  'seven_complete_days',
  'environment_present',
  'invariants_zero',
  'unreliable_drain_apart',
  'cancellation',
  'completion',
  'retry_within_ten_minutes',
  'p95_latency',
  'mean_tokens',
  'mean_rounds',
  'stopped_loop_rate',
  'stop_after_reminder',
] as const;

/** A criterion id. */
export type GateCriterionId = (typeof GATE_CRITERIA)[number];

/** How a figure reads: a count, days, a difference of shares (treatment − control), a ratio (treatment / control). */
export type GateUnit = 'count' | 'days' | 'difference' | 'ratio';

/** One row of the gate table. */
export interface GateRow {
  readonly phase: GatePhase;
  readonly criterion: GateCriterionId;
  /** The environment the row is about; `-` for the whole input. */
  readonly environment: string;
  readonly status: GateStatus;
  readonly unit: GateUnit;
  /** The figure (a count, days, a difference or a ratio); `NaN` when it cannot be computed. */
  readonly estimate: number;
  /** The interval's bounds, for cohort comparisons; absent otherwise. */
  readonly low?: number;
  readonly high?: number;
  /** The largest acceptable "worse" value (margin), for cohort comparisons. */
  readonly margin?: number;
  /** Owners (clusters) in the treatment and control cohorts, for cohort comparisons. */
  readonly treatmentOwners?: number;
  readonly controlOwners?: number;
  /** Prompts in the treatment and control cohorts, for cohort comparisons. */
  readonly treatmentPrompts?: number;
  readonly controlPrompts?: number;
}

/** Options of {@link computeGate}. */
export interface GateOptions extends BootstrapOptions {
  /** Owners each cohort needs before a comparison is judged. @defaultValue `10` */
  readonly minOwners?: number;
  /** Complete days each environment needs in Phase 1. @defaultValue `7` */
  readonly days?: number;
}

/** What the whole input says about the Phase 1 invariants. */
export interface GateInvariants {
  readonly violated: number;
  readonly notCheckable: number;
}

const DAY = 86_400_000;
/** Design, "Phase 3": completion not worse by more than one percentage point. */
const COMPLETION_MARGIN = 0.01;
/** Design, "Phase 3": disconnect-or-retry not worse by more than 0.5 point. */
const RETRY_MARGIN = 0.005;
/** Design gives no Phase 2 margin for cancellation; the Phase 3 completion margin is used (docs/report.md). */
const CANCELLATION_MARGIN = 0.01;
/** Design, "Phase 3": p95 latency, mean tokens, mean rounds each no worse than 1.10 times control. */
const RATIO_MARGIN = 1.1;

/** Whole UTC days inside [first, last]. */
export function completeDays(firstMillis: number, lastMillis: number): number {
  const firstWhole = Math.ceil(firstMillis / DAY);
  const lastWhole = Math.floor((lastMillis + 1) / DAY);
  return Math.max(0, lastWhole - firstWhole);
}

function clusters(prompts: readonly GatePrompt[]): Cluster<GatePrompt>[] {
  const by = new Map<string, GatePrompt[]>();
  for (const p of prompts) {
    const list = by.get(p.cluster);
    if (list === undefined) by.set(p.cluster, [p]);
    else list.push(p);
  }
  return [...by.values()];
}

type Comparison = { readonly criterion: GateCriterionId; readonly unit: 'difference' | 'ratio'; readonly margin: number; readonly worse: (t: readonly GatePrompt[], c: readonly GatePrompt[]) => number };

const diff =
  (hit: (p: GatePrompt) => boolean, sign = 1): Comparison['worse'] =>
  (t, c) =>
    sign * (rate(t, hit) - rate(c, hit));
const ratio =
  (stat: (ps: readonly GatePrompt[]) => number): Comparison['worse'] =>
  (t, c) =>
    stat(t) / stat(c);

const P95_LATENCY = ratio((ps) => quantileOf(ps, (p) => p.endMillis - p.startMillis, 0.95));
const MEAN_TOKENS = ratio((ps) => meanOf(ps, (p) => p.tokens));
const MEAN_ROUNDS = ratio((ps) => meanOf(ps, (p) => p.rounds));

/** Phase 2 → 3: the warn cohort against the shadow baseline shows no regression. */
const PHASE2: readonly Comparison[] = [
  { criterion: 'cancellation', unit: 'difference', margin: CANCELLATION_MARGIN, worse: diff((p) => p.cancelled) },
  { criterion: 'retry_within_ten_minutes', unit: 'difference', margin: RETRY_MARGIN, worse: diff((p) => p.retriedWithinTenMinutes) },
  { criterion: 'p95_latency', unit: 'ratio', margin: RATIO_MARGIN, worse: P95_LATENCY },
  { criterion: 'mean_tokens', unit: 'ratio', margin: RATIO_MARGIN, worse: MEAN_TOKENS },
  { criterion: 'mean_rounds', unit: 'ratio', margin: RATIO_MARGIN, worse: MEAN_ROUNDS },
];

/** Phase 3 → promote: the enforce cohort against the warn control. */
const PHASE3: readonly Comparison[] = [
  // Completion: worse is control minus treatment (a lower completion rate).
  { criterion: 'completion', unit: 'difference', margin: COMPLETION_MARGIN, worse: diff((p) => p.completed, -1) },
  { criterion: 'retry_within_ten_minutes', unit: 'difference', margin: RETRY_MARGIN, worse: diff((p) => p.retriedWithinTenMinutes) },
  { criterion: 'p95_latency', unit: 'ratio', margin: RATIO_MARGIN, worse: P95_LATENCY },
  { criterion: 'mean_tokens', unit: 'ratio', margin: RATIO_MARGIN, worse: MEAN_TOKENS },
  { criterion: 'mean_rounds', unit: 'ratio', margin: RATIO_MARGIN, worse: MEAN_ROUNDS },
];

function compare(phase: GatePhase, environment: string, c: Comparison, treatment: readonly GatePrompt[], control: readonly GatePrompt[], options: GateOptions): GateRow {
  const t = clusters(treatment);
  const k = clusters(control);
  const base = {
    phase,
    criterion: c.criterion,
    environment,
    unit: c.unit,
    margin: c.margin,
    treatmentOwners: t.length,
    controlOwners: k.length,
    treatmentPrompts: treatment.length,
    controlPrompts: control.length,
  };
  const minOwners = options.minOwners ?? 10;
  if (t.length < minOwners || k.length < minOwners) return { ...base, status: 'NOT ENOUGH DATA', estimate: Number.NaN };
  const i: Interval = clusterBootstrap(t, k, c.worse, options);
  const status: GateStatus = !Number.isFinite(i.high) ? 'NOT ENOUGH DATA' : i.high <= c.margin ? 'PASS' : i.low > c.margin ? 'FAIL' : 'NOT ENOUGH DATA';
  return { ...base, status, estimate: i.estimate, low: i.low, high: i.high };
}

/**
 * The gate table.
 *
 * @param prompts - every judged prompt
 * @param invariants - the Phase 1 invariants over the whole input
 * @param extent - first and last record time of each environment
 */
export function computeGate(
  prompts: readonly GatePrompt[],
  invariants: GateInvariants,
  extent: ReadonlyMap<string, { readonly firstMillis: number; readonly lastMillis: number }>,
  options: GateOptions = {},
): GateRow[] {
  const rows: GateRow[] = [];
  const needDays = options.days ?? 7;
  const environments = [...new Set([...prompts.map((p) => p.environment), ...extent.keys()])].sort();
  // Phase 1 → 2.
  for (const env of environments) {
    const x = extent.get(env);
    const days = x === undefined ? 0 : completeDays(x.firstMillis, x.lastMillis);
    rows.push({ phase: 'phase1_to_2', criterion: 'seven_complete_days', environment: env, status: days >= needDays ? 'PASS' : 'NOT ENOUGH DATA', unit: 'days', estimate: days });
  }
  const unset = prompts.filter((p) => p.environment === '(unset)').length;
  rows.push({ phase: 'phase1_to_2', criterion: 'environment_present', environment: '-', status: prompts.length === 0 ? 'NOT ENOUGH DATA' : unset === 0 ? 'PASS' : 'FAIL', unit: 'count', estimate: unset });
  rows.push({ phase: 'phase1_to_2', criterion: 'invariants_zero', environment: '-', status: invariants.violated > 0 ? 'FAIL' : 'PASS', unit: 'count', estimate: invariants.violated });
  const unreliable = prompts.filter((p) => p.unreliableDrain).length;
  rows.push({
    phase: 'phase1_to_2',
    criterion: 'unreliable_drain_apart',
    environment: '-',
    status: prompts.length - unreliable > 0 ? 'PASS' : 'NOT ENOUGH DATA',
    unit: 'count',
    estimate: unreliable,
  });
  // Phase 2 → 3 and Phase 3 → promote, per environment, on supported-host prompts of a known cohort.
  for (const env of environments) {
    const supported = prompts.filter((p) => p.environment === env && !p.unreliableDrain);
    const cohort = (m: GatePrompt['cohort']): GatePrompt[] => supported.filter((p) => p.cohort === m);
    const shadow = cohort('shadow');
    const warn = cohort('warn');
    const enforce = cohort('enforce');
    for (const c of PHASE2) rows.push(compare('phase2_to_3', env, c, warn, shadow, options));
    for (const c of PHASE3) rows.push(compare('phase3_to_promote', env, c, enforce, warn, options));
    // Stopped-loop rate consistent with warn: the difference's interval covers zero.
    const s = compare('phase3_to_promote', env, { criterion: 'stopped_loop_rate', unit: 'difference', margin: 0, worse: diff((p) => p.stoppedLoop) }, enforce, warn, options);
    const judged = s.low !== undefined && s.high !== undefined && Number.isFinite(s.low) && Number.isFinite(s.high);
    rows.push(judged ? { ...s, status: (s.low as number) <= 0 && 0 <= (s.high as number) ? 'PASS' : 'FAIL' } : { ...s, status: 'NOT ENOUGH DATA' });
    const stops = enforce.reduce((sum, p) => sum + p.stops, 0);
    const bad = enforce.reduce((sum, p) => sum + p.stopsWithoutReminder, 0);
    rows.push({ phase: 'phase3_to_promote', criterion: 'stop_after_reminder', environment: env, status: bad > 0 ? 'FAIL' : stops === 0 ? 'NOT ENOUGH DATA' : 'PASS', unit: 'count', estimate: bad });
  }
  rows.push({ phase: 'phase3_to_promote', criterion: 'invariants_zero', environment: '-', status: invariants.violated > 0 ? 'FAIL' : 'PASS', unit: 'count', estimate: invariants.violated });
  return rows;
}

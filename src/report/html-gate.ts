/**
 * The rollout gate section: one row per criterion, phase and environment, PASS / FAIL / NOT ENOUGH
 * DATA with its figure and, for cohort comparisons, the owner-resampled interval.
 */
import { e, n, table } from './html-kit.js';
import type { GateCriterionId, GatePhase, GateRow } from './gate.js';
import type { ReportData } from './report-data.js';

const PHASE_TITLES: Readonly<Record<GatePhase, string>> = {
  phase1_to_2: 'Phase 1 → 2 (shadow → warn)',
  phase2_to_3: 'Phase 2 → 3 (warn cohort against the shadow baseline)',
  phase3_to_promote: 'Phase 3 → promote (enforce cohort against the warn control)',
};

const CRITERIA: Readonly<Record<GateCriterionId, string>> = {
  seven_complete_days: 'at least seven complete days of telemetry',
  environment_present: '<code>deployment.environment</code> on every prompt (prompts without it)',
  invariants_zero: 'every invariant at zero violations',
  unreliable_drain_apart: 'prompts with an unreliable drain counted apart from the supported-host baseline',
  cancellation: 'cancellation rate: no regression',
  completion: 'completion rate not worse by more than 1 point',
  retry_within_ten_minutes: 'retry within ten minutes: no regression (Phase 3: not worse by more than 0.5 point)',
  p95_latency: 'p95 latency no worse than 1.10× control',
  mean_tokens: 'mean tokens per prompt no worse than 1.10× control',
  mean_rounds: 'mean model rounds per prompt no worse than 1.10× control',
  stopped_loop_rate: 'stopped-loop rate consistent with warn (enforce stopped − warn would_stop; the interval covers 0)',
  stop_after_reminder: 'every stop preceded by its reminder, with a complete receipt (stops without)',
};

function num(v: number | undefined, unit: GateRow['unit']): string {
  if (v === undefined || !Number.isFinite(v)) return '-';
  if (unit === 'ratio') return `${v.toFixed(3)}×`;
  if (unit === 'difference') return `${(v * 100).toFixed(2)} pt`;
  return n(v);
}

function status(r: GateRow): string {
  const cls = r.status === 'PASS' ? 'held' : r.status === 'FAIL' ? 'violated' : 'unchecked';
  return `<span class="${cls}" data-status="${e(r.status)}">${e(r.status)}</span>`;
}

/** Render the gate section. */
export function renderGateSection(data: ReportData): string {
  const phases = Object.keys(PHASE_TITLES) as GatePhase[];
  return `<section id="gate"><h2>Rollout gate</h2>
<p>Each criterion of the design's rollout, computed from this telemetry. Cohort comparisons use supported-host prompts of a known cohort (the mode each prompt ran under: its <code>repeated_tool_failure_guard.mode</code> attribute, else the in-tree guard's recorded mode), per <code>deployment.environment</code>; the interval is a 95% percentile interval from resampling owners (cluster bootstrap, seeded), because one owner's prompts are not independent. PASS: the interval's worse end is within the margin; FAIL: its better end is beyond it; NOT ENOUGH DATA: too few owners in a cohort, or an interval that straddles the margin. Measures are defined in docs/report.md.</p>
${phases
  .map((phase) => {
    const rows = data.gate.filter((r) => r.phase === phase);
    return `<h3>${PHASE_TITLES[phase]}</h3>${table(
      ['criterion', 'environment', 'result', 'figure', '95% interval', 'margin', 'owners (treatment / control)', 'prompts (treatment / control)'],
      rows.map((r) => [
        CRITERIA[r.criterion],
        `<code>${e(r.environment)}</code>`,
        status(r),
        num(r.estimate, r.unit),
        r.low === undefined ? '-' : `[${num(r.low, r.unit)}, ${num(r.high, r.unit)}]`,
        r.margin === undefined ? '-' : num(r.margin, r.unit),
        r.treatmentOwners === undefined ? '-' : `${n(r.treatmentOwners)} / ${n(r.controlOwners ?? 0)}`,
        r.treatmentPrompts === undefined ? '-' : `${n(r.treatmentPrompts)} / ${n(r.controlPrompts ?? 0)}`,
      ]),
    )}`;
  })
  .join('\n')}</section>`;
}

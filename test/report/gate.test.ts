/**
 * The rollout gate on generated fleets with known effects (issue 35, part 3): a planted regression
 * FAILs, no effect PASSes with an interval that covers zero (a difference) or one (a ratio), too
 * few owners gives NOT ENOUGH DATA. Owners differ from one another (an owner effect), so an
 * interval that treated prompts as independent would be too narrow; the fleets are seeded.
 */
import { describe, expect, it } from 'vitest';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { completeDays, computeGate } from '../../src/report/gate.js';
import type { GateCriterionId, GatePhase, GatePrompt, GateRow } from '../../src/report/gate.js';
import { clusterBootstrap, meanOf } from '../../src/report/bootstrap.js';
import { renderReport } from '../../src/report/report.js';
import type { ChartRenderer } from '../../src/report/charts.js';
import { replayRecords } from '../../src/replay/replay.js';
import { parseTelemetryText } from '../../src/otlp/telemetry-file.js';
import { scenarioOtlpJsonLines } from '../helpers/report-scenario.js';
import type { ScenarioPrompt } from '../helpers/report-scenario.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 2);

/** What a cohort's prompts look like, relative to a baseline prompt. */
interface Effect {
  readonly tokens?: number;
  readonly rounds?: number;
  readonly latency?: number;
  readonly cancelled?: number;
  readonly notCompleted?: number;
  readonly retried?: number;
  readonly stopped?: number;
}

/** `owners` owners of one cohort, `prompts` prompts each, with an owner effect on tokens and latency. */
function cohort(mode: 'shadow' | 'warn' | 'enforce', owners: number, prompts: number, effect: Effect, seed: number, env = 'internal'): GatePrompt[] {
  const rng = xoroshiro128plus(seed);
  const u = (): number => uniformInt(rng, 0, 1_000_000) / 1_000_000;
  const out: GatePrompt[] = [];
  for (let o = 0; o < owners; o++) {
    const ownerScale = 0.6 + 0.8 * u();
    for (let p = 0; p < prompts; p++) {
      const rounds = Math.max(1, Math.round((2 + 6 * u()) * (effect.rounds ?? 1)));
      const start = T0 + (o * prompts + p) * 60_000;
      const latency = Math.round(rounds * 4000 * ownerScale * (0.5 + u()) * (effect.latency ?? 1));
      const cancelled = u() < (effect.cancelled ?? 0.02);
      const completed = !cancelled && u() >= (effect.notCompleted ?? 0.03);
      out.push({
        cluster: `${mode}-owner-${o}`,
        cohort: mode,
        environment: env,
        startMillis: start,
        endMillis: start + latency,
        unreliableDrain: false,
        cancelled,
        completed,
        retriedWithinTenMinutes: !completed && u() < (effect.retried ?? 0.3),
        rounds,
        tokens: Math.round(rounds * 1500 * ownerScale * (0.7 + 0.6 * u()) * (effect.tokens ?? 1)),
        stoppedLoop: u() < (effect.stopped ?? 0.02),
        stops: 0,
        stopsWithoutReminder: 0,
      });
    }
  }
  return out;
}

const NO_INVARIANT_VIOLATED = { violated: 0, notCheckable: 0 };
const WEEK = new Map([['internal', { firstMillis: T0 - 1, lastMillis: T0 + 8 * DAY }]]);

function row(rows: readonly GateRow[], phase: GatePhase, criterion: GateCriterionId, env = 'internal'): GateRow {
  const r = rows.find((x) => x.phase === phase && x.criterion === criterion && x.environment === env);
  if (r === undefined) throw new Error(`no row ${phase} ${criterion} ${env}`);
  return r;
}

const covers = (r: GateRow, v: number): boolean => r.low !== undefined && r.high !== undefined && r.low <= v && v <= r.high;

/** Base rates of a fleet large enough for a 0.5-point margin: rare cancellations and retries. */
const QUIET: Effect = { cancelled: 0.01, notCompleted: 0.02, retried: 0.2 };

describe('rollout gate: Phase 3 → promote, enforce against the warn control', () => {
  const control = cohort('warn', 60, 12, {}, 1);

  it('no effect: every comparison PASSes and each interval covers no difference', () => {
    // 150 owners × 30 prompts per cohort: a 0.5-point margin needs thousands of prompts.
    const rows = computeGate([...cohort('enforce', 150, 30, QUIET, 2), ...cohort('warn', 150, 30, QUIET, 1)], NO_INVARIANT_VIOLATED, WEEK);
    for (const c of ['completion', 'retry_within_ten_minutes'] as const) {
      const r = row(rows, 'phase3_to_promote', c);
      expect(r.status, c).toBe('PASS');
      expect(covers(r, 0), `${c} [${r.low}, ${r.high}]`).toBe(true);
    }
    for (const c of ['p95_latency', 'mean_tokens', 'mean_rounds'] as const) {
      const r = row(rows, 'phase3_to_promote', c);
      expect(r.status, c).toBe('PASS');
      expect(covers(r, 1), `${c} [${r.low}, ${r.high}]`).toBe(true);
    }
    const stopped = row(rows, 'phase3_to_promote', 'stopped_loop_rate');
    expect(stopped.status, `[${stopped.low}, ${stopped.high}]`).toBe('PASS');
  });

  it.each([
    ['mean_tokens', { tokens: 1.5 }],
    ['mean_rounds', { rounds: 1.6 }],
    ['p95_latency', { latency: 1.6 }],
    ['completion', { notCompleted: 0.25 }],
    ['retry_within_ten_minutes', { notCompleted: 0.25, retried: 0.9 }],
    ['stopped_loop_rate', { stopped: 0.3 }],
  ] as const)('a planted %s regression FAILs', (criterion, effect) => {
    const rows = computeGate([...cohort('enforce', 60, 12, effect, 2), ...control], NO_INVARIANT_VIOLATED, WEEK);
    expect(row(rows, 'phase3_to_promote', criterion).status).toBe('FAIL');
  });

  it('too few owners in the enforce cohort: NOT ENOUGH DATA, however many prompts they have', () => {
    const rows = computeGate([...cohort('enforce', 4, 200, { tokens: 3 }, 2), ...control], NO_INVARIANT_VIOLATED, WEEK);
    for (const c of ['completion', 'retry_within_ten_minutes', 'p95_latency', 'mean_tokens', 'mean_rounds', 'stopped_loop_rate'] as const) {
      const r = row(rows, 'phase3_to_promote', c);
      expect(r.status, c).toBe('NOT ENOUGH DATA');
      expect(r.treatmentOwners).toBe(4);
    }
  });

  it('a stop without its reminder FAILs; no stop at all is NOT ENOUGH DATA', () => {
    const enforce = cohort('enforce', 20, 5, {}, 2);
    expect(row(computeGate([...enforce, ...control], NO_INVARIANT_VIOLATED, WEEK), 'phase3_to_promote', 'stop_after_reminder').status).toBe('NOT ENOUGH DATA');
    const stopped = enforce.map((p, i) => (i < 3 ? { ...p, stops: 1, stopsWithoutReminder: i === 0 ? 1 : 0 } : p));
    expect(row(computeGate([...stopped, ...control], NO_INVARIANT_VIOLATED, WEEK), 'phase3_to_promote', 'stop_after_reminder').status).toBe('FAIL');
    const good = enforce.map((p, i) => (i < 3 ? { ...p, stops: 1 } : p));
    expect(row(computeGate([...good, ...control], NO_INVARIANT_VIOLATED, WEEK), 'phase3_to_promote', 'stop_after_reminder').status).toBe('PASS');
  });
});

describe('rollout gate: Phase 2 → 3, warn against the shadow baseline', () => {
  const shadow = cohort('shadow', 150, 30, QUIET, 11);
  it('no effect PASSes; planted cancellation and token regressions FAIL', () => {
    const none = computeGate([...cohort('warn', 150, 30, QUIET, 12), ...shadow], NO_INVARIANT_VIOLATED, WEEK);
    for (const c of ['cancellation', 'retry_within_ten_minutes', 'p95_latency', 'mean_tokens', 'mean_rounds'] as const) expect(row(none, 'phase2_to_3', c).status, c).toBe('PASS');
    const worse = computeGate([...cohort('warn', 150, 30, { ...QUIET, cancelled: 0.1, tokens: 1.4 }, 12), ...shadow], NO_INVARIANT_VIOLATED, WEEK);
    expect(row(worse, 'phase2_to_3', 'cancellation').status).toBe('FAIL');
    expect(row(worse, 'phase2_to_3', 'mean_tokens').status).toBe('FAIL');
  });
});

describe('rollout gate: Phase 1 → 2', () => {
  it('seven complete days per environment, the environment on every prompt, invariants, the unreliable drain apart', () => {
    const prompts = [...cohort('shadow', 3, 2, {}, 5, 'internal'), ...cohort('shadow', 3, 2, {}, 6, 'public')];
    const extent = new Map([
      ['internal', { firstMillis: T0 + 1, lastMillis: T0 + 8 * DAY }],
      ['public', { firstMillis: T0 + 1, lastMillis: T0 + 7 * DAY }],
    ]);
    const rows = computeGate([...prompts, { ...(prompts[0] as GatePrompt), environment: '(unset)', unreliableDrain: true }], { violated: 1, notCheckable: 0 }, extent);
    expect(row(rows, 'phase1_to_2', 'seven_complete_days', 'internal')).toMatchObject({ status: 'PASS', estimate: 7 });
    expect(row(rows, 'phase1_to_2', 'seven_complete_days', 'public')).toMatchObject({ status: 'NOT ENOUGH DATA', estimate: 6 });
    expect(row(rows, 'phase1_to_2', 'environment_present', '-')).toMatchObject({ status: 'FAIL', estimate: 1 });
    expect(row(rows, 'phase1_to_2', 'invariants_zero', '-')).toMatchObject({ status: 'FAIL', estimate: 1 });
    expect(row(rows, 'phase1_to_2', 'unreliable_drain_apart', '-')).toMatchObject({ status: 'PASS', estimate: 1 });
  });

  it.each([
    [T0, T0 + 7 * DAY, 7],
    [T0 + 1, T0 + 7 * DAY, 6],
    [T0, T0 + 7 * DAY - 2, 6],
    [T0 + 5, T0 + 5, 0],
  ])('complete UTC days in [%i, %i]: %i', (a, b, days) => {
    expect(completeDays(a, b)).toBe(days);
  });
});

describe('cluster bootstrap', () => {
  it('is reproducible for a seed, and wider than a prompt-level interval when owners differ', () => {
    const t = cohort('enforce', 30, 20, {}, 21);
    const c = cohort('warn', 30, 20, {}, 22);
    const by = (ps: GatePrompt[]) => {
      const m = new Map<string, GatePrompt[]>();
      for (const p of ps) m.set(p.cluster, [...(m.get(p.cluster) ?? []), p]);
      return [...m.values()];
    };
    const stat = (a: readonly GatePrompt[], b: readonly GatePrompt[]) => meanOf(a, (p) => p.tokens) / meanOf(b, (p) => p.tokens);
    const owners = clusterBootstrap(by(t), by(c), stat, { seed: 7 });
    expect(clusterBootstrap(by(t), by(c), stat, { seed: 7 })).toEqual(owners);
    const prompts = clusterBootstrap(
      t.map((p) => [p]),
      c.map((p) => [p]),
      stat,
      { seed: 7 },
    );
    expect(owners.high - owners.low).toBeGreaterThan(prompts.high - prompts.low);
  });
});

describe('the gate from telemetry: a fleet of qwen-code owners, cohorts from the Resource', () => {
  const stubCharts: ChartRenderer = (_o, w, h) => `<svg width="${w}" height="${h}"></svg>`;
  /** One owner's prompts as qwen-code logs, its Resource naming its owner, environment and mode. */
  function owner(mode: string, i: number, tokenScale: number, owners: number): string {
    const prompts: ScenarioPrompt[] = Array.from({ length: 3 }, (_, p) => ({
      sessionId: `${mode}-session-${i}`,
      turn: p + 1,
      batches: [[{ tool: 'read_file', ok: true, args: { n: p } }]],
      tokens: (k) => [Math.round((1000 + 37 * ((i * 7 + p * 3 + k) % 11)) * tokenScale * (1 + (i % 5) / 10)), 100],
      startMillis: T0 + (i + owners * p) * 700_000,
    }));
    return scenarioOtlpJsonLines(prompts, { 'service.version': '0.24.4', 'deployment.environment': 'internal', 'user.id': `owner-${mode}-${i}`, 'repeated_tool_failure_guard.mode': mode });
  }

  it.each([
    ['no effect', 1, 'PASS'],
    ['enforce spends 1.6× the tokens', 1.6, 'FAIL'],
  ])('%s: mean tokens %s', async (_name, scale, expected) => {
    const text = [...Array.from({ length: 15 }, (_, i) => owner('warn', i, 1, 15)), ...Array.from({ length: 15 }, (_, i) => owner('enforce', i, scale, 15))].join('');
    const records = parseTelemetryText(text, 'fleet.jsonl');
    const result = await replayRecords(records);
    const { data, html } = await renderReport(records, result, { charts: stubCharts });
    const r = row(data.gate, 'phase3_to_promote', 'mean_tokens');
    expect(r).toMatchObject({ status: expected, treatmentOwners: 15, controlOwners: 15, treatmentPrompts: 45, controlPrompts: 45 });
    if (expected === 'PASS') expect(covers(r, 1)).toBe(true);
    expect(data.verdict.promptsWithoutCohort).toBe(0);
    expect(html).toContain('id="gate"');
  });
});

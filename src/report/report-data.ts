/**
 * The report's data: everything the HTML shows, and nothing else. It holds only what guard
 * telemetry may hold (design "Telemetry and privacy"): prompt and session ids, closed-vocabulary
 * labels, identifier-shaped error types, counts, token sums and times. {@link auditReportData}
 * checks that structurally.
 *
 * Longer than the ~350-line norm on purpose: the data of the five report sections and the structural
 * audit that checks every field of them sit together, so a new field cannot skip the audit.
 */
import { isUntypedFailure } from '../core/failure/reducer.js';
import type { BatchDecision } from '../engine/failure-types.js';
import type { InvariantResult } from '../replay/audit.js';
import type { ReplayResult } from '../replay/replay.js';
import type { ReportInputs, UsageRecord } from '../profiles/report-inputs.js';
import { addSpend, breakerMarks, breakerWhatIf, failureWhatIf, NO_SPEND, spendAfter } from './what-if.js';
import type { BreakerWhatIfRow, CostOf, FailureWhatIfRow, SpendAfter, WhatIfGrid, WhatIfPrompt } from './what-if.js';
import { requestCost } from './prices.js';
import { dailyTrend, rankKeysByCost, runModeOf } from './verdict.js';
import { computeGate } from './gate.js';
import type { GateOptions, GateRow } from './gate.js';
import { gatePrompts } from './gate-inputs.js';
import type { KeyCostRow, RankedPrompt, RunMode, TrendRow, Verdict } from './verdict.js';
import type { PriceTable } from './prices.js';

/** Counts of one group (a profile, or a deployment.environment × service.version pair). */
export interface GroupRow {
  /** Profile name, or `deployment.environment` (`(unset)` when the Resource has none). */
  readonly group: string;
  /** `service.version` of the Resource, `(unset)` when absent; `-` for profile rows. */
  readonly serviceVersion: string;
  readonly prompts: number;
  readonly batches: number;
  readonly wouldWarn: number;
  readonly wouldStop: number;
}

/** Records of one producer no profile read: its names (label-shaped, else `(other)`), never values. */
export interface UnreadRow {
  /** The Resource's `service.name`, `(unset)` without one, `(other)` when not label-shaped. */
  readonly serviceName: string;
  /** Its instrumentation scope names (each label-shaped, else `(other)`). */
  readonly scopeNames: readonly string[];
  readonly records: number;
}

/** Savings of one prompt that reached the reminder. */
export interface SavingsRow {
  readonly promptId: string;
  /** The profile (agent) that read the prompt. */
  readonly agent: string;
  /** `deployment.environment` of its Resource (`(unset)`, `(other)` when not label-shaped). */
  readonly environment: string;
  readonly mode: string;
  /** Batch at which the reminder was (or would be) given. */
  readonly warnBatch: number;
  /** Batch at which the prompt was (or would be) stopped; `undefined` when it never was. */
  readonly stopBatch: number | undefined;
  readonly afterReminder: SpendAfter;
  readonly afterStop: SpendAfter;
}

/** Savings of a group of prompts (an agent, a `deployment.environment`). */
export interface SavingsGroupRow {
  /** Agent (profile name) or `deployment.environment`. */
  readonly group: string;
  /** Prompts of the group that reached the reminder. */
  readonly prompts: number;
  /** Of those, prompts that reached the stop point. */
  readonly stopped: number;
  readonly afterReminder: SpendAfter;
  readonly afterStop: SpendAfter;
}

/** One batch on a prompt's timeline. */
export interface TimelineBatch {
  readonly batch: number;
  /** When the batch settled (its last record), in milliseconds since the epoch. */
  readonly atMillis: number;
  readonly calls: number;
  /** Eligible failures per key index (index into {@link PromptTimeline.keys}). */
  readonly failuresByKey: readonly { readonly key: number; readonly count: number }[];
  readonly decision: string;
  readonly phaseAfter: string;
  readonly candidateOrdinal: number;
  readonly resetReason: string | undefined;
  readonly complete: boolean;
}

/** A failure key, shown without its tool name: error type and tool type only. */
export interface TimelineKey {
  readonly executionErrorType: string;
  readonly toolType: string;
}

/** One prompt's timeline. */
export interface PromptTimeline {
  readonly promptId: string;
  readonly sessionId: string | undefined;
  readonly mode: string;
  readonly route: string;
  readonly startMillis: number;
  readonly endMillis: number;
  readonly keys: readonly TimelineKey[];
  readonly batches: readonly TimelineBatch[];
  /** The failure guard's phase over time. */
  readonly bands: readonly { readonly phase: string; readonly fromMillis: number; readonly toMillis: number }[];
  /** The identical-call breaker's reported decisions (default config, re-run on the prompt's calls at their own times). */
  readonly breaker: readonly { readonly atMillis: number; readonly decision: string; readonly runLength: number }[];
  /** Model requests (ends), for the request marks. */
  readonly requests: readonly { readonly atMillis: number; readonly inputTokens: number; readonly outputTokens: number }[];
}

/** An invariant, without its violation texts (they hold only prompt ids and batch numbers; counts suffice). */
export interface ReportInvariant {
  readonly id: string;
  readonly description: string;
  readonly held: boolean;
  /** Why the input could not show a violation (a fixed reason of the profile), when it could not. */
  readonly notCheckable?: string;
  readonly violations: number;
}

/** Everything the report shows. */
export interface ReportData {
  readonly profile: string;
  /** What the run was, from its decisions' modes (the title). */
  readonly runMode: RunMode;
  /** The verdict paragraph's figures. */
  readonly verdict: Verdict;
  /** Loop keys (closed labels) ranked by what their loops cost after the reminder. */
  readonly keyRanking: readonly KeyCostRow[];
  /** Reminders and stops per environment and UTC day over the input's time range. */
  readonly trend: readonly TrendRow[];
  /** The rollout gate: every criterion of every phase transition, per environment. */
  readonly gate: readonly GateRow[];
  /** What the profile's telemetry cannot show the guard (the registry entry's fixed sentences). */
  readonly blindSpots: readonly string[];
  readonly spans: number;
  readonly logs: number;
  readonly firstMillis: number | undefined;
  readonly lastMillis: number | undefined;
  readonly summary: {
    readonly sessions: number;
    readonly prompts: number;
    readonly batches: number;
    readonly decisions: Readonly<Record<string, number>>;
    readonly resetReasons: Readonly<Record<string, number>>;
    /**
     * Failed calls with no type (`isUntypedFailure`), per agent (the profile that read the prompt):
     * by the design these never count toward a stop; the what-if row `untyped_key_by_tool` shows
     * what keying them by tool would have done.
     */
    readonly untypedFailures: Readonly<Record<string, number>>;
    readonly unjudged: Readonly<Record<string, number>>;
    readonly evictions: Readonly<Record<string, number>>;
    readonly lateRecords: number;
    /** Spans that ended before they started (a clock step), replayed at their start. */
    readonly clockAnomalies: number;
    readonly repetition: Readonly<Record<string, number>>;
    /** Per agent: the profile that read each prompt (under `auto`, each producer's own). */
    readonly byProfile: readonly GroupRow[];
    readonly byDeployment: readonly GroupRow[];
    /** Producers no profile read (their records were not judged). */
    readonly unread: readonly UnreadRow[];
    readonly invariants: readonly ReportInvariant[];
  };
  readonly savings: {
    readonly usageSource: string | undefined;
    /** Where each agent's usage came from; an agent with judged prompts and no entry: usage not known. */
    readonly usageSources: readonly { readonly agent: string; readonly source: string }[];
    /** Agents with judged prompts whose telemetry gave no usage (their savings are not known). */
    readonly agentsWithoutUsage: readonly string[];
    /** Whether a price table was passed (`--prices`). */
    readonly priced: boolean;
    readonly prompts: readonly SavingsRow[];
    readonly byAgent: readonly SavingsGroupRow[];
    readonly byEnvironment: readonly SavingsGroupRow[];
    readonly totalAfterReminder: SpendAfter;
    readonly totalAfterStop: SpendAfter;
  };
  readonly timelines: readonly PromptTimeline[];
  /** How many prompts have a timeline beyond those shown. */
  readonly timelinesOmitted: number;
  readonly whatIf: {
    readonly failure: readonly FailureWhatIfRow[];
    readonly breaker: readonly BreakerWhatIfRow[];
  };
}

/** Options of {@link buildReportData}. */
export interface BuildReportOptions {
  /** @defaultValue `'qwen-code'` */
  readonly profile?: string;
  /** Timelines drawn, most eventful prompts first. @defaultValue `20` */
  readonly maxTimelines?: number;
  readonly grid?: WhatIfGrid;
  /** Prices for requests whose telemetry states no cost (`--prices`); absent: stated costs only. */
  readonly prices?: PriceTable;
  /** Records of producers no profile read (`WholeInputFacts.unread`), for the verdict's "not known". */
  readonly unreadRecords?: number;
  /** The rollout gate's resampling and thresholds. */
  readonly gate?: GateOptions;
}

/** A `service.name` shown in the report (the audit's label shape), else `(other)`. */
const LABEL_SHAPE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;
const label = (name: string | undefined): string => (name === undefined ? '(unset)' : LABEL_SHAPE.test(name) ? name : '(other)');
/** An instrumentation scope name shown in the report (a package name: `@scope/name` allowed), else `(other)`. */
export const SCOPE_NAME_SHAPE = /^@?[A-Za-z0-9][A-Za-z0-9._+/-]{0,99}$/;
const scopeLabel = (name: string): string => (SCOPE_NAME_SHAPE.test(name) ? name : '(other)');

const ADVANCING = new Set(['tracked', 'would_warn', 'warned', 'would_stop', 'stopped']);
const IDENTIFIER = /^[a-z][a-z0-9_]{0,63}$/;
/** Resource values shown as they are only when they look like labels. */
const RESOURCE_VALUE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

function inc(r: Record<string, number>, k: string, by = 1): void {
  r[k] = (r[k] ?? 0) + by;
}

function resourceLabel(v: string | undefined): string {
  if (v === undefined) return '(unset)';
  return RESOURCE_VALUE.test(v) ? v : '(other)';
}

function isEligibleFailure(o: BatchDecision['receipt']['observations'][number]): boolean {
  return !o.providerDuplicate && o.terminalStatus === 'error' && o.executionStatus === 'error' && !!o.policyToolName && !!o.executionErrorType && o.executionErrorType !== 'unknown';
}

function timelineOf(
  promptId: string,
  batches: readonly BatchDecision[],
  start: number,
  end: number,
  usage: readonly UsageRecord[],
  breaker: PromptTimeline['breaker'],
): PromptTimeline {
  const keyIndex = new Map<string, number>();
  const keys: TimelineKey[] = [];
  const rows: TimelineBatch[] = [];
  const bands: { phase: string; fromMillis: number; toMillis: number }[] = [];
  let phase = 'idle';
  let from = start;
  for (const b of batches) {
    const counts = new Map<number, number>();
    for (const o of b.receipt.observations) {
      if (!isEligibleFailure(o)) continue;
      const k = `${o.policyToolName}\u0000${o.executionErrorType}`;
      let i = keyIndex.get(k);
      if (i === undefined) {
        i = keys.length;
        keyIndex.set(k, i);
        const type = o.executionErrorType as string;
        keys.push({ executionErrorType: IDENTIFIER.test(type) ? type : 'unclassified', toolType: o.toolType ?? 'unknown' });
      }
      counts.set(i, (counts.get(i) ?? 0) + 1);
    }
    const o = b.outcome;
    rows.push({
      batch: b.batch,
      atMillis: b.lastActivityMillis,
      calls: b.receipt.observations.length,
      failuresByKey: [...counts].map(([key, count]) => ({ key, count })),
      decision: o.decision,
      phaseAfter: o.phaseAfter,
      candidateOrdinal: o.candidateOrdinal,
      resetReason: o.resetReason,
      complete: b.receipt.complete,
    });
    if (o.phaseAfter !== phase) {
      const at = Math.max(from, b.lastActivityMillis);
      if (at > from || bands.length > 0) bands.push({ phase, fromMillis: from, toMillis: at });
      phase = o.phaseAfter;
      from = at;
    }
  }
  bands.push({ phase, fromMillis: from, toMillis: Math.max(from, end) });
  const first = batches[0];
  return {
    promptId,
    sessionId: first?.sessionId,
    mode: first?.mode ?? 'shadow',
    route: first?.route ?? 'acp_foreground',
    startMillis: start,
    endMillis: end,
    keys,
    batches: rows,
    bands,
    breaker,
    requests: usage.map((u) => ({ atMillis: u.endMillis, inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0 })),
  };
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const t of items) {
    const k = key(t);
    const list = m.get(k);
    if (list === undefined) m.set(k, [t]);
    else list.push(t);
  }
  return m;
}

/**
 * Build the report's data from a replay, the agent telemetry's inputs and the invariants.
 *
 * @param result - the replay ({@link replayRecords})
 * @param inputs - usage, calls and prompts read by the profile's extractor
 * @param invariants - {@link auditInvariants} over the same replay
 */
export function buildReportData(
  result: ReplayResult,
  inputs: ReportInputs,
  invariants: readonly InvariantResult[],
  options: BuildReportOptions = {},
): ReportData {
  const profile = options.profile ?? 'qwen-code';
  const byPrompt = groupBy(result.decisions, (d) => d.promptId);
  for (const list of byPrompt.values()) list.sort((a, b) => a.batch - b.batch);
  const usageByPrompt = groupBy(inputs.usage, (u) => u.promptId);
  const callsByPrompt = groupBy(inputs.calls, (c) => c.promptId);
  const breakerByPrompt = groupBy(result.repetition, (r) => r.promptId);
  const promptInfo = new Map(inputs.prompts.map((p) => [p.promptId, p]));

  // The agent of a prompt: the profile whose reader saw it, else the only profile in use.
  const onlyProfile = result.profiles.length === 1 ? result.profiles[0] : undefined;
  const agentOf = (promptId: string): string => promptInfo.get(promptId)?.agent ?? onlyProfile ?? profile;
  const decisions: Record<string, number> = {};
  const resetReasons: Record<string, number> = {};
  const untypedByAgent: Record<string, number> = {};
  const sessions = new Set<string>();
  for (const d of result.decisions) {
    inc(decisions, d.outcome.decision);
    if (d.outcome.resetReason !== undefined) inc(resetReasons, d.outcome.resetReason);
    if (d.sessionId !== undefined) sessions.add(d.sessionId);
    const untyped = d.receipt.observations.filter(isUntypedFailure).length;
    if (untyped > 0) inc(untypedByAgent, agentOf(d.promptId), untyped);
  }
  const unjudged: Record<string, number> = {};
  for (const u of result.unjudgedBatches) inc(unjudged, u.reason);
  const evictions: Record<string, number> = {};
  for (const e of result.evictions) inc(evictions, e.reason);
  const repetition: Record<string, number> = {};
  for (const r of result.repetition) inc(repetition, r.outcome.decision);

  const extent = (promptId: string, batches: readonly BatchDecision[]): [number, number] => {
    const p = promptInfo.get(promptId);
    const times = batches.map((b) => b.lastActivityMillis);
    const usage = usageByPrompt.get(promptId) ?? [];
    let lo = p?.startMillis ?? Infinity;
    let hi = p?.endMillis ?? -Infinity;
    for (const t of times) [lo, hi] = [Math.min(lo, t), Math.max(hi, t)];
    for (const u of usage) [lo, hi] = [Math.min(lo, u.startMillis), Math.max(hi, u.endMillis)];
    return [Number.isFinite(lo) ? lo : 0, Number.isFinite(hi) ? hi : 0];
  };

  const costOf = (promptId: string): CostOf => {
    const agent = agentOf(promptId);
    return (u) => requestCost(u, agent, options.prices);
  };
  // Savings: prompts that reached the reminder.
  const savings: SavingsRow[] = [];
  let totalAfterReminder = NO_SPEND;
  let totalAfterStop = NO_SPEND;
  const byAgentSavings = new Map<string, { group: string; prompts: number; stopped: number; afterReminder: SpendAfter; afterStop: SpendAfter }>();
  const ranked: RankedPrompt[] = [];
  const byEnvSavings = new Map<string, { group: string; prompts: number; stopped: number; afterReminder: SpendAfter; afterStop: SpendAfter }>();
  const whatIfPrompts: WhatIfPrompt[] = [];
  const whatIfByPrompt = new Map<string, WhatIfPrompt>();
  const eventful: { promptId: string; score: number }[] = [];
  for (const [promptId, batches] of byPrompt) {
    const [, end] = extent(promptId, batches);
    const usage = usageByPrompt.get(promptId) ?? [];
    const warn = batches.find((b) => b.outcome.decision === 'would_warn' || b.outcome.decision === 'warned');
    const stop = batches.find((b) => b.outcome.decision === 'would_stop' || b.outcome.decision === 'stopped');
    if (warn !== undefined) {
      const cost = costOf(promptId);
      const afterReminder = spendAfter(usage, warn.lastActivityMillis, end, cost);
      const afterStop = stop === undefined ? NO_SPEND : spendAfter(usage, stop.lastActivityMillis, end, cost);
      const agent = agentOf(promptId);
      const environment = resourceLabel(promptInfo.get(promptId)?.environment);
      savings.push({ promptId, agent, environment, mode: warn.mode, warnBatch: warn.batch, stopBatch: stop?.batch, afterReminder, afterStop });
      const key = warn.receipt.observations.find(isEligibleFailure);
      const type = key?.executionErrorType ?? 'unknown';
      ranked.push({ agent, executionErrorType: IDENTIFIER.test(type) ? type : 'unclassified', toolType: key?.toolType ?? 'unknown', stopped: stop !== undefined, afterReminder, afterStop });
      totalAfterReminder = addSpend(totalAfterReminder, afterReminder);
      totalAfterStop = addSpend(totalAfterStop, afterStop);
      for (const [map, group] of [
        [byAgentSavings, agent],
        [byEnvSavings, environment],
      ] as const) {
        const row = map.get(group) ?? { group, prompts: 0, stopped: 0, afterReminder: NO_SPEND, afterStop: NO_SPEND };
        row.prompts++;
        if (stop !== undefined) row.stopped++;
        row.afterReminder = addSpend(row.afterReminder, afterReminder);
        row.afterStop = addSpend(row.afterStop, afterStop);
        map.set(group, row);
      }
    }
    const batchOf = new Map<string, number>();
    for (const b of batches) for (const o of b.receipt.observations) batchOf.set(o.callId, b.batch);
    const calls = (callsByPrompt.get(promptId) ?? []).flatMap((c) => {
      const batch = batchOf.get(c.callId);
      return batch === undefined ? [] : [{ ...c, batch }];
    });
    const whatIf: WhatIfPrompt = { promptId, endMillis: end, batches, calls, usage };
    whatIfPrompts.push(whatIf);
    whatIfByPrompt.set(promptId, whatIf);
    const advancing = batches.filter((b) => ADVANCING.has(b.outcome.decision)).length;
    eventful.push({ promptId, score: advancing * 10 + (breakerByPrompt.get(promptId)?.length ?? 0) * 5 + batches.length });
  }
  savings.sort((a, b) => b.afterStop.inputTokens + b.afterStop.outputTokens - (a.afterStop.inputTokens + a.afterStop.outputTokens) || (a.promptId < b.promptId ? -1 : 1));

  const maxTimelines = options.maxTimelines ?? 20;
  eventful.sort((a, b) => b.score - a.score || (a.promptId < b.promptId ? -1 : 1));
  const timelines = eventful.slice(0, maxTimelines).map(({ promptId }) => {
    const batches = byPrompt.get(promptId) ?? [];
    const [start, end] = extent(promptId, batches);
    const whatIf = whatIfByPrompt.get(promptId);
    return timelineOf(promptId, batches, start, end, usageByPrompt.get(promptId) ?? [], whatIf === undefined ? [] : breakerMarks(whatIf));
  });

  const group = (rows: Map<string, { group: string; serviceVersion: string; prompts: Set<string>; batches: number; wouldWarn: number; wouldStop: number }>): GroupRow[] =>
    [...rows.values()]
      .map((r) => ({ group: r.group, serviceVersion: r.serviceVersion, prompts: r.prompts.size, batches: r.batches, wouldWarn: r.wouldWarn, wouldStop: r.wouldStop }))
      .sort((a, b) => (a.group + a.serviceVersion < b.group + b.serviceVersion ? -1 : 1));
  const byDeployment = new Map<string, { group: string; serviceVersion: string; prompts: Set<string>; batches: number; wouldWarn: number; wouldStop: number }>();
  const byProfile = new Map<string, { group: string; serviceVersion: string; prompts: Set<string>; batches: number; wouldWarn: number; wouldStop: number }>();
  for (const d of result.decisions) {
    const p = promptInfo.get(d.promptId);
    const env = resourceLabel(p?.environment);
    const version = resourceLabel(p?.serviceVersion);
    for (const [map, k, g, v] of [
      [byDeployment, `${env}\u0000${version}`, env, version],
      [byProfile, agentOf(d.promptId), agentOf(d.promptId), '-'],
    ] as const) {
      let row = map.get(k);
      if (row === undefined) {
        row = { group: g, serviceVersion: v, prompts: new Set(), batches: 0, wouldWarn: 0, wouldStop: 0 };
        map.set(k, row);
      }
      row.prompts.add(d.promptId);
      row.batches++;
      if (d.outcome.decision === 'would_warn' || d.outcome.decision === 'warned') row.wouldWarn++;
      if (d.outcome.decision === 'would_stop' || d.outcome.decision === 'stopped') row.wouldStop++;
    }
  }

  const judgedAgents = new Set([...byPrompt.keys()].map(agentOf));
  const usageSources = Object.entries(inputs.usageSources ?? (inputs.usageSource === undefined ? {} : { [onlyProfile ?? profile]: inputs.usageSource }))
    .map(([agent, source]) => ({ agent, source }))
    .sort((a, b) => (a.agent < b.agent ? -1 : 1));
  let firstMillis = Infinity;
  let lastMillis = -Infinity;
  for (const t of [...result.decisions.map((d) => d.lastActivityMillis), ...inputs.usage.map((u) => u.endMillis)]) {
    firstMillis = Math.min(firstMillis, t);
    lastMillis = Math.max(lastMillis, t);
  }
  const first = Number.isFinite(firstMillis) ? firstMillis : undefined;
  const last = Number.isFinite(lastMillis) ? lastMillis : undefined;
  const invariantRows = invariants.map((i) => ({
    id: i.id,
    description: i.description,
    held: i.held,
    ...(i.notCheckable === undefined ? {} : { notCheckable: i.notCheckable }),
    violations: i.violations.length,
  }));
  const failureWhatIfRows = failureWhatIf(whatIfPrompts, inputs.fileChangingTools, options.grid);
  const runMode = runModeOf(result.decisions);
  const gateFacts = gatePrompts({
    decisionsByPrompt: byPrompt,
    unjudged: result.unjudgedBatches,
    usageByPrompt,
    prompts: promptInfo,
    inTree: result.inTree,
    extent: (id) => extent(id, byPrompt.get(id) ?? []),
    environment: (id) => resourceLabel(promptInfo.get(id)?.environment),
  });
  const envExtent = new Map<string, { firstMillis: number; lastMillis: number }>();
  for (const p of gateFacts) {
    const x = envExtent.get(p.environment);
    envExtent.set(p.environment, { firstMillis: Math.min(x?.firstMillis ?? Infinity, p.startMillis), lastMillis: Math.max(x?.lastMillis ?? -Infinity, p.endMillis) });
  }
  const agentsWithoutUsage = [...judgedAgents].filter((a) => !usageSources.some((u) => u.agent === a)).sort();
  const verdict: Verdict = {
    runMode,
    prompts: byPrompt.size,
    looped: savings.length,
    stopped: savings.filter((r) => r.stopBatch !== undefined).length,
    savedAfterStop: totalAfterStop,
    invariantsHeld: invariantRows.filter((i) => i.held && i.notCheckable === undefined).length,
    invariantsViolated: invariantRows.filter((i) => !i.held).length,
    invariantsNotCheckable: invariantRows.filter((i) => i.held && i.notCheckable !== undefined).length,
    falsePositiveCandidates: failureWhatIfRows.find((r) => r.isDefault)?.recoveredAfterReminder ?? 0,
    agentsWithoutUsage,
    unjudgedBatches: result.unjudgedBatches.length,
    unreadRecords: options.unreadRecords ?? 0,
    evictedPrompts: result.evictions.length,
    promptsWithoutCohort: gateFacts.filter((p) => p.cohort === undefined).length,
  };
  return {
    profile,
    runMode,
    verdict,
    keyRanking: rankKeysByCost(ranked),
    gate: computeGate(gateFacts, { violated: verdict.invariantsViolated, notCheckable: verdict.invariantsNotCheckable }, envExtent, options.gate),
    trend: dailyTrend(
      result.decisions.map((d) => ({ atMillis: d.lastActivityMillis, environment: resourceLabel(promptInfo.get(d.promptId)?.environment), decision: d.outcome.decision })),
      first,
      last,
    ),
    blindSpots: result.blindSpots ?? [],
    spans: result.spanCount,
    logs: result.logCount,
    firstMillis: first,
    lastMillis: last,
    summary: {
      sessions: sessions.size,
      prompts: byPrompt.size,
      batches: result.decisions.length,
      decisions,
      resetReasons,
      untypedFailures: untypedByAgent,
      unjudged,
      evictions,
      lateRecords: result.lateRecords,
      clockAnomalies: result.clockAnomalies,
      repetition,
      byProfile: group(byProfile),
      unread: result.unread.map((u) => ({ serviceName: label(u.serviceName), scopeNames: u.scopeNames.map(scopeLabel), records: u.records })),
      byDeployment: group(byDeployment),
      invariants: invariantRows,
    },
    savings: {
      usageSource: inputs.usageSource,
      usageSources,
      agentsWithoutUsage,
      priced: options.prices !== undefined,
      prompts: savings,
      byAgent: [...byAgentSavings.values()].sort((a, b) => (a.group < b.group ? -1 : 1)),
      byEnvironment: [...byEnvSavings.values()].sort((a, b) => (a.group < b.group ? -1 : 1)),
      totalAfterReminder,
      totalAfterStop,
    },
    timelines,
    timelinesOmitted: Math.max(0, eventful.length - timelines.length),
    whatIf: {
      failure: failureWhatIfRows,
      breaker: breakerWhatIf(whatIfPrompts, options.grid),
    },
  };
}

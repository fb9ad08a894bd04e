/**
 * Policy what-if: the same telemetry re-run through the pure reducers with other parameters.
 *
 * The failure guard's receipts (one per judged batch, as the replay assembled them) go through
 * {@link reduceFailure} with a {@link FailurePolicy}; the tool calls go through
 * {@link reduceRepetition} with other warn/abort pairs and two input variants. The runtime default
 * is always the design's (8 failures, 2 batches; breaker 3/5): these policies exist only here and
 * as documented opt-in options.
 *
 * Shadow telemetry shows what the model did without a reminder, so every number here is a volume
 * estimate, not a prediction of how a model reacts to the reminder (design "Phase 1: shadow").
 */
import type { BatchDecision } from '../engine/failure-types.js';
import { isReportedRepetitionDecision } from '../engine/repetition-engine.js';
import { DEFAULT_FAILURE_POLICY, initialFailureState, reduceFailure } from '../core/failure/reducer.js';
import type { FailurePolicy } from '../core/failure/reducer.js';
import type { FailureState } from '../core/failure/types.js';
import { DEFAULT_REPETITION_CONFIG, resolveRepetitionConfig } from '../core/repetition/config.js';
import { initialRepetitionState, reduceRepetition } from '../core/repetition/reducer.js';
import type { RepetitionState } from '../core/repetition/types.js';
import type { CallRecord, UsageRecord } from '../profiles/report-inputs.js';

/** Requests, tokens and wall time spent after a point of a prompt. */
export interface SpendAfter {
  /** Model requests that ended after the point. */
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Input tokens read from the prompt cache (where the agent records them). */
  readonly cacheReadTokens: number;
  /** Input tokens written to the prompt cache (where the agent records them). */
  readonly cacheCreationTokens: number;
  /** US dollars of the requests whose cost is known (stated by the telemetry or priced); else 0. */
  readonly costUsd: number;
  /** Requests whose cost came from the user's price table (the rest of the known ones were stated). */
  readonly pricedRequests: number;
  /** Requests whose cost is not known (no stated cost, no price): not in {@link SpendAfter.costUsd}. */
  readonly uncostedRequests: number;
  /** From the point to the prompt's end, in milliseconds. */
  readonly wallMillis: number;
}

/** The zero {@link SpendAfter}. */
export const NO_SPEND: SpendAfter = Object.freeze({
  requests: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  costUsd: 0,
  pricedRequests: 0,
  uncostedRequests: 0,
  wallMillis: 0,
});

/** Add two spends. */
export function addSpend(a: SpendAfter, b: SpendAfter): SpendAfter {
  return {
    requests: a.requests + b.requests,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheCreationTokens: a.cacheCreationTokens + b.cacheCreationTokens,
    costUsd: a.costUsd + b.costUsd,
    pricedRequests: a.pricedRequests + b.pricedRequests,
    uncostedRequests: a.uncostedRequests + b.uncostedRequests,
    wallMillis: a.wallMillis + b.wallMillis,
  };
}

/** A request's cost in US dollars and whether it was priced (not stated); `undefined`: not known. */
export type CostOf = (u: UsageRecord) => { readonly usd: number; readonly source: 'stated' | 'priced' } | undefined;

const STATED_ONLY: CostOf = (u) => (u.costUsd === undefined ? undefined : { usd: u.costUsd, source: 'stated' });

/**
 * What a prompt spent after `atMillis`: the requests whose response ended after it (the request
 * that closed the judged batch, and every later one), and the time to the prompt's end.
 *
 * @param costOf - a request's cost (`requestCost` with the price table); default: the stated cost only
 */
export function spendAfter(usage: readonly UsageRecord[], atMillis: number, promptEndMillis: number, costOf: CostOf = STATED_ONLY): SpendAfter {
  let requests = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  let cacheReadTokens = 0;
  let cacheCreationTokens = 0;
  let costUsd = 0;
  let pricedRequests = 0;
  let uncostedRequests = 0;
  for (const u of usage) {
    if (u.endMillis <= atMillis) continue;
    requests++;
    inputTokens += u.inputTokens ?? 0;
    outputTokens += u.outputTokens ?? 0;
    cacheReadTokens += u.cacheReadTokens ?? 0;
    cacheCreationTokens += u.cacheCreationTokens ?? 0;
    const cost = costOf(u);
    if (cost === undefined) uncostedRequests++;
    else {
      costUsd += cost.usd;
      if (cost.source === 'priced') pricedRequests++;
    }
  }
  return { requests, inputTokens, outputTokens, cacheReadTokens, cacheCreationTokens, costUsd, pricedRequests, uncostedRequests, wallMillis: Math.max(0, promptEndMillis - atMillis) };
}

/** One row of the failure-guard what-if. */
export interface FailureWhatIfRow {
  /** `threshold-<failures>x<batches>` or a named variant id. */
  readonly id: string;
  readonly failureThreshold: number;
  readonly batchThreshold: number;
  /** Named variant, when the row is one ({@link FAILURE_VARIANTS}). */
  readonly variant: string | undefined;
  /** True for the design's runtime default. */
  readonly isDefault: boolean;
  /** Prompts that would get the reminder. */
  readonly reminded: number;
  /** Prompts that would be stopped. */
  readonly stopped: number;
  /** Spent after the stop point, summed over stopped prompts: what enforce would have saved. */
  readonly saved: SpendAfter;
  /** Reminded prompts whose candidate tool later succeeded in the same prompt (false-positive proxy). */
  readonly recoveredAfterReminder: number;
}

/** One row of the breaker what-if. */
export interface BreakerWhatIfRow {
  readonly id: string;
  readonly warn: number;
  readonly abort: number;
  readonly variant: string | undefined;
  readonly isDefault: boolean;
  /** Prompts with a would_warn. */
  readonly reminded: number;
  /** Prompts with a would_abort. */
  readonly stopped: number;
  readonly saved: SpendAfter;
  /** Warned prompts whose identical run ended on its own: another call followed (false-positive proxy). */
  readonly movedOnAfterWarn: number;
}

/** Named failure-guard variants. */
export const FAILURE_VARIANTS = {
  /** A success of another tool that changes files (edit, write) between failures resets the candidate. */
  file_change_resets: 'a success of a file-changing tool resets the candidate',
  /** `--untyped-failures key-by-tool`: a failure with no type is keyed (tool, untyped) instead of resetting as unknown. */
  untyped_key_by_tool: 'failures with no type keyed by tool alone (--untyped-failures key-by-tool)',
} as const;

/** Named breaker variants (input transforms ahead of the unchanged reducer). */
export const BREAKER_VARIANTS = {
  /** Identical successful calls whose recorded results differ do not extend the run (polling). */
  polling_ignored: 'identical successful calls whose results differ do not count (polling)',
  /** Identical calls in one model response (one batch) count once. */
  batch_counts_once: 'identical calls in one model response count once',
} as const;

/** One prompt's inputs to the what-if. */
export interface WhatIfPrompt {
  readonly promptId: string;
  readonly endMillis: number;
  /** The prompt's judged batches in order (receipts as assembled by the replay). */
  readonly batches: readonly BatchDecision[];
  /** The prompt's foreground calls in order, each with the 1-based batch it belongs to. */
  readonly calls: readonly (CallRecord & { readonly batch: number })[];
  readonly usage: readonly UsageRecord[];
}

/** Grid of the failure what-if. */
export interface WhatIfGrid {
  /** @defaultValue `[4, 6, 8, 10, 12, 16]` */
  readonly failureThresholds?: readonly number[];
  /** @defaultValue `[1, 2, 3]` */
  readonly batchThresholds?: readonly number[];
  /** Breaker (warn, abort) pairs. @defaultValue `[[2, 4], [3, 5], [4, 6], [5, 8], [3, 10]]` */
  readonly breakerPairs?: readonly (readonly [number, number])[];
}

/** Outcome of one policy on one prompt. */
interface PromptVerdict {
  readonly remindedAt: number | undefined;
  readonly stoppedAt: number | undefined;
  readonly fp: boolean;
}

function runFailure(p: WhatIfPrompt, policy: FailurePolicy): PromptVerdict {
  let state: FailureState = initialFailureState();
  let remindedAt: number | undefined;
  let stoppedAt: number | undefined;
  let warnedTool: string | undefined;
  let fp = false;
  for (const b of p.batches) {
    if (warnedTool !== undefined && !fp) {
      fp = b.receipt.observations.some((o) => o.policyToolName === warnedTool && o.terminalStatus === 'success');
    }
    if (b.mode === 'off') continue;
    const [next, out] = reduceFailure(
      state,
      { type: 'batch_settled', mode: 'shadow', batch: b.receipt, hasExternalInput: b.drain.hasExternalInput, hasQueuedPrompt: b.drain.hasQueuedPrompt, inputReliable: b.drain.inputReliable },
      policy,
    );
    if (out.decision === 'would_warn' && remindedAt === undefined) {
      remindedAt = b.lastActivityMillis;
      warnedTool = next.phase === 'idle' ? undefined : next.key.policyToolName;
    }
    if (out.decision === 'would_stop' && stoppedAt === undefined) stoppedAt = b.lastActivityMillis;
    state = next;
  }
  return { remindedAt, stoppedAt, fp };
}

interface BreakerCall {
  readonly key: string;
  readonly atMillis: number;
}

/** The breaker's input under a variant. */
function breakerStream(calls: WhatIfPrompt['calls'], variant: keyof typeof BREAKER_VARIANTS | undefined): BreakerCall[] {
  const out: BreakerCall[] = [];
  let previous: (CallRecord & { batch: number }) | undefined;
  let polls = 0;
  for (const c of calls) {
    if (variant === 'batch_counts_once' && previous !== undefined && previous.batch === c.batch && previous.fingerprint === c.fingerprint) continue;
    let key = c.fingerprint;
    if (variant === 'polling_ignored' && previous !== undefined && previous.fingerprint === c.fingerprint && c.succeeded && previous.succeeded) {
      // A changed result means the tool's answer is moving: the repeat is a poll, counted as a new run.
      if (c.resultFingerprint !== undefined && previous.resultFingerprint !== undefined && c.resultFingerprint !== previous.resultFingerprint) polls++;
    } else if (previous === undefined || previous.fingerprint !== c.fingerprint) {
      polls = 0;
    }
    if (polls > 0) key = `${c.fingerprint}#poll${polls}`;
    out.push({ key, atMillis: c.atMillis });
    previous = c;
  }
  return out;
}

function runBreaker(p: WhatIfPrompt, warn: number, abort: number, variant: keyof typeof BREAKER_VARIANTS | undefined): PromptVerdict {
  const { config } = resolveRepetitionConfig({ warn, abort });
  let state: RepetitionState = initialRepetitionState();
  let remindedAt: number | undefined;
  let stoppedAt: number | undefined;
  let warnedKey: string | undefined;
  let fp = false;
  for (const c of breakerStream(p.calls, variant)) {
    if (warnedKey !== undefined && c.key !== warnedKey) fp = true;
    const [next, out] = reduceRepetition(state, { type: 'tool_call', mode: 'shadow', fingerprint: c.key }, config);
    if (out.decision === 'would_warn' && remindedAt === undefined) {
      remindedAt = c.atMillis;
      warnedKey = c.key;
    }
    if (out.decision === 'would_abort' && stoppedAt === undefined) stoppedAt = c.atMillis;
    state = next;
  }
  return { remindedAt, stoppedAt, fp };
}

function tally<R>(
  prompts: readonly WhatIfPrompt[],
  run: (p: WhatIfPrompt) => PromptVerdict,
  make: (reminded: number, stopped: number, saved: SpendAfter, fp: number) => R,
): R {
  let reminded = 0;
  let stopped = 0;
  let fp = 0;
  let saved = NO_SPEND;
  for (const p of prompts) {
    const v = run(p);
    if (v.remindedAt !== undefined) reminded++;
    if (v.fp) fp++;
    if (v.stoppedAt !== undefined) {
      stopped++;
      saved = addSpend(saved, spendAfter(p.usage, v.stoppedAt, p.endMillis));
    }
  }
  return make(reminded, stopped, saved, fp);
}

/** Run the failure-guard grid and variants. */
export function failureWhatIf(prompts: readonly WhatIfPrompt[], fileChangingTools: ReadonlySet<string>, grid: WhatIfGrid = {}): FailureWhatIfRow[] {
  const rows: FailureWhatIfRow[] = [];
  const d = DEFAULT_FAILURE_POLICY;
  const row = (policy: FailurePolicy, variant: string | undefined): FailureWhatIfRow =>
    tally(prompts, (p) => runFailure(p, policy), (reminded, stopped, saved, fp) => ({
      id: variant ?? `threshold-${policy.failureThreshold}x${policy.batchThreshold}`,
      failureThreshold: policy.failureThreshold,
      batchThreshold: policy.batchThreshold,
      variant,
      isDefault: variant === undefined && policy.failureThreshold === d.failureThreshold && policy.batchThreshold === d.batchThreshold,
      reminded,
      stopped,
      saved,
      recoveredAfterReminder: fp,
    }));
  for (const f of grid.failureThresholds ?? [4, 6, 8, 10, 12, 16]) {
    for (const b of grid.batchThresholds ?? [1, 2, 3]) rows.push(row({ ...d, failureThreshold: f, batchThreshold: b }, undefined));
  }
  rows.push(row({ ...d, resetOnSuccessOf: fileChangingTools }, 'file_change_resets'));
  rows.push(row({ ...d, untypedFailures: 'key-by-tool' }, 'untyped_key_by_tool'));
  return rows;
}

/** Run the breaker pairs and variants. */
export function breakerWhatIf(prompts: readonly WhatIfPrompt[], grid: WhatIfGrid = {}): BreakerWhatIfRow[] {
  const def = DEFAULT_REPETITION_CONFIG;
  const row = (warn: number, abort: number, variant: keyof typeof BREAKER_VARIANTS | undefined): BreakerWhatIfRow =>
    tally(prompts, (p) => runBreaker(p, warn, abort, variant), (reminded, stopped, saved, fp) => ({
      id: variant ?? `breaker-${warn}x${abort}`,
      warn,
      abort,
      variant,
      isDefault: variant === undefined && warn === def.warn && abort === def.abort,
      reminded,
      stopped,
      saved,
      movedOnAfterWarn: fp,
    }));
  const rows = (grid.breakerPairs ?? [[2, 4], [3, 5], [4, 6], [5, 8], [3, 10]]).map(([w, a]) => row(w, a, undefined));
  rows.push(row(def.warn, def.abort, 'polling_ignored'));
  rows.push(row(def.warn, def.abort, 'batch_counts_once'));
  return rows;
}

/**
 * The identical-call breaker's reported decisions (warn, abort, the end of a warned run) on one
 * prompt's calls with the default config, at the calls' own times: the timeline's breaker row
 * (event time in replay and in serve alike).
 */
export function breakerMarks(p: WhatIfPrompt): { atMillis: number; decision: string; runLength: number }[] {
  const marks: { atMillis: number; decision: string; runLength: number }[] = [];
  let state: RepetitionState = initialRepetitionState();
  for (const c of breakerStream(p.calls, undefined)) {
    const [next, out] = reduceRepetition(state, { type: 'tool_call', mode: 'shadow', fingerprint: c.key }, DEFAULT_REPETITION_CONFIG);
    if (isReportedRepetitionDecision(out)) marks.push({ atMillis: c.atMillis, decision: out.decision, runLength: out.runLength });
    state = next;
  }
  return marks;
}

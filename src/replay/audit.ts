/**
 * The design's Phase 1 shadow invariants that can be checked from telemetry
 * (design "Phase 1: shadow", "Required invariants").
 */
import type { BatchDecision } from '../guard-engine.js';
import type { RecordBatch } from './records.js';
import type { EmittedGuardRecord } from './replay.js';

/** One invariant and whether it held. */
export interface InvariantResult {
  readonly id: string;
  readonly description: string;
  readonly held: boolean;
  /** Short, data-free explanations of violations (prompt ids and batch numbers only). */
  readonly violations: readonly string[];
}

const ADVANCING = new Set(['tracked', 'would_warn', 'warned', 'would_stop', 'stopped']);

/** Attribute keys the guard may emit, per record kind (design "Telemetry and privacy"). */
export const ALLOWED_GUARD_LOG_KEYS: ReadonlySet<string> = new Set([
  'event.name',
  'event.timestamp',
  'prompt_id',
  'route',
  'mode',
  'phase_before',
  'phase_after',
  'decision',
  'failure_count_bucket',
  'batch_count_bucket',
  'candidate_ordinal',
  'reset_reason',
  'terminal_status',
  'execution_status',
  'execution_error_type',
  'tool_type',
  'loop_type',
  'session.id',
  'run_length_bucket',
]);

/** Metric label keys the guard may emit: no prompt id, ordinal or error type. */
export const ALLOWED_GUARD_METRIC_KEYS: ReadonlySet<string> = new Set([
  'route',
  'mode',
  'phase_before',
  'phase_after',
  'decision',
  'failure_count_bucket',
  'batch_count_bucket',
  'reset_reason',
  'terminal_status',
  'execution_status',
  'tool_type',
  'reason',
  'run_length_bucket',
]);

/** Attributes of the input that hold arguments, results, prompts or raw error text (wire reference §1.2, §2.1, §2.3). */
export const SENSITIVE_INPUT_KEYS: readonly string[] = [
  'function_args',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
  'error',
  'error.message',
  'prompt',
  'request_text',
  'response_text',
];

function isEligibleFailure(o: BatchDecision['receipt']['observations'][number]): boolean {
  return (
    o.terminalStatus === 'error' &&
    o.executionStatus === 'error' &&
    !!o.policyToolName &&
    !!o.executionErrorType &&
    o.executionErrorType !== 'unknown'
  );
}

function isSuccess(o: BatchDecision['receipt']['observations'][number]): boolean {
  return o.terminalStatus === 'success' && (o.executionStatus === 'success' || o.executionStatus === 'not_started');
}

/** Secret-bearing strings of the input (length >= 4), to search for in the guard's output. */
export function sensitiveInputStrings(records: RecordBatch): Set<string> {
  const out = new Set<string>();
  const add = (v: unknown): void => {
    if (typeof v === 'string' && v.length >= 4) out.add(v);
  };
  for (const s of records.spans) for (const k of SENSITIVE_INPUT_KEYS) add(s.attributes[k]);
  for (const l of records.logs) for (const k of SENSITIVE_INPUT_KEYS) add(l.attributes[k]);
  return out;
}

/**
 * Check the invariants over one replay.
 *
 * @param decisions - every reduced batch
 * @param emitted - the guard's own emitted logs and metric points
 * @param sensitive - strings that must never appear in `emitted`
 * @param namespace - namespace of emitted names (the loop event's RUM marker key)
 */
export function auditInvariants(
  decisions: readonly BatchDecision[],
  emitted: readonly EmittedGuardRecord[],
  sensitive: ReadonlySet<string>,
  namespace = 'qwen-code',
): InvariantResult[] {
  const counted: string[] = [];
  const incomplete: string[] = [];
  const enforcedAfterUnreliable: string[] = [];
  const stopWithoutWarn: string[] = [];
  const afterLatched: string[] = [];
  const unreliable = new Set<string>();
  const warnedCandidates = new Set<string>();
  const latched = new Set<string>();
  for (const d of decisions) {
    const where = `${d.promptId} batch ${d.batch}`;
    const o = d.outcome;
    if (latched.has(d.promptId) && o.decision !== 'none') afterLatched.push(where);
    if (ADVANCING.has(o.decision)) {
      const bad = d.receipt.observations.filter((x) => !x.providerDuplicate && !isEligibleFailure(x) && !isSuccess(x));
      if (bad.length > 0) counted.push(`${where}: ${bad.length} ineligible outcome(s) in a counted batch`);
      if (!d.receipt.complete) incomplete.push(where);
    }
    if (!d.drain.inputReliable || o.enforcementNewlyDisabled) unreliable.add(d.promptId);
    if (o.decision === 'stopped' && unreliable.has(d.promptId)) enforcedAfterUnreliable.push(where);
    const candidate = `${d.promptId}#${o.candidateOrdinal}`;
    if (o.decision === 'would_warn' || o.decision === 'warned') warnedCandidates.add(candidate);
    if ((o.decision === 'would_stop' || o.decision === 'stopped') && !warnedCandidates.has(candidate)) stopWithoutWarn.push(where);
    if (o.phaseAfter === 'latched') latched.add(d.promptId);
  }
  const leaks: string[] = [];
  const marker = `${namespace}.rum.exclude`;
  for (const r of emitted) {
    const allowed = r.kind === 'metric' ? ALLOWED_GUARD_METRIC_KEYS : ALLOWED_GUARD_LOG_KEYS;
    for (const k of Object.keys(r.attributes)) {
      if (!allowed.has(k) && k !== marker) leaks.push(`${r.kind} ${r.name}: unexpected attribute ${k}`);
    }
    const values = [...Object.values(r.attributes), r.body].filter((v): v is string => typeof v === 'string');
    for (const v of values) {
      for (const s of sensitive) {
        if (v.includes(s)) {
          leaks.push(`${r.kind} ${r.name}: a value carries input argument/result/error text`);
          break;
        }
      }
    }
  }
  const result = (id: string, description: string, violations: string[]): InvariantResult => ({
    id,
    description,
    held: violations.length === 0,
    violations,
  });
  return [
    result('no_ineligible_counted', 'zero cancelled, not_started, unknown or post-execution outcomes counted', counted),
    result('no_incomplete_decisions', 'zero decisions based on incomplete batches', incomplete),
    result('no_enforcement_after_unreliable_drain', 'zero enforcement after an unreliable input drain', enforcedAfterUnreliable),
    result('no_sensitive_telemetry', 'zero raw argument, result, path or error-text fields in guard telemetry', leaks),
    result('stop_preceded_by_warn', 'every would_stop/stopped is preceded by would_warn/warned for the same candidate and prompt', stopWithoutWarn),
    result('nothing_after_latched', 'no decision after a prompt latched', afterLatched),
  ];
}

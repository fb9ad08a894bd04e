/**
 * The design's Phase 1 shadow invariants that can be checked from telemetry
 * (design "Phase 1: shadow", "Required invariants").
 */
import { isUntypedFailure } from '../core/failure/reducer.js';
import type { UntypedFailurePolicy } from '../core/failure/reducer.js';
import { RESET_REASONS } from '../core/failure/types.js';
import type { BatchDecision } from '../engine/failure-types.js';
import type { RecordBatch } from '../otlp/records.js';
import { codexPromptIdOf } from '../profiles/codex/codex-profile.js';
import { genAiOperation, genAiPromptId } from '../profiles/genai/genai-profile.js';
import type { LogRecordView, SpanView } from '../profiles/wire-profile.js';
import type { EmittedGuardRecord } from './replay.js';

/** One invariant and whether it held. */
export interface InvariantResult {
  readonly id: string;
  readonly description: string;
  /** No violation was found. */
  readonly held: boolean;
  /**
   * Why the input could not show a violation of this invariant (a fixed reason from the profile's
   * registry entry), when it could not: then `held` means only that none was seen, and the
   * invariant is printed `not checkable` unless a violation was found anyway.
   */
  readonly notCheckable?: string;
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

/** Secret-bearing strings of the input (length >= 4): what a leak would look like (used by tests). */
export function sensitiveInputStrings(records: RecordBatch): Set<string> {
  const out = new Set<string>();
  const add = (v: unknown): void => {
    if (typeof v === 'string' && v.length >= 4) out.add(v);
  };
  for (const s of records.spans) for (const k of SENSITIVE_INPUT_KEYS) add(s.attributes[k]);
  for (const l of records.logs) for (const k of SENSITIVE_INPUT_KEYS) add(l.attributes[k]);
  return out;
}

/** Prompt and session ids present in the input: the only free-form values the guard may emit. */
export interface InputIdentifiers {
  readonly promptIds: ReadonlySet<string>;
  readonly sessionIds: ReadonlySet<string>;
}

/** Add the prompt and session ids of one record's attributes to `ids` (for inputs read record by record). */
export function addInputIdentifiers(attributes: Readonly<Record<string, unknown>>, ids: { readonly promptIds: Set<string>; readonly sessionIds: Set<string> }): void {
  // qwen-code: `prompt_id`, `qwen-code.prompt_id`; Claude Code: `prompt.id`.
  for (const k of ['prompt_id', 'qwen-code.prompt_id', 'prompt.id']) if (typeof attributes[k] === 'string') ids.promptIds.add(attributes[k] as string);
  if (typeof attributes['session.id'] === 'string') ids.sessionIds.add(attributes['session.id'] as string);
}

/**
 * {@link addInputIdentifiers} for a log record, plus the ids the `codex` profile derives from it:
 * the turn's trace id of a `codex.user_prompt` record (its prompt id) and `conversation.id` (its
 * session).
 */
export function addLogInputIdentifiers(log: LogRecordView, ids: { readonly promptIds: Set<string>; readonly sessionIds: Set<string> }): void {
  addInputIdentifiers(log.attributes, ids);
  const codexPrompt = codexPromptIdOf(log);
  if (codexPrompt === undefined) return;
  ids.promptIds.add(codexPrompt);
  const conversation = log.attributes['conversation.id'];
  if (typeof conversation === 'string') ids.sessionIds.add(conversation);
}

/**
 * {@link addInputIdentifiers} for a span, plus the ids the `genai` profile derives from it: the
 * prompt id of a run's span (an `invoke_agent` span or a trace root, {@link genAiPromptId}) and the
 * session `gen_ai.conversation.id`.
 */
export function addSpanInputIdentifiers(span: SpanView, ids: { readonly promptIds: Set<string>; readonly sessionIds: Set<string> }): void {
  addInputIdentifiers(span.attributes, ids);
  if (span.parentSpanContext === undefined || genAiOperation(span) === 'invoke_agent') ids.promptIds.add(genAiPromptId(span.spanContext()));
  const conversation = span.attributes['gen_ai.conversation.id'];
  if (typeof conversation === 'string') ids.sessionIds.add(conversation);
}

/** Collect the prompt and session ids of the input. */
export function inputIdentifiers(records: RecordBatch): InputIdentifiers {
  const ids = { promptIds: new Set<string>(), sessionIds: new Set<string>() };
  for (const s of records.spans) addSpanInputIdentifiers(s, ids);
  for (const l of records.logs) addLogInputIdentifiers(l, ids);
  return ids;
}

const PHASES = ['idle', 'tracking', 'warned', 'latched'];
const BUCKETS = ['0', '1-2', '3-4', '5-7', '8+'];
const ENUMERATED: Readonly<Record<string, ReadonlySet<string>>> = {
  route: new Set(['acp_foreground', 'headless', 'agent_run']),
  mode: new Set(['shadow', 'warn', 'enforce']),
  phase_before: new Set(PHASES),
  phase_after: new Set(PHASES),
  decision: new Set(['reset', 'tracked', 'would_warn', 'warned', 'would_stop', 'stopped', 'would_abort', 'aborted']),
  failure_count_bucket: new Set(BUCKETS),
  run_length_bucket: new Set(BUCKETS),
  batch_count_bucket: new Set(['0', '1', '2', '3+']),
  reset_reason: new Set(RESET_REASONS),
  terminal_status: new Set(['error']),
  execution_status: new Set(['error']),
  tool_type: new Set(['native', 'mcp']),
  loop_type: new Set(['repeated_tool_execution_failure', 'consecutive_identical_tool_calls']),
  reason: new Set(['capacity', 'idle', 'turn_cancelled', 'cancelled_call', 'other_loop_stop', 'no_terminal_records']),
};
const BODY = /^(Repeated tool failure guard decision|Tool call repetition guard decision): [a-z_]+\.$|^Loop detected\. Type: [a-z_]+\.$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const IDENTIFIER = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * The input prompt id a guard prompt id `<id>/<k>` was derived from (the `gemini-cli` profile's
 * k-th prompt under one id: a resumed headless session), or `''`.
 */
function promptIdBefore(value: string): string {
  const slash = value.lastIndexOf('/');
  if (slash <= 0 || slash === value.length - 1) return '';
  for (let i = slash + 1; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return '';
  }
  return value.slice(0, slash);
}

/** Why one emitted attribute is not allowed, or `undefined` when it is. */
function attributeProblem(
  kind: EmittedGuardRecord['kind'],
  key: string,
  value: unknown,
  ids: InputIdentifiers,
  namespaces: readonly string[],
): string | undefined {
  const allowed = kind === 'metric' ? ALLOWED_GUARD_METRIC_KEYS : ALLOWED_GUARD_LOG_KEYS;
  if (namespaces.some((ns) => key === `${ns}.rum.exclude`)) return kind === 'log' && value === true ? undefined : 'unexpected marker';
  if (!allowed.has(key)) return `unexpected attribute ${key}`;
  const values = ENUMERATED[key];
  if (values !== undefined) return typeof value === 'string' && values.has(value) ? undefined : `unexpected value of ${key}`;
  switch (key) {
    case 'event.name':
      return value === 'loop_detected' || namespaces.some((ns) => value === `${ns}.repeated_tool_failure_guard` || value === `${ns}.tool_call_repetition_guard`)
        ? undefined
        : 'unexpected event name';
    case 'event.timestamp':
      return typeof value === 'string' && ISO_TIME.test(value) ? undefined : 'unexpected timestamp';
    case 'prompt_id':
      return typeof value === 'string' && (ids.promptIds.has(value) || ids.promptIds.has(promptIdBefore(value))) ? undefined : 'a prompt_id that is not an input prompt id';
    case 'session.id':
      return typeof value === 'string' && ids.sessionIds.has(value) ? undefined : 'a session.id that is not an input session id';
    case 'candidate_ordinal':
      return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? undefined : 'unexpected ordinal';
    case 'execution_error_type':
      return typeof value === 'string' && IDENTIFIER.test(value) ? undefined : 'an execution_error_type that is not a ToolErrorType identifier';
    default:
      return `unchecked attribute ${key}`;
  }
}

/**
 * Check the invariants over one replay.
 *
 * The privacy check is structural: every key the guard emitted is on the allow-list, every value
 * is from its closed vocabulary, an input prompt or session id, an identifier-shaped error type, a
 * timestamp or an ordinal, and every body is one of the fixed templates. So no argument, result,
 * path or error text can pass, whatever it contains, and the check is linear in the output.
 *
 * @param decisions - every reduced batch
 * @param emitted - the guard's own emitted logs and metric points
 * @param ids - the prompt and session ids of the input ({@link inputIdentifiers})
 * @param namespace - namespace of emitted names, or several (under `auto`, each agent's telemetry
 *   carries its own profile's)
 * @param notCheckable - invariants the input cannot show a violation of (id → reason;
 *   `ReplayResult.notCheckable`); default none
 * @param untypedFailures - the policy the decisions were made under: with `key-by-tool`, failures
 *   with no type were counted on purpose and are not a violation; default `ineligible`
 */
export function auditInvariants(
  decisions: readonly BatchDecision[],
  emitted: readonly EmittedGuardRecord[],
  ids: InputIdentifiers,
  namespace: string | readonly string[] = 'qwen-code',
  notCheckable: Readonly<Record<string, string>> = {},
  untypedFailures: UntypedFailurePolicy = 'ineligible',
): InvariantResult[] {
  // The opt-in counts untyped failures on purpose: they are what it keys, not a violation.
  const keyedUntyped = untypedFailures === 'key-by-tool';
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
      const bad = d.receipt.observations.filter((x) => !x.providerDuplicate && !isEligibleFailure(x) && !isSuccess(x) && !(keyedUntyped && isUntypedFailure(x)));
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
  const namespaces = typeof namespace === 'string' ? [namespace] : namespace;
  for (const r of emitted) {
    for (const [k, v] of Object.entries(r.attributes)) {
      const problem = attributeProblem(r.kind, k, v, ids, namespaces);
      if (problem !== undefined) leaks.push(`${r.kind} ${r.name}: ${problem}`);
    }
    if (r.kind === 'log' && (typeof r.body !== 'string' || !BODY.test(r.body))) leaks.push(`log ${r.name}: a body that is not a fixed template`);
  }
  const result = (id: string, description: string, violations: string[]): InvariantResult => {
    const why = Object.prototype.hasOwnProperty.call(notCheckable, id) ? notCheckable[id] : undefined;
    return { id, description, held: violations.length === 0, ...(why === undefined ? {} : { notCheckable: why }), violations };
  };
  return [
    result(
      'no_ineligible_counted',
      keyedUntyped
        ? 'zero cancelled, not_started, unknown or post-execution outcomes counted (failures with no type counted by --untyped-failures key-by-tool)'
        : 'zero cancelled, not_started, unknown or post-execution outcomes counted',
      counted,
    ),
    result('no_incomplete_decisions', 'zero decisions based on incomplete batches', incomplete),
    result('no_enforcement_after_unreliable_drain', 'zero enforcement after an unreliable input drain', enforcedAfterUnreliable),
    result('no_sensitive_telemetry', 'zero raw argument, result, path or error-text fields in guard telemetry', leaks),
    result('stop_preceded_by_warn', 'every would_stop/stopped is preceded by would_warn/warned for the same candidate and prompt', stopWithoutWarn),
    result('nothing_after_latched', 'no decision after a prompt latched', afterLatched),
  ];
}

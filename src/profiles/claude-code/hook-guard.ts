/**
 * The guard as a sequence of Claude Code hook invocations: a pure step function from the
 * per-session state and one parsed hook input to the next state, the hook's stdout object and the
 * decisions made. The `claude-code-hook` command loads and saves the state around it.
 *
 * - `PostToolUseFailure` records the failed call's class for the current batch (no output).
 * - `PostToolBatch` builds the batch receipt (a recorded failure → eligible `error`/`error` of its
 *   class, or `cancelled` for an interrupt; a call the breaker denied or a `<tool_use_error>` result
 *   → `error`/`not_started`, as the telemetry profile reads a rejected call; anything else →
 *   `success`) and reduces it
 *   with the design's reducer. `remind` → `hookSpecificOutput.additionalContext` (Claude Code
 *   appends it to the batch's last tool result, so the model reads it before its next request);
 *   `stop` → `{"decision":"block","reason":…}` (the run ends after the batch, `terminal_reason`
 *   `hook_stopped`). Shadow prints nothing.
 * - `PreToolUse` feeds the identical-call breaker (a salted fingerprint of tool name and input; the
 *   input itself is hashed in memory and dropped): `warn` → `additionalContext`, `block` →
 *   `permissionDecision: "deny"` with the fixed text, and the batch is then stopped.
 * - A new `prompt_id` (or `UserPromptSubmit`) starts a fresh guard. Subagent inputs (`agent_id`)
 *   are ignored: subagent-internal loops are out of scope, as in the telemetry profile.
 *
 * Drain signals are not available to a hook; every batch is reduced with a reliable, empty drain
 * (Claude Code runs the next model request only after PostToolBatch returns).
 */
import { createHmac } from 'node:crypto';
import { batchCountBucket, failureCountBucket } from '../../core/buckets.js';
import { initialFailureState, reduceFailure } from '../../core/failure/reducer.js';
import type { BatchReceipt, FailureOutcome, FailureState, GuardMode, ToolCallObservation } from '../../core/failure/types.js';
import { DEFAULT_REPETITION_CONFIG } from '../../core/repetition/config.js';
import type { RepetitionConfig } from '../../core/repetition/config.js';
import { initialRepetitionState, reduceRepetition, REPETITION_ABORT_TEXT } from '../../core/repetition/reducer.js';
import type { RepetitionState } from '../../core/repetition/types.js';
import { argumentsFingerprint } from '../../engine/fingerprint.js';
import { CLAUDE_CODE_FAILURE_CLASSES } from './failure-class.js';
import type { ClaudeCodeFailureClass } from './failure-class.js';
import { MAX_BATCH_CALLS } from './hook-input.js';
import type { ClaudeCodeHookInput } from './hook-input.js';

/** Schema version of {@link HookSessionState}. */
export const HOOK_STATE_VERSION = 1;

/** What one failed call left for its batch: its tool and class, or `cancelled`. Never text. */
export interface HookFailureRecord {
  readonly toolName: string;
  readonly failureClass: ClaudeCodeFailureClass | 'cancelled';
}

/**
 * The per-session state kept between hook invocations (a JSON file). It holds ids, tool names,
 * closed-vocabulary classes, counters and salted fingerprints; never arguments, results, paths or
 * error text.
 */
export interface HookSessionState {
  readonly v: typeof HOOK_STATE_VERSION;
  /** The prompt the guard state belongs to. */
  readonly promptId: string | undefined;
  readonly guard: FailureState;
  /** Batches reduced in this prompt (the next batch's ordinal is this + 1). */
  readonly batches: number;
  /** Failures of the batch in progress, by `tool_use_id` (at most {@link MAX_BATCH_CALLS}). */
  readonly failures: Readonly<Record<string, HookFailureRecord>>;
  /** Calls of the batch in progress the breaker denied. */
  readonly denied: readonly string[];
  /** More than {@link MAX_BATCH_CALLS} calls were recorded: the batch is incomplete. */
  readonly overflow: boolean;
  /** The breaker blocked a call in this batch: stop after it. */
  readonly stopAfterBatch: boolean;
  readonly repetition: RepetitionState;
  /** Random hex salt of this session's fingerprints. */
  readonly salt: string;
  /** Milliseconds since the epoch of the last update. */
  readonly updatedMillis: number;
}

/** One decision, in the `replay --format json` shape (batch = ordinal within the prompt). */
export interface HookDecisionLine {
  /** Always `repeated_tool_failure` (the failure guard), as in `replay --format json`. */
  readonly guard: 'repeated_tool_failure';
  readonly promptId: string;
  readonly batch: number;
  readonly mode: GuardMode;
  readonly decision: string;
  readonly phaseBefore: string;
  readonly phaseAfter: string;
  readonly failureCountBucket: string;
  readonly batchCountBucket: string;
  readonly candidateOrdinal: number;
  readonly resetReason?: string;
}

/** The result of one step. */
export interface HookStep {
  readonly state: HookSessionState;
  /** The JSON object to print on stdout, or `undefined` for no output. */
  readonly output: Record<string, unknown> | undefined;
  readonly decisions: readonly HookDecisionLine[];
  /** PostToolBatch: the reduction itself (for the guard's telemetry), decision `none` included. */
  readonly reduced?: { readonly promptId: string; readonly batch: number; readonly receipt: BatchReceipt; readonly outcome: FailureOutcome };
  /** Repetition breaker decisions other than `none` (for diagnostics). */
  readonly repetitionDecision: string | undefined;
}

/** A fresh state. */
export function initialHookState(salt: string, nowMillis: number): HookSessionState {
  return {
    v: HOOK_STATE_VERSION,
    promptId: undefined,
    guard: initialFailureState(),
    batches: 0,
    failures: {},
    denied: [],
    overflow: false,
    stopAfterBatch: false,
    repetition: initialRepetitionState(),
    salt,
    updatedMillis: nowMillis,
  };
}

const CLASSES = new Set<string>([...CLAUDE_CODE_FAILURE_CLASSES, 'cancelled']);

/**
 * Validates a state read from disk; anything unexpected gives `undefined` (the caller starts fresh).
 */
export function parseHookState(value: unknown): HookSessionState | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const s = value as Record<string, unknown>;
  if (s.v !== HOOK_STATE_VERSION || typeof s.salt !== 'string' || !/^[0-9a-f]{32}$/.test(s.salt)) return undefined;
  if (typeof s.batches !== 'number' || typeof s.updatedMillis !== 'number') return undefined;
  if (typeof s.guard !== 'object' || s.guard === null || typeof s.repetition !== 'object' || s.repetition === null) return undefined;
  if (typeof s.failures !== 'object' || s.failures === null || !Array.isArray(s.denied)) return undefined;
  for (const f of Object.values(s.failures as Record<string, unknown>)) {
    const r = f as Partial<HookFailureRecord> | null;
    if (r === null || typeof r !== 'object' || typeof r.toolName !== 'string' || !CLASSES.has(String(r.failureClass))) return undefined;
  }
  return value as HookSessionState;
}

function newPrompt(state: HookSessionState, promptId: string, mode: GuardMode, config: RepetitionConfig): HookSessionState {
  const [repetition] = reduceRepetition(state.repetition, { type: 'user_prompt', mode }, config);
  return {
    ...state,
    promptId,
    guard: initialFailureState(),
    batches: 0,
    failures: {},
    denied: [],
    overflow: false,
    stopAfterBatch: false,
    repetition,
  };
}

function observation(
  callId: string,
  toolName: string,
  failure: HookFailureRecord | undefined,
  denied: boolean,
  notStarted: boolean,
): ToolCallObservation {
  const base = { callId, policyToolName: toolName, toolType: toolName.startsWith('mcp__') ? 'mcp' : 'native', providerDuplicate: false } as const;
  if (failure !== undefined) {
    return failure.failureClass === 'cancelled'
      ? { ...base, terminalStatus: 'cancelled', executionStatus: 'cancelled', executionErrorType: undefined }
      : { ...base, terminalStatus: 'error', executionStatus: 'error', executionErrorType: failure.failureClass };
  }
  if (denied || notStarted) return { ...base, terminalStatus: 'error', executionStatus: 'not_started', executionErrorType: undefined };
  return { ...base, terminalStatus: 'success', executionStatus: 'success', executionErrorType: undefined };
}

/**
 * One hook invocation.
 *
 * @param state - the session's state (fresh from {@link initialHookState} when none)
 * @param input - the parsed hook input
 * @param mode - the resolved guard mode (`off` never reaches here: the command exits first)
 * @param nowMillis - wall clock, stored as `updatedMillis`
 * @param repetitionConfig - breaker thresholds (resolved)
 */
export function stepHook(
  state: HookSessionState,
  input: ClaudeCodeHookInput,
  mode: GuardMode,
  nowMillis: number,
  repetitionConfig: RepetitionConfig = DEFAULT_REPETITION_CONFIG,
): HookStep {
  const none = (s: HookSessionState): HookStep => ({ state: { ...s, updatedMillis: nowMillis }, output: undefined, decisions: [], repetitionDecision: undefined });
  if (input.subagent) return none(state);
  let s = state;
  if (input.promptId !== undefined && input.promptId !== s.promptId) s = newPrompt(s, input.promptId, mode, repetitionConfig);
  switch (input.event) {
    case 'UserPromptSubmit':
      return none(s);
    case 'PostToolUseFailure': {
      if (Object.keys(s.failures).length >= MAX_BATCH_CALLS && s.failures[input.toolUseId] === undefined) {
        return none({ ...s, overflow: true });
      }
      const failureClass = input.failure.kind === 'failure' ? input.failure.failureClass : input.failure.kind === 'cancelled' ? 'cancelled' : 'other';
      return none({ ...s, failures: { ...s.failures, [input.toolUseId]: { toolName: input.toolName, failureClass } } });
    }
    case 'PreToolUse': {
      const fingerprint = createHmac('sha256', s.salt).update(argumentsFingerprint(input.toolName, input.toolInput)).digest('hex').slice(0, 32);
      const [repetition, outcome] = reduceRepetition(s.repetition, { type: 'tool_call', mode, fingerprint }, repetitionConfig);
      s = { ...s, repetition };
      const repetitionDecision = outcome.decision === 'none' ? undefined : outcome.decision;
      if (outcome.action.type === 'block') {
        const denied = s.denied.length < MAX_BATCH_CALLS ? [...s.denied, input.toolUseId] : s.denied;
        return {
          state: { ...s, denied, stopAfterBatch: true, updatedMillis: nowMillis },
          output: {
            hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: outcome.action.text },
          },
          decisions: [],
          repetitionDecision,
        };
      }
      if (outcome.action.type === 'warn') {
        return {
          state: { ...s, updatedMillis: nowMillis },
          output: { hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: outcome.action.text } },
          decisions: [],
          repetitionDecision,
        };
      }
      return { state: { ...s, updatedMillis: nowMillis }, output: undefined, decisions: [], repetitionDecision };
    }
    case 'PostToolBatch': {
      const denied = new Set(s.denied);
      const observations = input.calls.map((c) =>
        observation(c.toolUseId, c.toolName, s.failures[c.toolUseId], denied.has(c.toolUseId), c.notStarted),
      );
      const receipt: BatchReceipt = { complete: input.complete && !s.overflow, observations };
      const [guard, outcome] = reduceFailure(s.guard, {
        type: 'batch_settled',
        mode,
        batch: receipt,
        hasExternalInput: false,
        hasQueuedPrompt: false,
        inputReliable: true,
      });
      const batch = s.batches + 1;
      const decisions: HookDecisionLine[] = [];
      if (outcome.decision !== 'none' && input.promptId !== undefined) {
        const line: HookDecisionLine = {
          guard: 'repeated_tool_failure',
          promptId: input.promptId,
          batch,
          mode,
          decision: outcome.decision,
          phaseBefore: outcome.phaseBefore,
          phaseAfter: outcome.phaseAfter,
          failureCountBucket: failureCountBucket(outcome.failureCount),
          batchCountBucket: batchCountBucket(outcome.batchCount),
          candidateOrdinal: outcome.candidateOrdinal,
        };
        decisions.push(outcome.resetReason === undefined ? line : { ...line, resetReason: outcome.resetReason });
      }
      const next: HookSessionState = {
        ...s,
        guard,
        batches: batch,
        failures: {},
        denied: [],
        overflow: false,
        stopAfterBatch: false,
        updatedMillis: nowMillis,
      };
      let output: Record<string, unknown> | undefined;
      if (mode !== 'shadow') {
        if (outcome.action.type === 'stop') output = { decision: 'block', reason: outcome.action.text };
        else if (outcome.action.type === 'remind') {
          output = { hookSpecificOutput: { hookEventName: 'PostToolBatch', additionalContext: outcome.action.text } };
        }
      }
      if (output === undefined && s.stopAfterBatch && mode === 'enforce') output = { decision: 'block', reason: REPETITION_ABORT_TEXT };
      const reduced = input.promptId === undefined ? undefined : { promptId: input.promptId, batch, receipt, outcome };
      return { state: next, output, decisions, reduced, repetitionDecision: undefined };
    }
  }
}

/**
 * The guard as a sequence of hook invocations, for any agent: a pure step from the per-session
 * state and one {@link HookEvent} to the next state, the {@link HookAction} and the decisions made.
 * {@link runHook} loads and saves the state around it; an adapter translates the host's input in
 * and the action out.
 *
 * Nothing here is a second guard: calls are merged into the batch with the engine's batch
 * assembler (`mergeCallUpdate`, sealed with `sealBatch` into the design's receipt), the receipt is
 * reduced with the design's reducer (`reduceFailure`), and the identical-call breaker is
 * `reduceRepetition`. What this module adds is only what a hook process needs: the state is plain
 * JSON between processes.
 *
 * - `call_settled` records the call's outcome in the open batch (no output).
 * - `batch_settled` merges the host's list of the batch's calls (a recorded outcome wins), seals
 *   the receipt and reduces it with a reliable, empty drain (the host runs the next model request
 *   only after the batch event returns): `remind` and `stop` come back as actions.
 * - `call_started` feeds the breaker (a salted fingerprint of tool name and input; the input is
 *   hashed in memory and dropped): `warn_call`, or `deny_call` (the call is recorded `not_started`
 *   and its batch is stopped in enforce).
 * - A new prompt id starts a fresh guard. A record the state store lost (its lock was busy) makes
 *   the open batch incomplete: it resets, it never reads as a success.
 */
import { createHash, createHmac } from 'node:crypto';
import { initialFailureState, reduceFailure } from '../core/failure/reducer.js';
import type { FailureState, GuardMode } from '../core/failure/types.js';
import { DEFAULT_REPETITION_CONFIG } from '../core/repetition/config.js';
import type { RepetitionConfig } from '../core/repetition/config.js';
import { initialRepetitionState, reduceRepetition, REPETITION_ABORT_TEXT } from '../core/repetition/reducer.js';
import type { RepetitionState } from '../core/repetition/types.js';
import { findCall, markUnrecordedCalls, mergeCallUpdate, mergeIntoCall, newOpenBatch, sealBatch } from '../engine/batch-assembler.js';
import type { OpenBatch } from '../engine/batch-assembler.js';
import type { CallFacts } from '../engine/call-facts.js';
import type { ExecutionErrorVocabulary } from '../engine/error-vocabulary.js';
import type { BatchDecision } from '../engine/failure-types.js';
import { argumentsFingerprint } from '../engine/fingerprint.js';
import { decisionLine } from '../report/text.js';
import type { DecisionLine } from '../report/text.js';
import type { HookAction, HookCallOutcome, HookEvent } from './hook-event.js';

/** Schema version of {@link HookSessionState} (1 was the Claude Code hook's own state). */
export const HOOK_STATE_VERSION = 2;

/** Upper bound on the calls one batch holds; more make the receipt incomplete. */
export const MAX_BATCH_CALLS = 1024;

/**
 * The per-session state kept between hook invocations (a JSON file). It holds hashed prompt ids,
 * call ids, tool names, closed-vocabulary outcomes, counters and salted fingerprints; never
 * arguments, results, paths or error text.
 */
export interface HookSessionState {
  readonly v: typeof HOOK_STATE_VERSION;
  /** SHA-256 (hex, 32 characters) of the prompt id the guard state belongs to: any id length fits. */
  readonly prompt: string | undefined;
  readonly guard: FailureState;
  /** Batches reduced in this prompt (the next batch's ordinal is this + 1). */
  readonly batches: number;
  /** The batch in progress, as the engine's batch assembler holds it; absent when no call was recorded. */
  readonly open: OpenBatch | undefined;
  /** The breaker blocked a call in this batch: stop after it (enforce). */
  readonly stopAfterBatch: boolean;
  readonly repetition: RepetitionState;
  /** Random hex salt of this session's fingerprints. */
  readonly salt: string;
  /** Milliseconds since the epoch of the last update. */
  readonly updatedMillis: number;
}

/** The result of one step. */
export interface HookStep {
  readonly state: HookSessionState;
  /** What the host should do; `none` in shadow. */
  readonly action: HookAction;
  /** The decisions made, in the `replay --format json` shape (batch = ordinal within the prompt). */
  readonly decisions: readonly DecisionLine[];
  /** `batch_settled` with a prompt id and a decision other than `none`: the engine's decision (for the guard's telemetry). */
  readonly decision?: BatchDecision;
  /** Breaker decisions other than `none` (for diagnostics). */
  readonly repetitionDecision: string | undefined;
}

/** A fresh state. */
export function initialHookState(salt: string, nowMillis: number): HookSessionState {
  return {
    v: HOOK_STATE_VERSION,
    prompt: undefined,
    guard: initialFailureState(),
    batches: 0,
    open: undefined,
    stopAfterBatch: false,
    repetition: initialRepetitionState(),
    salt,
    updatedMillis: nowMillis,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalString(v: unknown): boolean {
  return v === undefined || typeof v === 'string';
}

function parseOpenBatch(v: unknown): OpenBatch | undefined | false {
  if (v === undefined) return undefined;
  if (!isRecord(v) || !Array.isArray(v.calls) || !Number.isInteger(v.callCount) || !Number.isInteger(v.flags)) return false;
  if ((v.callCount as number) !== v.calls.length || v.calls.length > MAX_BATCH_CALLS) return false;
  for (const c of v.calls as unknown[]) {
    if (!isRecord(c) || typeof c.callId !== 'string' || !Number.isInteger(c.bits)) return false;
    if (!optionalString(c.toolName) || !optionalString(c.lookupName) || !optionalString(c.spanErrorType) || !optionalString(c.logErrorType)) return false;
  }
  if (!optionalString(v.responseId) || typeof v.lastActivityMillis !== 'number') return false;
  return v as unknown as OpenBatch;
}

/**
 * Validates a state read from disk; anything unexpected gives `undefined` (the caller starts fresh).
 */
export function parseHookState(value: unknown): HookSessionState | undefined {
  if (!isRecord(value)) return undefined;
  const s = value;
  if (s.v !== HOOK_STATE_VERSION || typeof s.salt !== 'string' || !/^[0-9a-f]{32}$/.test(s.salt)) return undefined;
  if (typeof s.batches !== 'number' || typeof s.updatedMillis !== 'number' || typeof s.stopAfterBatch !== 'boolean') return undefined;
  if (s.prompt !== undefined && (typeof s.prompt !== 'string' || !/^[0-9a-f]{32}$/.test(s.prompt))) return undefined;
  if (!isRecord(s.guard) || !isRecord(s.repetition)) return undefined;
  if (parseOpenBatch(s.open) === false) return undefined;
  return value as unknown as HookSessionState;
}

/** The key a prompt id is kept under: its hash, so a prompt id of any length keeps the state small. */
export function promptKey(promptId: string): string {
  return createHash('sha256').update(promptId).digest('hex').slice(0, 32);
}

function newPrompt(state: HookSessionState, prompt: string, mode: GuardMode, config: RepetitionConfig): HookSessionState {
  const [repetition] = reduceRepetition(state.repetition, { type: 'user_prompt', mode }, config);
  return { ...state, prompt, guard: initialFailureState(), batches: 0, open: undefined, stopAfterBatch: false, repetition };
}

/** The batch-assembler facts of an outcome (the telemetry profiles' two-axis reading). */
function factsOf(toolName: string, toolType: CallFacts['toolType'], outcome: HookCallOutcome): CallFacts {
  switch (outcome.kind) {
    case 'failure':
      return { toolName, toolType, terminalStatus: 'error', spanExecutionStatus: 'error', spanErrorType: outcome.errorType, providerDuplicate: false };
    case 'success':
      return { toolName, toolType, terminalStatus: 'success', spanExecutionStatus: 'success', providerDuplicate: false };
    case 'not_started':
      return { toolName, toolType, terminalStatus: 'error', spanExecutionStatus: 'not_started', providerDuplicate: false };
    case 'cancelled':
      return { toolName, toolType, terminalStatus: 'cancelled', spanExecutionStatus: 'cancelled', providerDuplicate: false };
    case 'unknown':
      return { toolName, toolType, terminalStatus: 'error', spanExecutionStatus: 'unknown', providerDuplicate: false };
  }
}

/** A copy of the open batch the step may change (the state it came from stays as it was). */
function openCopy(open: OpenBatch | undefined, nowMillis: number): OpenBatch {
  if (open === undefined) return newOpenBatch(true, nowMillis);
  return { ...open, calls: open.calls.map((c) => ({ ...c })) };
}

function settle(open: OpenBatch, callId: string, facts: CallFacts, nowMillis: number): void {
  mergeCallUpdate(open, { promptId: '', callId, settled: true, facts, timeMillis: nowMillis }, MAX_BATCH_CALLS);
}

/** Options of {@link stepHookSession}. */
export interface HookStepOptions {
  /** The adapter's closed vocabulary of execution error types. */
  readonly vocabulary: ExecutionErrorVocabulary;
  /** Records the state store lost since the last update (see `HookStateStore`). @defaultValue 0 */
  readonly lostRecords?: number;
  /** Breaker thresholds. @defaultValue `DEFAULT_REPETITION_CONFIG` */
  readonly repetitionConfig?: RepetitionConfig;
  /** The route label of the decisions. @defaultValue `acp_foreground` */
  readonly route?: BatchDecision['route'];
}

/**
 * One hook invocation.
 *
 * @param state - the session's state (fresh from {@link initialHookState} when none)
 * @param event - the adapter's event
 * @param mode - the resolved guard mode (`off` never reaches here: the runtime exits first)
 * @param nowMillis - wall clock, stored as `updatedMillis`
 * @param options - vocabulary, lost records, breaker thresholds
 */
export function stepHookSession(state: HookSessionState, event: HookEvent, mode: GuardMode, nowMillis: number, options: HookStepOptions): HookStep {
  const config = options.repetitionConfig ?? DEFAULT_REPETITION_CONFIG;
  const none = (s: HookSessionState): HookStep => ({ state: { ...s, updatedMillis: nowMillis }, action: { type: 'none' }, decisions: [], repetitionDecision: undefined });
  let s = state;
  if (event.promptId !== undefined) {
    const key = promptKey(event.promptId);
    if (key !== s.prompt) s = newPrompt(s, key, mode, config);
  }
  if ((options.lostRecords ?? 0) > 0) {
    const open = openCopy(s.open, nowMillis);
    markUnrecordedCalls(open);
    s = { ...s, open };
  }
  switch (event.type) {
    case 'prompt_started':
      return none(s);
    case 'call_settled': {
      const open = openCopy(s.open, nowMillis);
      settle(open, event.callId, factsOf(event.toolName, event.toolType, event.outcome), nowMillis);
      return none({ ...s, open });
    }
    case 'call_started': {
      const fingerprint = createHmac('sha256', s.salt).update(argumentsFingerprint(event.toolName, event.toolInput)).digest('hex').slice(0, 32);
      const [repetition, outcome] = reduceRepetition(s.repetition, { type: 'tool_call', mode, fingerprint }, config);
      s = { ...s, repetition };
      const repetitionDecision = outcome.decision === 'none' ? undefined : outcome.decision;
      if (outcome.action.type === 'block') {
        const open = openCopy(s.open, nowMillis);
        settle(open, event.callId, { toolName: event.toolName, terminalStatus: 'error', spanExecutionStatus: 'not_started', providerDuplicate: false }, nowMillis);
        return {
          state: { ...s, open, stopAfterBatch: true, updatedMillis: nowMillis },
          action: { type: 'deny_call', text: outcome.action.text },
          decisions: [],
          repetitionDecision,
        };
      }
      const action: HookAction = outcome.action.type === 'warn' ? { type: 'warn_call', text: outcome.action.text } : { type: 'none' };
      return { state: { ...s, updatedMillis: nowMillis }, action, decisions: [], repetitionDecision };
    }
    case 'batch_settled': {
      const open = openCopy(s.open, nowMillis);
      for (const c of event.calls) {
        const held = findCall(open, c.callId);
        const facts = factsOf(c.toolName, c.toolType, c.outcome);
        if (held === undefined) settle(open, c.callId, facts, nowMillis);
        else mergeIntoCall(open, held, { promptId: '', callId: c.callId, settled: true, facts, timeMillis: nowMillis });
      }
      if (!event.complete) markUnrecordedCalls(open);
      const receipt = sealBatch(open, options.vocabulary);
      const [guard, outcome] = reduceFailure(s.guard, {
        type: 'batch_settled',
        mode,
        batch: receipt,
        hasExternalInput: false,
        hasQueuedPrompt: false,
        inputReliable: true,
      });
      const batch = s.batches + 1;
      const decision: BatchDecision | undefined =
        outcome.decision === 'none' || event.promptId === undefined
          ? undefined
          : {
              promptId: event.promptId,
              batch,
              mode,
              route: options.route ?? 'acp_foreground',
              sessionId: event.sessionId,
              receipt,
              // The host runs the next model request only after the batch event returns.
              drain: { hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true },
              drainSource: 'assumed',
              outcome,
              lastActivityMillis: nowMillis,
              decidedAtMillis: nowMillis,
            };
      const next: HookSessionState = { ...s, guard, batches: batch, open: undefined, stopAfterBatch: false, updatedMillis: nowMillis };
      let action: HookAction = { type: 'none' };
      if (mode !== 'shadow') {
        if (outcome.action.type === 'stop') action = { type: 'stop', text: outcome.action.text };
        else if (outcome.action.type === 'remind') action = { type: 'remind', text: outcome.action.text };
      }
      if (action.type === 'none' && s.stopAfterBatch && mode === 'enforce') action = { type: 'stop', text: REPETITION_ABORT_TEXT };
      return { state: next, action, decisions: decision === undefined ? [] : [decisionLine(decision)], decision, repetitionDecision: undefined };
    }
  }
}

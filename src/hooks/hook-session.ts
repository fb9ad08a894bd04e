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
import { initialFailureState, reduceFailure, REPEATED_TOOL_FAILURE_STOP_TEXT } from '../core/failure/reducer.js';
import type { FailureState, GuardMode } from '../core/failure/types.js';
import { DEFAULT_REPETITION_CONFIG } from '../core/repetition/config.js';
import type { RepetitionConfig } from '../core/repetition/config.js';
import { initialRepetitionState, reduceRepetition, REPETITION_ABORT_TEXT } from '../core/repetition/reducer.js';
import type { RepetitionState } from '../core/repetition/types.js';
import { findCall, isCallSettled, markUnrecordedCalls, mergeCallUpdate, mergeIntoCall, newOpenBatch, sealBatch } from '../engine/batch-assembler.js';
import type { OpenBatch } from '../engine/batch-assembler.js';
import type { CallFacts } from '../engine/call-facts.js';
import type { ExecutionErrorVocabulary } from '../engine/error-vocabulary.js';
import type { BatchDecision } from '../engine/failure-types.js';
import { argumentsFingerprint } from '../engine/fingerprint.js';
import { decisionLine } from '../report/text.js';
import type { DecisionLine } from '../report/text.js';
import { unrecordedListedCalls } from './batch-listing.js';
import type { HookAction, HookBatchListing, HookCallOutcome, HookEvent } from './hook-event.js';

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
  /**
   * The prompt in progress as decisions name it, for events that carry no prompt id (hosts without
   * prompt ids); absent when longer than {@link MAX_PROMPT_ID_LENGTH}.
   */
  readonly promptId?: string;
  /** Prompts the runtime named in this session (hosts without prompt ids). */
  readonly prompts?: number;
  /** Calls of the open batch that started and have not settled (`remindOnLastCall` hosts). */
  readonly running?: number;
  /** Candidate ordinal whose reminder went out with a batch's last call; 0 or absent: none. */
  readonly reminded?: number;
  /** A warned candidate's reminder could not go out: no stop in this prompt (at most `warn`). */
  readonly downgraded?: boolean;
  /**
   * The prompt was stopped (`stop`: the failure guard; `abort`: the identical-call breaker), for
   * `denyAfterStop` hosts: every later call of the prompt is denied. Absent: not stopped.
   */
  readonly halted?: 'stop' | 'abort';
  /**
   * The host record's latest model turn already accounted for (a digest, 32 hex characters), for
   * hosts whose batches are read from their own record ({@link HookEvent} `listing`).
   */
  readonly listedTurn?: string;
}

/** Longest prompt id kept in the state (a longer one is hashed only, and decisions then lack it). */
export const MAX_PROMPT_ID_LENGTH = 512;

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
  if (s.promptId !== undefined && (typeof s.promptId !== 'string' || s.promptId.length > MAX_PROMPT_ID_LENGTH)) return undefined;
  for (const k of ['prompts', 'running', 'reminded'] as const) {
    if (s[k] !== undefined && !(Number.isInteger(s[k]) && (s[k] as number) >= 0)) return undefined;
  }
  if (s.downgraded !== undefined && typeof s.downgraded !== 'boolean') return undefined;
  if (s.halted !== undefined && s.halted !== 'stop' && s.halted !== 'abort') return undefined;
  if (s.listedTurn !== undefined && (typeof s.listedTurn !== 'string' || !/^[0-9a-f]{32}$/.test(s.listedTurn))) return undefined;
  return value as unknown as HookSessionState;
}

/** The key a prompt id is kept under: its hash, so a prompt id of any length keeps the state small. */
export function promptKey(promptId: string): string {
  return createHash('sha256').update(promptId).digest('hex').slice(0, 32);
}

function newPrompt(state: HookSessionState, promptId: string, mode: GuardMode, config: RepetitionConfig): HookSessionState {
  const [repetition] = reduceRepetition(state.repetition, { type: 'user_prompt', mode }, config);
  return {
    ...state,
    prompt: promptKey(promptId),
    promptId: promptId.length <= MAX_PROMPT_ID_LENGTH ? promptId : undefined,
    guard: initialFailureState(),
    batches: 0,
    open: undefined,
    stopAfterBatch: false,
    repetition,
    running: 0,
    reminded: 0,
    downgraded: false,
    halted: undefined,
  };
}

/** The name of the session's `ordinal`-th prompt when the host gives prompts no id. */
export function numberedPromptId(sessionId: string, ordinal: number): string {
  return ordinal <= 1 ? sessionId : `${sessionId}/${ordinal}`;
}

/**
 * The tool name as the state keeps it: an MCP tool (`mcp__<server>__<tool>`) as `mcp__` and a
 * salted digest of the whole name, so the state file names no MCP server or tool while the
 * failure key (tool name and error type, compared for equality) is unchanged; a host's own tool
 * names (`Bash`, `Read`) as they are.
 */
export function stateToolName(salt: string, toolName: string): string {
  return toolName.startsWith('mcp__') ? `mcp__${createHmac('sha256', salt).update(toolName).digest('hex').slice(0, 24)}` : toolName;
}

/** The batch-assembler facts of an outcome (the telemetry profiles' two-axis reading). */
function factsOf(toolName: string, toolType: CallFacts['toolType'], outcome: HookCallOutcome): CallFacts {
  switch (outcome.kind) {
    case 'failure':
      return { toolName, toolType, terminalStatus: 'error', spanExecutionStatus: 'error', spanErrorType: outcome.errorType, providerDuplicate: false };
    case 'untyped_failure':
      return { toolName, toolType, terminalStatus: 'error', spanExecutionStatus: 'error', providerDuplicate: false };
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

/** Whether the open batch holds the call with its outcome recorded. */
function recordedSettled(open: OpenBatch | undefined, callId: string): boolean {
  const held = open === undefined ? undefined : findCall(open, callId);
  return held !== undefined && isCallSettled(held);
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
  /** The adapter's `remindOnLastCall` (see {@link HookAdapter}). @defaultValue false */
  readonly remindOnLastCall?: boolean;
  /** The adapter's `denyAfterStop` (see {@link HookAdapter}). @defaultValue false */
  readonly denyAfterStop?: boolean;
}

/**
 * The batch a host record's listing closes (see {@link HookEvent} `listing`): the open batch with
 * the listed calls no hook recorded added (`not_started`, `cancelled`), or marked incomplete when
 * the listing and the recorded calls cannot be matched, the record is unreadable, or it lists no
 * new turn although the hooks saw calls start. A call that started and never settled (a policy or
 * hook denial, a user's rejection: no `AfterTool`) is one the listing accounts for. `undefined`: no
 * batch to close (nothing recorded, nothing newly listed).
 */
function applyListing(
  s: HookSessionState,
  listing: HookBatchListing,
  options: HookStepOptions,
  nowMillis: number,
): { readonly open: OpenBatch; readonly turn: string | undefined } | undefined {
  const seen = s.open !== undefined || (s.running ?? 0) > 0;
  const fresh = listing.kind === 'listed' && listing.turn !== undefined && listing.turn !== s.listedTurn;
  if (!fresh && !seen) return undefined;
  const open = openCopy(s.open, nowMillis);
  if (listing.kind !== 'listed' || !fresh) {
    markUnrecordedCalls(open);
    return { open, turn: listing.kind === 'listed' ? listing.turn : undefined };
  }
  const unrecorded = unrecordedListedCalls(sealBatch(openCopy(s.open, nowMillis), options.vocabulary).observations, listing.calls);
  if (unrecorded === undefined) markUnrecordedCalls(open);
  else unrecorded.forEach((c, i) => settle(open, `listed-${listing.turn ?? ''}-${i}`, factsOf(c.toolName, undefined, c.outcome), nowMillis));
  return { open, turn: listing.turn };
}

/** The reducer's outcome for the open batch if it closed now, on copies (the state is not changed). */
function previewBatch(s: HookSessionState, mode: GuardMode, options: HookStepOptions): ReturnType<typeof reduceFailure>[1] {
  const receipt = sealBatch(openCopy(s.open, s.updatedMillis), options.vocabulary);
  return reduceFailure(s.guard, { type: 'batch_settled', mode, batch: receipt, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true })[1];
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
  let promptId = event.promptId;
  if (promptId === undefined && event.type === 'prompt_started') {
    const prompts = (s.prompts ?? 0) + 1;
    promptId = numberedPromptId(event.sessionId, prompts);
    s = { ...s, prompts };
  }
  if (promptId !== undefined) {
    if (promptKey(promptId) !== s.prompt) s = newPrompt(s, promptId, mode, config);
  } else promptId = s.promptId;
  // A prompt whose warned candidate never got its reminder is enforced at most as `warn`.
  const effective: GuardMode = s.downgraded === true && mode === 'enforce' ? 'warn' : mode;
  if ((options.lostRecords ?? 0) > 0) {
    const open = openCopy(s.open, nowMillis);
    markUnrecordedCalls(open);
    s = { ...s, open };
  }
  switch (event.type) {
    case 'prompt_started':
      // The record's turns so far are earlier prompts': none is this prompt's batch.
      if (event.listing?.kind === 'listed' && event.listing.turn !== undefined) s = { ...s, listedTurn: event.listing.turn };
      return none(s);
    case 'call_settled': {
      const open = openCopy(s.open, nowMillis);
      settle(open, event.callId, factsOf(stateToolName(s.salt, event.toolName), event.toolType, event.outcome), nowMillis);
      const running = Math.max(0, (s.running ?? 0) - 1);
      const next: HookSessionState = { ...s, open, running, updatedMillis: nowMillis };
      if (options.remindOnLastCall === true && running === 0 && effective !== 'shadow') {
        // The batch's last running call: the reminder must go out with it or not at all.
        const preview = previewBatch(next, effective, options);
        if (preview.action.type === 'remind' && next.reminded !== preview.candidateOrdinal) {
          return {
            state: { ...next, reminded: preview.candidateOrdinal },
            action: { type: 'remind', text: preview.action.text },
            decisions: [],
            repetitionDecision: undefined,
          };
        }
      }
      return none(next);
    }
    case 'call_started': {
      if (s.halted !== undefined && options.denyAfterStop === true) {
        // The host cannot end the turn: no call runs after the stop.
        const open = openCopy(s.open, nowMillis);
        settle(open, event.callId, { toolName: stateToolName(s.salt, event.toolName), terminalStatus: 'error', spanExecutionStatus: 'not_started', providerDuplicate: false }, nowMillis);
        return {
          state: { ...s, open, updatedMillis: nowMillis },
          action: { type: 'deny_call', text: s.halted === 'stop' ? REPEATED_TOOL_FAILURE_STOP_TEXT : REPETITION_ABORT_TEXT },
          decisions: [],
          repetitionDecision: undefined,
        };
      }
      const fingerprint = createHmac('sha256', s.salt).update(argumentsFingerprint(event.toolName, event.toolInput)).digest('hex').slice(0, 32);
      const [repetition, outcome] = reduceRepetition(s.repetition, { type: 'tool_call', mode, fingerprint }, config);
      const repetitionDecision = outcome.decision === 'none' ? undefined : outcome.decision;
      // A denied call never runs, so no call_settled follows it: it is settled here, not running.
      s = { ...s, repetition, running: outcome.action.type === 'block' ? (s.running ?? 0) : Math.min((s.running ?? 0) + 1, MAX_BATCH_CALLS) };
      if (outcome.action.type === 'block') {
        const open = openCopy(s.open, nowMillis);
        settle(open, event.callId, { toolName: stateToolName(s.salt, event.toolName), terminalStatus: 'error', spanExecutionStatus: 'not_started', providerDuplicate: false }, nowMillis);
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
      let listedOpen: OpenBatch | undefined;
      if (event.listing !== undefined) {
        const listed = applyListing(s, event.listing, options, nowMillis);
        if (listed === undefined) return none({ ...s, running: 0 });
        listedOpen = listed.open;
        s = { ...s, listedTurn: listed.turn ?? s.listedTurn };
      }
      // A model request with no call recorded before it (the prompt's first, or one after a text
      // answer) closes no batch.
      if (listedOpen === undefined && s.open === undefined && event.calls.length === 0 && event.complete) return none({ ...s, running: 0 });
      // A host that lists the prompt's batches again and again: one already reduced, or one listed
      // before the batch ahead of it was reduced, changes nothing (a later event lists it again).
      if (event.ordinal !== undefined && event.ordinal !== s.batches + 1) return none(s);
      // A call with no outcome yet, and none recorded: the batch is judged by a later event.
      if (event.calls.some((c) => c.outcome === undefined && !recordedSettled(s.open, c.callId))) return none(s);
      const open = listedOpen ?? openCopy(s.open, nowMillis);
      for (const c of event.calls) {
        const held = findCall(open, c.callId);
        if (c.outcome === undefined) continue;
        const facts = factsOf(stateToolName(s.salt, c.toolName), c.toolType, c.outcome);
        if (held === undefined) settle(open, c.callId, facts, nowMillis);
        else mergeIntoCall(open, held, { promptId: '', callId: c.callId, settled: true, facts, timeMillis: nowMillis });
      }
      if (!event.complete) markUnrecordedCalls(open);
      const receipt = sealBatch(open, options.vocabulary);
      const [guard, outcome] = reduceFailure(s.guard, {
        type: 'batch_settled',
        mode: effective,
        batch: receipt,
        hasExternalInput: false,
        hasQueuedPrompt: false,
        inputReliable: true,
      });
      const batch = s.batches + 1;
      const decision: BatchDecision | undefined =
        outcome.decision === 'none' || promptId === undefined
          ? undefined
          : {
              promptId,
              batch,
              mode: effective,
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
      // A remindOnLastCall host gets the reminder from the batch's last call; when it could not go out
      // there (no call was seen running), this prompt never stops.
      const undelivered = options.remindOnLastCall === true && outcome.decision === 'warned' && s.reminded !== outcome.candidateOrdinal;
      let next: HookSessionState = {
        ...s,
        guard,
        batches: batch,
        open: undefined,
        stopAfterBatch: false,
        updatedMillis: nowMillis,
        running: 0,
        downgraded: s.downgraded === true || undelivered,
      };
      let action: HookAction = { type: 'none' };
      if (effective !== 'shadow') {
        if (outcome.action.type === 'stop') action = { type: 'stop', text: outcome.action.text };
        else if (outcome.action.type === 'remind' && options.remindOnLastCall !== true) action = { type: 'remind', text: outcome.action.text };
      }
      if (action.type === 'none' && s.stopAfterBatch && mode === 'enforce') action = { type: 'stop', text: REPETITION_ABORT_TEXT };
      if (action.type === 'stop' && options.denyAfterStop === true && s.halted === undefined) {
        next = { ...next, halted: action.text === REPETITION_ABORT_TEXT ? 'abort' : 'stop' };
      }
      return { state: next, action, decisions: decision === undefined ? [] : [decisionLine(decision)], decision, repetitionDecision: undefined };
    }
  }
}

/**
 * Batch assembly and per-prompt guard state, shared by the in-process processors, `replay` and
 * `serve`. Profiles translate telemetry into {@link CallUpdate}s and boundaries; the engine builds
 * the batch receipt, calls the pure reducer, and reports each reduction to its listeners.
 *
 * Longer than the ~350-line norm on purpose: it is the one place that decides when a prompt's batch
 * closes (a model request, a batch span, a response id, the control hook, the prompt's end, a held
 * batch whose logs trail) and how it is reduced (assumed or unreliable drain, unjudged reasons).
 * Those rules share the prompt entry and must be read together; the parts that need no prompt state
 * live beside it (`batch-assembler.ts`, `prompt-registry.ts`, `failure-types.ts`).
 */
import { BoundedMap, BoundedSet } from './bounded.js';
import { PromptRegistry } from './prompt-registry.js';
import { notifyAll } from './notify.js';
import { DEFAULT_FAILURE_POLICY, reduceFailure, initialFailureState } from '../core/failure/reducer.js';
import type { FailurePolicy } from '../core/failure/reducer.js';
import type { CallUpdate, PromptInfo } from './call-facts.js';
import { findCall, hasCancelledCall, hasOverflowed, hasRunningCall, hasSettledCall, hasUnsettledCall, isExplicitBatch, markUnrecordedCalls, mergeCallUpdate, mergeIntoCall, newOpenBatch, releaseBatch, reopenBatch, sealBatch } from './batch-assembler.js';
import type { CallRecord, OpenBatch } from './batch-assembler.js';
import type { GuardRoute } from './call-facts.js';
import { CALL_ESTIMATE_BYTES, CLOSED_CALL_ESTIMATE_BYTES, DEFAULT_EVICTED_PROMPT_FILTER_BYTES, DEFAULT_MAX_HELD_BYTES, PROMPT_ESTIMATE_BYTES } from './failure-types.js';
import type { BatchDecision, EvictionReason, FailureEngineListener, FailureEngineSettings, PromptRef } from './failure-types.js';
import type {
  BatchReceipt,
  DrainSignals,
  FailureAction,
  GuardMode,
  FailureState,
} from '../core/failure/types.js';

interface PendingBatch {
  readonly receipt: BatchReceipt;
  readonly index: number;
  readonly lastActivityMillis: number;
}

interface PromptEntry {
  readonly promptId: string;
  mode: GuardMode;
  route: GuardRoute;
  /**
   * {@link ROUTE_KNOWN}, {@link FOREGROUND}, {@link ADMITTED}, {@link STOPPED_BY_OTHER},
   * {@link AWAITING_REQUEST}: one small integer, not five fields.
   */
  flags: number;
  /** `qwen-code.message_type`, when known. */
  messageType: string | undefined;
  traceId: string | undefined;
  sessionId: string | undefined;
  /** The producer's Resource `service.name`, when the profile passed it (which agent). */
  serviceName: string | undefined;
  state: FailureState;
  open: OpenBatch | undefined;
  /**
   * The previous batch, when the next model request began before every call of it settled: its
   * terminal records may still arrive (timestamps of mixed precision, clocks that step, logs
   * exported after spans). It is sealed when its last call settles, or when the next batch
   * closes or the prompt ends, whichever comes first.
   */
  closing: OpenBatch | undefined;
  pending: PendingBatch | undefined;
  batchCount: number;
  /** Call ids of batches already judged (late records for them are dropped); created at the first close. */
  closedCalls: BoundedSet<string> | undefined;
  /** Last telemetry of the prompt, in milliseconds since the engine's first stamp. */
  lastSeenMillis: number;
  /** The profile's note ({@link PromptInfo.note}). */
  note: string | null | undefined;
  /** Set by the registry's `weigh`; initialised here so every entry keeps one shape (no property added later). */
  heldBytes: number;
  /** Whether the registry holds the entry (see `RegistryEntry.held`); initialised for the same reason. */
  held: boolean;
}

/** The route came from the prompt's message type (not inferred). */
const ROUTE_KNOWN = 1;
/** A record proved a foreground prompt (interaction span, interaction llm_request, api_request). */
const FOREGROUND = 2;
/**
 * Its batches may be judged: always, unless the engine requires the prompt's start
 * ({@link FailureEngineSettings.promptStartRequiredFromMillis}).
 */
const ADMITTED = 4;
/** Another loop protection stopped the turn (a `loop_detected` of another type). */
const STOPPED_BY_OTHER = 8;
/** The profile's latest batch has no model request after it yet ({@link PromptInfo.batchAwaitingRequest}). */
const AWAITING_REQUEST = 16;

const ASSUMED_DRAIN: DrainSignals = { hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true };
const NO_HOOK_DRAIN: DrainSignals = { hasExternalInput: false, hasQueuedPrompt: false, inputReliable: false };
const NO_ACTION: FailureAction = { type: 'none' };
const MAX_CLOSED_CALLS_PER_PROMPT = 4096;
/** Released batches kept for reuse (one is enough when prompts take turns; a few cover a burst of closes). */
const MAX_SPARE_BATCHES = 4;

/**
 * The guard engine. Not safe to share between unrelated agents: prompt ids are its keys.
 */
export class FailureEngine {
  private readonly _settings: FailureEngineSettings;
  private readonly _policy: FailurePolicy;
  /**
   * Prompts held, with tombstones: prompts that ended (their late records are dropped) and prompts
   * evicted before they ended (never tracked again, so they can never enforce).
   */
  private readonly _prompts: PromptRegistry<PromptEntry>;
  private readonly _channelPrompts: BoundedSet<string>;
  private readonly _modeOverrides: BoundedMap<string, GuardMode>;
  private readonly _listeners: FailureEngineListener[] = [];
  private _lateRecords = 0;
  private _afterJudgedRecords = 0;
  private _unadmittedBatches = 0;
  /** Released batches (see {@link FailureEngine._release}). */
  private readonly _spareBatches: OpenBatch[] = [];

  constructor(settings: FailureEngineSettings) {
    this._settings = settings;
    // The design's policy; only the opt-in treatment of untyped failures may differ.
    this._policy = settings.untypedFailures === 'key-by-tool' ? Object.freeze({ ...DEFAULT_FAILURE_POLICY, untypedFailures: 'key-by-tool' }) : DEFAULT_FAILURE_POLICY;
    this._prompts = new PromptRegistry({
      maxEntries: settings.maxOpenPrompts,
      maxBytes: settings.maxHeldBytes ?? DEFAULT_MAX_HELD_BYTES,
      now: settings.now,
      // A prompt that never opened a batch (one record, or a flood of made-up ids) goes before live work.
      disposable: (e) => e.batchCount === 0 && e.open === undefined && e.closing === undefined && e.pending === undefined,
      tombstones: {
        finishedCapacity: settings.maxOpenPrompts,
        evictedFilterBytes: settings.evictedPromptFilterBytes ?? DEFAULT_EVICTED_PROMPT_FILTER_BYTES,
      },
    });
    this._channelPrompts = new BoundedSet(2 * settings.maxOpenPrompts);
    this._modeOverrides = new BoundedMap(2 * settings.maxOpenPrompts);
  }

  /** The configured process-wide mode. */
  get mode(): GuardMode {
    return this._settings.mode;
  }

  /**
   * Records that arrived for a prompt that had already finished or been evicted, or for a call of a
   * batch already judged (the second kind also in {@link FailureEngine.afterJudgedRecords}).
   */
  get lateRecords(): number {
    return this._lateRecords;
  }

  /**
   * Records of a call whose batch was already judged that are not its terminal record (a tool
   * span's start or end): part of {@link FailureEngine.lateRecords}. The call was judged on its
   * terminal record; how many such records there are depends on how the input was cut into
   * deliveries (0 to 96 over the same 40 sessions in runs of `bench/serve-skew.mjs`).
   */
  get afterJudgedRecords(): number {
    return this._afterJudgedRecords;
  }

  /** Batches not judged because their prompt was not admitted (its start was not seen in time). */
  get unadmittedBatches(): number {
    return this._unadmittedBatches;
  }

  /** Prompts currently held in memory. */
  get openPromptCount(): number {
    return this._prompts.size;
  }

  /**
   * Estimated share of new prompt ids the evicted-prompt filter refuses by mistake (those prompts are
   * never tracked: a miss, never a wrong action). `0` until a prompt is evicted.
   */
  get evictedFilterFalsePositiveRate(): number {
    return this._prompts.evictedFalsePositiveRate;
  }

  /** Estimated bytes the prompts hold now (bounded by `maxHeldBytes`). */
  get heldBytes(): number {
    return this._prompts.heldBytes;
  }

  addListener(listener: FailureEngineListener): void {
    this._listeners.push(listener);
  }

  /**
   * Override the mode of one prompt (replay uses the mode the in-tree guard recorded). Applies to
   * the prompt's state when it exists or when it is created; creates nothing.
   */
  setPromptMode(promptId: string, mode: GuardMode): void {
    this._modeOverrides.set(promptId, mode);
    const entry = this._prompts.get(promptId);
    if (entry !== undefined && !this._channelPrompts.has(promptId)) entry.mode = mode;
  }

  /**
   * The note the profile keeps with a held prompt ({@link PromptInfo.note}); `undefined` when the
   * prompt is not held or has none. Creates nothing.
   */
  profileNote(promptId: string): string | null | undefined {
    return this._prompts.get(promptId)?.note;
  }

  /**
   * A reference to the held prompt (`undefined` when not held), for a profile that reaches prompts
   * through another index (a trace): {@link FailureEngine.resumePrompt} then makes the prompt's next
   * lookup by id free. Creates nothing.
   */
  promptRef(promptId: string): PromptRef | undefined {
    return this._prompts.get(promptId) as PromptRef | undefined;
  }

  /**
   * Make the prompt of `ref` the engine's last looked-up prompt, so the next call naming its id
   * probes no hash table (whose memory is cold when many prompts are open). Returns whether the
   * prompt is still held; when it is not, nothing changes and the caller drops the reference.
   * Only a hint: every call gives the same result with or without it.
   */
  resumePrompt(ref: PromptRef): boolean {
    const entry = ref as unknown as PromptEntry;
    return this._prompts.prime(entry.promptId, entry);
  }

  /** The prompt's `qwen-code.message_type`, when the engine holds the prompt and knows it. */
  messageTypeOf(promptId: string): string | undefined {
    return this._prompts.get(promptId)?.messageType;
  }

  /**
   * Whether a prompt is forced `off` whatever the mode: a channel prompt, or one whose
   * `qwen-code.message_type` is in `offMessageTypes`.
   */
  isForcedOff(promptId: string, messageType: string | undefined): boolean {
    return (this._channelPrompts.size !== 0 && this._channelPrompts.has(promptId)) || (messageType !== undefined && this._settings.offMessageTypes.includes(messageType));
  }

  /** Mark a prompt as a channel prompt: forced `off` (design "Scope and enforcement modes"). */
  markChannelPrompt(promptId: string): void {
    this._channelPrompts.add(promptId);
    const entry = this._prompts.get(promptId);
    if (entry !== undefined) entry.mode = 'off';
  }

  /** A record proved or described a prompt. */
  observePrompt(promptId: string, info: PromptInfo): void {
    const entry = this._entry(promptId);
    if (entry === undefined) return;
    if (info.sessionId !== undefined && entry.sessionId === undefined) entry.sessionId = info.sessionId;
    if (info.serviceName !== undefined && entry.serviceName === undefined) entry.serviceName = info.serviceName;
    if (info.traceId !== undefined && entry.traceId === undefined) entry.traceId = info.traceId;
    if (info.note !== undefined) entry.note = info.note;
    if (info.foreground === true) entry.flags |= FOREGROUND;
    if (info.batchAwaitingRequest === true) entry.flags |= AWAITING_REQUEST;
    else if (info.batchAwaitingRequest === false) entry.flags &= ~AWAITING_REQUEST;
    if (info.messageType !== undefined) {
      entry.messageType = info.messageType;
      if (this._settings.offMessageTypes.includes(info.messageType)) entry.mode = 'off';
    }
    if (info.route !== undefined) {
      entry.route = info.route;
      entry.flags |= ROUTE_KNOWN;
    } else if (info.inferredRoute !== undefined && (entry.flags & ROUTE_KNOWN) === 0) {
      entry.route = info.inferredRoute;
    }
  }

  /**
   * The prompt's start record (qwen-code: `qwen-code.user_prompt`), with its event time in
   * milliseconds since the epoch. When the engine requires prompt starts, this admits the prompt if
   * the time is not before {@link FailureEngineSettings.promptStartRequiredFromMillis} and none of its
   * calls arrived before; otherwise it changes nothing.
   */
  startPrompt(promptId: string, timeMillis: number): void {
    const from = this._settings.promptStartRequiredFromMillis;
    if (from === undefined) return;
    const entry = this._entry(promptId);
    if (entry === undefined || (entry.flags & ADMITTED) !== 0) return;
    entry.lastSeenMillis = this._stamp();
    if (timeMillis >= from && (entry.open?.callCount ?? 0) === 0 && entry.closing === undefined && entry.closedCalls === undefined) entry.flags |= ADMITTED;
  }

  /**
   * A new model request of the prompt began: the open batch (if any) is closed. A batch with a call
   * whose terminal record has not arrived yet is held as the closing batch instead (see
   * {@link PromptEntry.closing}): the request's start can sort before the last records of the
   * batch it follows, and ordering must not decide the outcome.
   */
  boundary(promptId: string): void {
    const entry = this._entry(promptId);
    if (entry === undefined) return;
    entry.flags |= FOREGROUND;
    entry.lastSeenMillis = this._stamp();
    // The previous closing batch is sealed first, and the open batch read after it: a listener of
    // that seal may re-enter the engine and close (and release for reuse) the open batch.
    this._sealClosing(entry);
    const open = entry.open;
    if (open !== undefined && !isExplicitBatch(open) && hasUnsettledCall(open)) {
      entry.open = undefined;
      entry.closing = open;
    } else this._closeOpen(entry, false);
    this._reweigh(entry);
  }

  /**
   * A model response asked for calls none of which left a record (the agent records no call it
   * rejects before running it): its batch is incomplete. The open batch is closed first, then an
   * incomplete batch with no observation is reduced in its place (design: an incomplete batch
   * resets). Nothing happens for a prompt that is not held.
   */
  unrecordedBatch(promptId: string, timeMillis: number): void {
    const entry = this._entry(promptId);
    if (entry === undefined) return;
    entry.lastSeenMillis = this._stamp();
    this._closeOpen(entry, false);
    const batch = this._newBatch(false, timeMillis);
    markUnrecordedCalls(batch);
    this._close(entry, batch, false);
    this._release(batch);
    this._reweigh(entry);
  }

  /**
   * An explicit batch began (a batch span started): the previous open batch is closed and the new
   * one is closed only by {@link FailureEngine.closeBatch}, never by the control hook.
   */
  openBatch(promptId: string, timeMillis: number): void {
    const entry = this._entry(promptId);
    if (entry === undefined) return;
    entry.flags |= FOREGROUND;
    entry.lastSeenMillis = this._stamp();
    this._closeOpen(entry, false);
    entry.open = this._newBatch(true, timeMillis);
    this._reweigh(entry);
  }

  /** Explicit end of the prompt's batch (the batch span ended). */
  closeBatch(promptId: string): void {
    const entry = this._prompts.get(promptId);
    if (entry === undefined) return;
    entry.lastSeenMillis = this._stamp();
    this._closeOpen(entry, false);
    this._reweigh(entry);
  }

  /** Merge facts about a call into the prompt's open batch. */
  updateCall(update: CallUpdate): void {
    const entry = this._entry(update.promptId);
    if (entry === undefined) return;
    entry.lastSeenMillis = this._stamp();
    let open = entry.open;
    // A call of the open batch (most updates: every record of a call after its first) cannot be
    // one of a judged batch: a call id is admitted to one batch only.
    const held = open === undefined ? undefined : findCall(open, update.callId);
    if (held !== undefined) {
      // No call is added or removed: the estimate, kept exact by every engine call that changes
      // the calls a prompt holds, stays right without a reweigh.
      mergeIntoCall(open as OpenBatch, held, update);
      return;
    }
    if (entry.closedCalls?.has(update.callId) === true) {
      this._lateRecords += 1;
      // A span's start or end, not the call's terminal record (which would have settled it).
      if (update.settled !== true) this._afterJudgedRecords += 1;
      return;
    }
    const closing = entry.closing;
    if (closing !== undefined && findCall(closing, update.callId) !== undefined) {
      // A call the closing batch holds: none is added, but the batch may be sealed.
      mergeCallUpdate(closing, update, this._settings.maxCallsPerBatch);
      if (!hasUnsettledCall(closing)) {
        this._sealClosing(entry);
        this._reweigh(entry);
      }
      return;
    }
    if (
      open !== undefined &&
      update.responseId !== undefined &&
      open.responseId !== undefined &&
      open.responseId !== update.responseId
    ) {
      this._closeOpen(entry, false);
      open = entry.open;
    }
    if (open === undefined) {
      open = this._newBatch(false, update.timeMillis);
      entry.open = open;
    }
    mergeCallUpdate(open, update, this._settings.maxCallsPerBatch);
    this._reweigh(entry);
  }

  /**
   * Update the prompt's byte estimate; evict the oldest other prompts if the bound is passed. Called
   * once at the end of every engine call that changes the calls a prompt holds (open, closing,
   * pending) or its judged call ids, and when a prompt is created: so the estimate is exact between
   * any two engine calls (`test/held-bytes-estimate.test.ts`), and the bound is checked only against
   * states that outlast a call. Inside one, a closed batch can be counted as pending before it is
   * reduced, which no bound should see.
   */
  private _reweigh(entry: PromptEntry): void {
    const calls = (entry.open?.callCount ?? 0) + (entry.closing?.callCount ?? 0) + (entry.pending?.receipt.observations.length ?? 0);
    const bytes = PROMPT_ESTIMATE_BYTES + CALL_ESTIMATE_BYTES * calls + CLOSED_CALL_ESTIMATE_BYTES * (entry.closedCalls?.size ?? 0);
    const removed = this._prompts.weigh(entry.promptId, entry, bytes);
    if (removed !== undefined) for (const [, other] of removed) this._evict(other, 'capacity');
  }

  /** Another loop protection stopped the prompt's turn: its final batch is not reduced. */
  turnStopped(promptId: string): void {
    const entry = this._prompts.get(promptId);
    if (entry !== undefined) entry.flags |= STOPPED_BY_OTHER;
  }

  /**
   * The prompt finished: close its last batch, reduce anything pending, and forget it.
   *
   * The final batch is reduced only if the Session would have run the guard on it: not when the
   * turn was cancelled (`cancelled`), when the batch holds a cancelled call (a permission cancel
   * ends the ACP turn before the guard runs, observed in qwen-code 0.24.4), or when another loop
   * protection stopped the turn (only the first guard that stops a turn records it; design); nor
   * when the profile saw no model request after it ({@link PromptInfo.batchAwaitingRequest}: the
   * turn was cut after the batch).
   */
  endPrompt(promptId: string, turnCancelled = false): void {
    const entry = this._prompts.get(promptId);
    if (entry === undefined) return;
    entry.lastSeenMillis = this._stamp();
    // The profile saw no model request after the last batch: the turn was cut after it.
    const cut = turnCancelled || (entry.flags & AWAITING_REQUEST) !== 0;
    // The closing batch was followed by a model request: the Session ran the guard on it.
    this._sealClosing(entry);
    const open = entry.open;
    const unjudged =
      open === undefined || open.callCount === 0 || entry.mode === 'off' || (entry.flags & (FOREGROUND | ADMITTED)) !== (FOREGROUND | ADMITTED)
        ? undefined
        : cut
          ? 'turn_cancelled'
          : (entry.flags & STOPPED_BY_OTHER) !== 0
            ? 'other_loop_stop'
            : hasCancelledCall(open)
              ? 'cancelled_call'
              : undefined;
    if (unjudged !== undefined) {
      entry.open = undefined;
      this._release(open as OpenBatch);
      const index = entry.batchCount + 1;
      notifyAll(this._listeners, (l) => l.onUnjudgedBatch?.(promptId, unjudged, index), this._settings.reportError);
    } else this._closeOpen(entry, false);
    this._reducePending(entry, this._noHookDrain(entry), 'assumed');
    this._forget(entry);
  }

  /**
   * The control hook: reduce the prompt's settled batch with the Session's drain result.
   * Never throws.
   */
  afterToolBatch(promptId: string, drain: DrainSignals, channelPrompt: boolean): FailureAction {
    if (channelPrompt) this.markChannelPrompt(promptId);
    const entry = this._prompts.get(promptId);
    if (entry === undefined) return NO_ACTION;
    if (entry.pending === undefined && (entry.open === undefined || !isExplicitBatch(entry.open))) this._closeOpen(entry, true);
    const decision = this._reducePending(entry, drain, 'control_hook');
    this._reweigh(entry);
    if (decision === undefined || decision.mode === 'shadow') return NO_ACTION;
    return decision.outcome.action;
  }

  /** Reduce or drop everything still held: used by `forceFlush`, `shutdown` and the end of a replay. */
  finishAll(): void {
    for (const [promptId] of this._prompts.entries()) this.endPrompt(promptId);
  }

  /** Evict prompts idle longer than `promptIdleMillis` (by the engine clock). */
  sweep(): void {
    // A call still running (a long build, a pending permission) holds the prompt 4x longer.
    for (const [, entry] of this._prompts.idle(this._settings.promptIdleMillis, (e) => hasRunningCall(e.open) || hasRunningCall(e.closing))) {
      this._evict(entry, 'idle');
    }
  }

  /** Engine clock in milliseconds since the first stamp, rounded. */
  private _stamp(): number {
    return this._prompts.stamp();
  }

  private _entry(promptId: string): PromptEntry | undefined {
    // A held prompt (the common case) without admit's closure and result object.
    const held = this._prompts.get(promptId);
    if (held !== undefined) return held;
    const admission = this._prompts.admit(promptId, () => (this._settings.mode === 'off' ? undefined : this._newEntry(promptId)));
    for (const [, oldest] of admission.trimmed) this._evict(oldest, 'capacity');
    if (admission.status === 'finished' || admission.status === 'evicted') this._lateRecords += 1;
    // A new prompt counts from its first record, calls or not (a model request, an interaction span).
    if (admission.status === 'created') {
      this._reweigh(admission.entry);
      if (this._listeners.length !== 0) notifyAll(this._listeners, (l) => l.onPromptOpened?.(promptId), this._settings.reportError);
    }
    return admission.entry;
  }

  private _newEntry(promptId: string): PromptEntry {
    return {
      promptId,
      mode: this._channelPrompts.has(promptId) ? 'off' : (this._modeOverrides.get(promptId) ?? this._settings.mode),
      route: 'acp_foreground',
      flags: this._settings.promptStartRequiredFromMillis === undefined ? ADMITTED : 0,
      messageType: undefined,
      traceId: undefined,
      sessionId: undefined,
      serviceName: undefined,
      state: initialFailureState(),
      open: undefined,
      closing: undefined,
      pending: undefined,
      batchCount: 0,
      closedCalls: undefined,
      lastSeenMillis: this._stamp(),
      note: undefined,
      heldBytes: 0,
      held: false,
    };
  }

  /**
   * Close the open batch into `pending`. Unless the control hook is closing it (`byHook`), shadow
   * reduces at once with the assumed drain; warn and enforce wait for the hook, and a batch that
   * is still waiting when the next one closes or the prompt ends is reduced as an unreliable drain.
   */
  private _closeOpen(entry: PromptEntry, byHook: boolean): void {
    this._sealClosing(entry);
    const open = entry.open;
    if (open === undefined) return;
    entry.open = undefined;
    this._close(entry, open, byHook);
    this._release(open);
  }

  /** Seal the closing batch (see {@link PromptEntry.closing}), if any. */
  private _sealClosing(entry: PromptEntry): void {
    const closing = entry.closing;
    if (closing === undefined) return;
    entry.closing = undefined;
    this._close(entry, closing, false);
    this._release(closing);
  }

  /** A new, empty open batch: a released one when the engine has one, else a fresh one. */
  private _newBatch(explicit: boolean, timeMillis: number): OpenBatch {
    const spare = this._spareBatches.pop();
    return spare === undefined ? newOpenBatch(explicit, timeMillis) : reopenBatch(spare, explicit, timeMillis);
  }

  /**
   * Keep a batch no prompt holds any more for the next batch to open, with its call records: with
   * many prompts open, a batch and its records live until their prompt's next batch, long enough
   * for the garbage collector to copy them to its old generation; reused, they are copied once.
   */
  private _release(open: OpenBatch): void {
    // A batch no spare slot takes is dropped as it is: clearing it would be work for nothing.
    if (this._spareBatches.length < MAX_SPARE_BATCHES && releaseBatch(open)) this._spareBatches.push(open);
  }

  private _close(entry: PromptEntry, open: OpenBatch, byHook: boolean): void {
    if (open.callCount === 0 && !hasOverflowed(open)) return;
    const receipt = sealBatch(open, this._settings.executionErrorTypes);
    entry.closedCalls ??= new BoundedSet(MAX_CLOSED_CALLS_PER_PROMPT);
    for (let i = 0; i < open.callCount; i++) entry.closedCalls.add((open.calls[i] as CallRecord).callId);
    // The caller reweighs once its engine call is done (see `_reweigh`).
    if ((entry.flags & FOREGROUND) === 0 || entry.mode === 'off') return;
    if ((entry.flags & ADMITTED) === 0) {
      this._unadmittedBatches += 1;
      return;
    }
    this._reducePending(entry, this._noHookDrain(entry), 'assumed');
    entry.batchCount += 1;
    entry.pending = { receipt, index: entry.batchCount, lastActivityMillis: open.lastActivityMillis };
    if (open.callCount > 0 && !hasSettledCall(open)) {
      const index = entry.batchCount;
      notifyAll(this._listeners, (l) => l.onUnjudgedBatch?.(entry.promptId, 'no_terminal_records', index), this._settings.reportError);
    }
    if (!byHook && (entry.mode === 'shadow' || !this._settings.controlHookRequired)) {
      this._reducePending(entry, ASSUMED_DRAIN, 'assumed');
    }
  }

  /** Drain signals for a batch the control hook never claimed. */
  private _noHookDrain(entry: PromptEntry): DrainSignals {
    return entry.mode === 'shadow' || !this._settings.controlHookRequired ? ASSUMED_DRAIN : NO_HOOK_DRAIN;
  }

  private _reducePending(
    entry: PromptEntry,
    drain: DrainSignals,
    source: BatchDecision['drainSource'],
  ): BatchDecision | undefined {
    const pending = entry.pending;
    if (pending === undefined) return undefined;
    entry.pending = undefined;
    const [next, outcome] = reduceFailure(
      entry.state,
      {
        type: 'batch_settled',
        mode: entry.mode,
        batch: pending.receipt,
        ...drain,
      },
      this._policy,
    );
    entry.state = next;
    const decision: BatchDecision = {
      promptId: entry.promptId,
      batch: pending.index,
      mode: entry.mode,
      route: entry.route,
      sessionId: entry.sessionId,
      ...(entry.serviceName === undefined ? {} : { serviceName: entry.serviceName }),
      receipt: pending.receipt,
      drain,
      drainSource: source,
      outcome,
      lastActivityMillis: pending.lastActivityMillis,
      decidedAtMillis: this._settings.now(),
    };
    notifyAll(this._listeners, (l) => l.onDecision?.(decision), this._settings.reportError);
    return decision;
  }

  private _forget(entry: PromptEntry, evicted = false): void {
    this._prompts.forget(entry.promptId, evicted ? 'evicted' : 'finished');
    this._channelPrompts.delete(entry.promptId);
    this._modeOverrides.delete(entry.promptId);
    notifyAll(this._listeners, (l) => l.onPromptForgotten?.(entry.promptId, entry.traceId), this._settings.reportError);
  }

  private _evict(entry: PromptEntry, reason: EvictionReason): void {
    this._forget(entry, true);
    notifyAll(this._listeners, (l) => l.onEviction?.(entry.promptId, reason), this._settings.reportError);
  }
}

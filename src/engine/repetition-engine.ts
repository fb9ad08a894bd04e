/**
 * The identical tool-call repetition breaker's shell: per-session state, argument digests computed in
 * memory (see `call-digest.ts`), and decisions reported to listeners. Arguments are never stored;
 * digests and fingerprints never leave this module.
 */
import { PromptRegistry } from './prompt-registry.js';
import { notifyAll } from './notify.js';
import { digestCanonicalText, digestJsonText, emptyArgumentsDigest } from './call-digest.js';
import type { ArgumentsDigest } from './call-digest.js';
import { canonicalArgumentsText, canonicalJson, canonicalJsonWithin } from './fingerprint.js';
import { DEFAULT_FINGERPRINT_BOUND } from './fingerprint-bound.js';
import { initialRepetitionState, reduceRepetition } from '../core/repetition/reducer.js';
import type { RepetitionAction, RepetitionOutcome, RepetitionState } from '../core/repetition/types.js';
import type { RepetitionConfig } from '../core/repetition/config.js';
import type { GuardRoute } from './call-facts.js';
import type { GuardMode, ToolType } from '../core/failure/types.js';

/** One repetition decision (never `none`), reported to listeners. Holds no argument and no fingerprint. */
export interface RepetitionDecisionRecord {
  readonly sessionKey: string;
  readonly promptId: string;
  readonly mode: GuardMode;
  readonly route: GuardRoute;
  readonly toolType: ToolType | undefined;
  readonly outcome: RepetitionOutcome;
  /** Where the call came from: the Session's hook, or telemetry. */
  readonly source: 'control_hook' | 'telemetry';
  readonly decidedAtMillis: number;
  readonly sessionId: string | undefined;
}

declare const sessionRefBrand: unique symbol;

/**
 * An opaque reference to a session the breaker holds (`RepetitionEngine.sessionRef`); it carries no
 * data a profile may read, and outlives its session harmlessly (`resumeSession` answers `false`).
 */
export interface SessionRef {
  readonly [sessionRefBrand]: true;
}

/** Receives repetition decisions. */
export interface RepetitionListener {
  onRepetitionDecision?(record: RepetitionDecisionRecord): void;
}

/** Settings of {@link RepetitionEngine}. */
export interface RepetitionEngineSettings {
  readonly mode: GuardMode;
  readonly config: RepetitionConfig;
  readonly maxSessions: number;
  /** A session with no call for this long is forgotten, in milliseconds. */
  readonly sessionIdleMillis: number;
  /**
   * Whether a call seen only in telemetry may be reported as acted on (`warned`, `aborted`). In
   * process this is false: without the Session's `beforeToolCall` nothing was warned or blocked,
   * so telemetry-only calls are reduced in `shadow` (`would_warn`, `would_abort`). Replay and serve
   * set it true to show what the configured mode would do.
   */
  readonly telemetryCanAct: boolean;
  readonly now: () => number;
  readonly reportError: (err: unknown) => void;
}

/** One tool call as seen by the breaker. */
export interface RepetitionCall {
  /** The session's key (`session.id`, or what the profile derives); `undefined` keys the call by its prompt. */
  readonly sessionId: string | undefined;
  readonly promptId: string;
  /** Call id, to count a call seen on both a span and a log once. */
  readonly callId: string | undefined;
  readonly toolName: string;
  /** Parsed arguments, or the raw `function_args` JSON text. */
  readonly args: unknown;
  readonly argsAreJsonText: boolean;
  readonly toolType: ToolType | undefined;
  /** False for prompts known to be injected (cron, notifications): they do not reset the run. */
  readonly userPrompt: boolean;
  readonly route: GuardRoute;
}

interface SessionEntry {
  /** The session key the entry is held under. */
  readonly key: string;
  /** Whether the registry holds the entry (see `RegistryEntry.held`). */
  held: boolean;
  state: RepetitionState;
  promptId: string | undefined;
  hookDriven: boolean;
  lastSeenMillis: number;
  /** The last two call ids counted, so a call seen on both its span and its log counts once. */
  lastCallId: string | undefined;
  previousCallId: string | undefined;
  /** Tool name of the last call the reducer counted (the one its state's fingerprint stands for). */
  lastTool: string | undefined;
  /** Digest of that call's canonical arguments (an {@link ArgumentsDigest}, held inline: no object per session). */
  lastLength: number;
  lastHigh: number;
  lastLow: number;
}

const NO_ACTION: RepetitionAction = { type: 'none' };

/**
 * The two fingerprints of strict counting (`windowSize` 0): there the reducer only asks whether a
 * call equals the previous counted call, so the engine answers that itself (tool name first, then
 * the digest) and hands the reducer the previous call's token when equal, the other token when not.
 */
const TOKEN_A = 'a';
const TOKEN_B = 'b';

/**
 * Strict-counting states are few (phase x token x run length): one shared frozen object each, not
 * one per session. States are immutable values, so sharing them changes nothing but memory.
 */
const MAX_INTERNED_RUN = 64;
const STRICT_STATES: (RepetitionState | undefined)[] = [];
const PHASE_INDEX: Readonly<Record<string, number>> = { tracking: 0, warned: 1, latched: 2 };

function internStrictState(state: RepetitionState): RepetitionState {
  if (state.phase === 'idle' || state.recent.length !== 0 || state.runLength > MAX_INTERNED_RUN) return state;
  const token = state.fingerprint === TOKEN_A ? 0 : state.fingerprint === TOKEN_B ? 1 : -1;
  if (token < 0) return state;
  const i = ((PHASE_INDEX[state.phase] ?? 0) * 2 + token) * (MAX_INTERNED_RUN + 1) + state.runLength;
  let shared = STRICT_STATES[i];
  if (shared === undefined) STRICT_STATES[i] = shared = Object.freeze({ ...state });
  return shared;
}

/** The outcome of a different call after a single one (strict counting): tracked, still run length 1. */
const TRACKED_ONCE: RepetitionOutcome = Object.freeze({ decision: 'tracked', phaseBefore: 'tracking', phaseAfter: 'tracking', runLength: 1, action: NO_ACTION });

/** Session key of a call: its session id (profiles derive one where the wire allows), else its prompt id. */
function sessionKeyOf(sessionId: string | undefined, promptId: string): string {
  return sessionId !== undefined && sessionId !== '' ? sessionId : promptId;
}

/** Whether a decision is reported as telemetry: the warn/abort transitions and the end of a warned run. */
export function isReportedRepetitionDecision(o: RepetitionOutcome): boolean {
  switch (o.decision) {
    case 'would_warn':
    case 'warned':
    case 'would_abort':
    case 'aborted':
      return true;
    case 'reset':
      return o.phaseBefore === 'warned';
    case 'none':
    case 'tracked':
      return false;
    default: {
      const _exhaustive: never = o.decision;
      return _exhaustive;
    }
  }
}

/** The repetition breaker's per-session shell. */
export class RepetitionEngine {
  private readonly _settings: RepetitionEngineSettings;
  /** Sessions held; a forgotten session starts fresh (no tombstones: nothing it held can act). */
  private readonly _sessions: PromptRegistry<SessionEntry>;
  private readonly _listeners: RepetitionListener[] = [];
  private _uncomparable = 0;
  /** The digest of the call being reduced (scratch: one per engine, not per call). */
  private readonly _digest: ArgumentsDigest = emptyArgumentsDigest();

  constructor(settings: RepetitionEngineSettings) {
    this._settings = settings;
    this._sessions = new PromptRegistry({ maxEntries: settings.maxSessions, now: settings.now });
  }

  /** Whether the breaker runs at all. */
  get active(): boolean {
    return this._settings.mode !== 'off' && this._settings.config.enabled;
  }

  addListener(listener: RepetitionListener): void {
    this._listeners.push(listener);
  }

  /** A call seen in telemetry; ignored for sessions whose Session calls the hook. */
  observeCall(call: RepetitionCall): void {
    if (!this.active) return;
    const entry = this._entry(sessionKeyOf(call.sessionId, call.promptId));
    if (entry.hookDriven) return;
    this._reduce(entry, call, 'telemetry');
  }

  /** The Session's pre-execution hook: decide for this call before it runs. */
  beforeToolCall(call: RepetitionCall): RepetitionAction {
    if (!this.active) return NO_ACTION;
    const entry = this._entry(sessionKeyOf(call.sessionId, call.promptId));
    entry.hookDriven = true;
    const outcome = this._reduce(entry, call, 'control_hook');
    if (outcome === undefined || this._settings.mode === 'shadow') return NO_ACTION;
    return outcome.action;
  }

  /**
   * A reference to the held session of a call's session and prompt ids (`undefined` when not held),
   * for a profile that keeps it beside another index: {@link RepetitionEngine.resumeSession} then
   * makes the session's next lookup free. Creates nothing.
   */
  sessionRef(sessionId: string | undefined, promptId: string): SessionRef | undefined {
    return this._sessions.get(sessionKeyOf(sessionId, promptId)) as SessionRef | undefined;
  }

  /**
   * Make the session of `ref` the last looked-up one, so the next call of that session probes no
   * hash table. Returns whether the session is still held. Only a hint: every call gives the same
   * result with or without it.
   */
  resumeSession(ref: SessionRef): boolean {
    const entry = ref as unknown as SessionEntry;
    return this._sessions.prime(entry.key, entry);
  }

  /** Forget sessions idle longer than `sessionIdleMillis` (by the engine clock). */
  sweep(): void {
    for (const [key] of this._sessions.idle(this._settings.sessionIdleMillis)) this._sessions.forget(key, 'dropped');
  }

  /** Sessions held now. */
  get sessionCount(): number {
    return this._sessions.size;
  }

  private _entry(key: string): SessionEntry {
    // A known session (the common case) without admit's closure and result object.
    const entry = this._sessions.get(key) ?? this._admit(key);
    entry.lastSeenMillis = this._sessions.stamp();
    return entry;
  }

  private _admit(key: string): SessionEntry {
    return this._sessions.admit(key, () => ({
      key,
      held: false,
      state: initialRepetitionState(),
      promptId: undefined,
      hookDriven: false,
      lastSeenMillis: 0,
      lastCallId: undefined,
      previousCallId: undefined,
      lastTool: undefined,
      lastLength: 0,
      lastHigh: 0,
      lastLow: 0,
    })).entry as SessionEntry;
  }

  private _reduce(entry: SessionEntry, call: RepetitionCall, source: RepetitionDecisionRecord['source']): RepetitionOutcome | undefined {
    const key = sessionKeyOf(call.sessionId, call.promptId);
    if (call.callId !== undefined) {
      if (entry.lastCallId === call.callId || entry.previousCallId === call.callId) return undefined;
      entry.previousCallId = entry.lastCallId;
      entry.lastCallId = call.callId;
    }
    const { config } = this._settings;
    const mode: GuardMode = source === 'telemetry' && !this._settings.telemetryCanAct ? 'shadow' : this._settings.mode;
    if (entry.promptId !== call.promptId) {
      entry.promptId = call.promptId;
      const [next, outcome] = reduceRepetition(entry.state, { type: call.userPrompt ? 'user_prompt' : 'injected_message', mode }, config);
      entry.state = next;
      this._report(key, call, outcome, source, mode);
    }
    const state = entry.state;
    const fingerprint = this._fingerprint(entry, call);
    if (fingerprint === undefined) return undefined;
    // The next call is compared with this one (a latched state ignores calls until it goes idle).
    entry.lastTool = call.toolName;
    entry.lastLength = this._digest.length;
    entry.lastHigh = this._digest.high;
    entry.lastLow = this._digest.low;
    if (state.phase === 'tracking' && state.runLength === 1 && state.recent.length === 0 && fingerprint !== state.fingerprint) {
      // Normal traffic: a different call after a single one. The reducer would return the same
      // state with the other token (run length 1, 'tracked'); the engine's digest already tells
      // the next call what it must be compared with, so the state and its token can stay.
      return TRACKED_ONCE;
    }
    const [next, outcome] = reduceRepetition(state, { type: 'tool_call', mode, fingerprint, toolType: call.toolType }, config);
    entry.state = internStrictState(next);
    this._report(key, call, outcome, source, mode);
    return outcome;
  }

  /**
   * The fingerprint handed to the reducer for a call; leaves the call's digest in `_digest`.
   * In-process arguments whose serialisation would exceed the work bound (`fingerprint-bound.ts`)
   * get no fingerprint and so no verdict: `undefined`.
   *
   * Strict counting (`windowSize` 0): one of two constant tokens, the session state's own when the
   * call equals the last counted call (same tool name, then same canonical length and digest),
   * the other one when not; no string is built per call. With a window: the tool name and digest
   * as a string (the window compares each call with several earlier ones).
   */
  private _fingerprint(entry: SessionEntry, call: RepetitionCall): string | undefined {
    const digest = this._digest;
    if (call.argsAreJsonText && typeof call.args === 'string') this._digestOfText(call.args, digest);
    else {
      // In-process arguments: serialised once, within the work bound (over it: no verdict).
      let canonical: string | undefined;
      try {
        canonical = canonicalJsonWithin(call.args, DEFAULT_FINGERPRINT_BOUND);
        if (canonical === undefined) return undefined;
        digestCanonicalText(canonical, digest);
      } catch {
        // A cycle, a bigint, a throwing getter: counted as distinct (a negative length no other call has).
        digest.length = -++this._uncomparable;
        digest.high = 0;
        digest.low = 0;
      }
    }
    if (this._settings.config.windowSize > 0) return `${call.toolName}\u0000${digest.length}.${digest.high}.${digest.low}`;
    const state = entry.state;
    if (state.phase === 'idle' || state.phase === 'latched') return TOKEN_A;
    const same = entry.lastTool === call.toolName && entry.lastLength === digest.length && entry.lastHigh === digest.high && entry.lastLow === digest.low;
    return same === (state.fingerprint === TOKEN_A) ? TOKEN_A : TOKEN_B;
  }

  /**
   * Digest of arguments given as JSON text: canonicalised, or digested as raw text when they cannot
   * be (nesting too deep for the stack).
   */
  private _digestOfText(text: string, into: ArgumentsDigest): void {
    try {
      if (!digestJsonText(text, into)) digestCanonicalText(canonicalArgumentsText(text), into);
    } catch {
      digestCanonicalText(canonicalJson({ raw: text }), into);
    }
  }

  private _report(
    sessionKey: string,
    call: RepetitionCall,
    outcome: RepetitionOutcome,
    source: RepetitionDecisionRecord['source'],
    mode: GuardMode,
  ): void {
    if (!isReportedRepetitionDecision(outcome)) return;
    const record: RepetitionDecisionRecord = {
      sessionKey,
      promptId: call.promptId,
      mode,
      route: call.route,
      toolType: call.toolType,
      outcome,
      source,
      decidedAtMillis: this._settings.now(),
      sessionId: call.sessionId,
    };
    notifyAll(this._listeners, (l) => l.onRepetitionDecision?.(record), this._settings.reportError);
  }
}

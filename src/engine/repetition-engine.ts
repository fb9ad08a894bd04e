/**
 * The identical tool-call repetition breaker's shell: per-session state, fingerprints computed in
 * memory and dropped at once, and decisions reported to listeners. Arguments and fingerprints never
 * leave this module.
 */
import { PromptRegistry } from './prompt-registry.js';
import { notifyAll } from './notify.js';
import { argumentsFingerprint, argumentsTextFingerprint } from './fingerprint.js';
import { withinFingerprintBound } from './fingerprint-bound.js';
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
  state: RepetitionState;
  promptId: string | undefined;
  hookDriven: boolean;
  lastSeenMillis: number;
  /** The last two call ids counted, so a call seen on both its span and its log counts once. */
  lastCallId: string | undefined;
  previousCallId: string | undefined;
}

const NO_ACTION: RepetitionAction = { type: 'none' };

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

  /** Forget sessions idle longer than `sessionIdleMillis` (by the engine clock). */
  sweep(): void {
    for (const [key] of this._sessions.idle(this._settings.sessionIdleMillis)) this._sessions.forget(key, 'dropped');
  }

  /** Sessions held now. */
  get sessionCount(): number {
    return this._sessions.size;
  }

  private _entry(key: string): SessionEntry {
    const entry = this._sessions.admit(key, () => ({
      state: initialRepetitionState(),
      promptId: undefined,
      hookDriven: false,
      lastSeenMillis: 0,
      lastCallId: undefined,
      previousCallId: undefined,
    })).entry as SessionEntry;
    entry.lastSeenMillis = this._sessions.stamp();
    return entry;
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
    const fingerprint = this._fingerprint(call);
    if (fingerprint === undefined) return undefined;
    const [next, outcome] = reduceRepetition(entry.state, { type: 'tool_call', mode, fingerprint, toolType: call.toolType }, config);
    entry.state = next;
    this._report(key, call, outcome, source, mode);
    return outcome;
  }

  /**
   * Fingerprint of a call. Arguments that cannot be canonicalised (a cycle, a bigint, nesting too
   * deep for the stack) are hashed as raw JSON text when there is one, else counted as distinct.
   * In-process arguments whose serialisation would exceed the work bound (`fingerprint-bound.ts`)
   * get no fingerprint and so no verdict: `undefined`.
   */
  private _fingerprint(call: RepetitionCall): string | undefined {
    if (!call.argsAreJsonText && !withinFingerprintBound(call.args)) return undefined;
    try {
      if (call.argsAreJsonText && typeof call.args === 'string') return argumentsTextFingerprint(call.toolName, call.args);
      return argumentsFingerprint(call.toolName, call.args);
    } catch {
      if (call.argsAreJsonText && typeof call.args === 'string') return argumentsFingerprint(call.toolName, { raw: call.args });
      return argumentsFingerprint(call.toolName, { uncomparable: ++this._uncomparable });
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

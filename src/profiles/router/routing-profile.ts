/**
 * The `auto` wire profile: every record goes to the profile of the agent that produced it, told
 * per producer (per Resource) from the producer's own names, as each registry entry declares them
 * (`recognise`: Resource `service.name`, instrumentation scope, span and event names; see
 * {@link ProducerRecognizer}). In process, in `serve` and in `replay` alike, several agents may
 * share one pipeline; each built-in profile is built once, on the first producer it reads.
 *
 * Records of a producer no profile recognises are read by none; `onUnread` is told their
 * producer's names (service and scope names, never values).
 */
import type { FailureEngine } from '../../engine/failure-engine.js';
import type { RepetitionEngine } from '../../engine/repetition-engine.js';
import type { BatchSpanProfileOptions } from '../batch-span/batch-span-profile.js';
import { spanScopeName } from '../detect.js';
import { WIRE_PROFILE_PRECEDENCE, WIRE_PROFILES } from '../registry.js';
import type { WireProfileDefinition, WireProfileName } from '../registry.js';
import type { LogRecordView, ResourceView, SpanView, WireProfile } from '../wire-profile.js';
import { ProducerRecognizer, resourceKey } from './producer-recognizer.js';

/** The names of a producer whose record no profile reads (never attribute values). */
export interface UnreadProducer {
  /** The Resource's `service.name`, or `undefined` when it has none. */
  readonly serviceName: string | undefined;
  /** The record's instrumentation scope name, or `undefined` when unknown or empty. */
  readonly scopeName: string | undefined;
}

/** A producer none of whose records a profile read so far, with how many records it sent. */
export interface UnreadProducerCount extends UnreadProducer {
  /** Its instrumentation scope names seen (at most {@link MAX_SCOPES_NAMED}). */
  readonly scopeNames: readonly string[];
  /** Spans and log records it sent (a span counts once, at its end). */
  readonly records: number;
  /** Of `records`, the spans. */
  readonly spans: number;
}

/** Unread producers tallied at once; records of further ones still reach `onUnread`. */
const MAX_UNREAD_PRODUCERS = 64;
/** Scope names kept per unread producer. */
export const MAX_SCOPES_NAMED = 8;

/** Options of {@link RoutingProfile}. */
export interface RoutingProfileOptions {
  /** Options of the `batch-span` profile. */
  readonly batchSpan?: BatchSpanProfileOptions;
  /**
   * The profile of a producer when known beforehand (`replay` detects each Resource's from the
   * whole input), or `undefined` to recognise it from its records. Called once per distinct Resource.
   * Ignored when `recognizer` is given.
   */
  readonly producerProfile?: (resource: ResourceView | undefined) => WireProfileName | undefined;
  /** A recognizer shared with whoever else must know each producer's profile (`serve`'s projection). @defaultValue a new one */
  readonly recognizer?: ProducerRecognizer;
  /** Called for every record no profile reads. Must not throw. */
  readonly onUnread?: (producer: UnreadProducer) => void;
}

/** The `auto` wire profile (see the module comment). */
export class RoutingProfile implements WireProfile {
  readonly name = 'auto';
  private readonly _engine: FailureEngine;
  private readonly _repetition: RepetitionEngine;
  private readonly _options: RoutingProfileOptions;
  private readonly _recognizer: ProducerRecognizer;
  private readonly _profiles = new Map<WireProfileName, WireProfile>();
  /** The profile handling the current record (while a profile is called). */
  private _current: WireProfileName | undefined;
  /** Each held prompt's profile (the one that was handling a record when the engine began holding it). */
  private readonly _promptProfiles = new Map<string, WireProfileName>();
  /** The prompt forgotten last and its profile: the engine tells an eviction right after forgetting. */
  private _forgotten: { promptId: string; profile: WireProfileName } | undefined;
  private readonly _unreadTotals = { spans: 0, logs: 0 };
  private readonly _unreadTally = new Map<
    string,
    { serviceName: string | undefined; scopeName: string | undefined; scopeNames: Set<string>; records: number; spans: number }
  >();

  constructor(engine: FailureEngine, repetition: RepetitionEngine, options: RoutingProfileOptions = {}) {
    this._engine = engine;
    this._repetition = repetition;
    this._options = options;
    this._recognizer = options.recognizer ?? new ProducerRecognizer({ producerProfile: options.producerProfile });
    engine.addListener({
      onPromptOpened: (promptId) => {
        if (this._current !== undefined) this._promptProfiles.set(promptId, this._current);
      },
      onPromptForgotten: (promptId) => {
        const profile = this._promptProfiles.get(promptId);
        this._forgotten = profile === undefined ? undefined : { promptId, profile };
        this._promptProfiles.delete(promptId);
      },
    });
  }

  /** Sweeps every profile built so far (see {@link WireProfile.sweep}). */
  sweep(): void {
    for (const profile of this._profiles.values()) profile.sweep?.();
  }

  /**
   * The profile that reads a prompt the engine holds, or the one it forgot last (`undefined`: not
   * held, or opened outside a record).
   */
  profileOfPrompt(promptId: string): WireProfileName | undefined {
    return this._promptProfiles.get(promptId) ?? (this._forgotten?.promptId === promptId ? this._forgotten.profile : undefined);
  }

  /**
   * Producers whose records no profile read and that no profile recognises now, with their
   * service and scope names (never values) and how many records each sent.
   */
  unreadProducers(): UnreadProducerCount[] {
    const out: UnreadProducerCount[] = [];
    for (const [key, u] of this._unreadTally) {
      if (this._recognizer.profileOfKey(key) !== undefined) continue;
      out.push({ serviceName: u.serviceName, scopeName: u.scopeName, scopeNames: [...u.scopeNames], records: u.records, spans: u.spans });
    }
    return out;
  }

  /** Every record no profile read so far, by signal (producers beyond those named included). */
  get unreadRecords(): { readonly spans: number; readonly logs: number } {
    return { ...this._unreadTotals };
  }

  /** The profiles that have read a producer so far, in precedence order. */
  get profilesInUse(): WireProfileName[] {
    return WIRE_PROFILE_PRECEDENCE.filter((n) => this._profiles.has(n));
  }

  /** The profile reading a producer's records now (`undefined`: none yet, or a producer not seen). */
  profileOf(resource: ResourceView | undefined): WireProfileName | undefined {
    return this._recognizer.profileOf(resource);
  }

  onSpanStart(span: SpanView): void {
    const name = this._recognizer.span(span);
    // An unread span is counted once, at its end.
    if (name === undefined) return;
    this._current = name;
    try {
      this._profile(name).onSpanStart(span);
    } finally {
      this._current = undefined;
    }
  }

  onSpanEnd(span: SpanView): void {
    const name = this._recognizer.span(span);
    if (name === undefined) return this._unread(span.resource, spanScopeName(span), true);
    this._current = name;
    try {
      this._profile(name).onSpanEnd(span);
    } finally {
      this._current = undefined;
    }
  }

  onLogRecord(record: LogRecordView): void {
    const name = this._recognizer.log(record);
    if (name === undefined) return this._unread(record.resource, record.instrumentationScope.name === '' ? undefined : record.instrumentationScope.name, false);
    this._current = name;
    try {
      this._profile(name).onLogRecord(record);
    } finally {
      this._current = undefined;
    }
  }

  private _profile(name: WireProfileName): WireProfile {
    let profile = this._profiles.get(name);
    if (profile === undefined) {
      const definition: WireProfileDefinition = WIRE_PROFILES[name];
      profile = definition.create(this._engine, this._repetition, { batchSpan: this._options.batchSpan });
      this._profiles.set(name, profile);
    }
    return profile;
  }

  private _unread(resource: ResourceView | undefined, scopeName: string | undefined, span: boolean): void {
    if (span) this._unreadTotals.spans++;
    else this._unreadTotals.logs++;
    const service = resource?.attributes['service.name'];
    const serviceName = typeof service === 'string' && service !== '' ? service : undefined;
    const key = resourceKey(resource);
    let u = this._unreadTally.get(key);
    if (u === undefined && this._unreadTally.size < MAX_UNREAD_PRODUCERS) this._unreadTally.set(key, (u = { serviceName, scopeName, scopeNames: new Set(), records: 0, spans: 0 }));
    if (u !== undefined) {
      u.records++;
      if (span) u.spans++;
      if (scopeName !== undefined && u.scopeNames.size < MAX_SCOPES_NAMED) u.scopeNames.add(scopeName);
    }
    this._options.onUnread?.({ serviceName, scopeName });
  }
}

/** A name from telemetry as printed: printable ASCII only, at most 80 characters. */
function printable(name: string): string {
  const clean = name.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 80 ? `${clean.slice(0, 77)}...` : clean;
}

/**
 * One line per producer no profile read: its `service.name` and scope names (never attribute
 * values), and how many records it sent.
 */
export function describeUnreadProducers(producers: readonly UnreadProducerCount[]): string[] {
  return producers.map((u) => {
    const scopes = u.scopeNames.length === 0 ? '(none)' : u.scopeNames.map(printable).join(', ');
    return `${u.records} record(s) from service.name ${u.serviceName === undefined ? '(none)' : printable(u.serviceName)}, scopes ${scopes}`;
  });
}

/** The agents the built-in profiles read, for messages about telemetry none reads. */
export function supportedAgents(): string {
  return Object.keys(WIRE_PROFILES).join(', ');
}

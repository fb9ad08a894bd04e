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
import { ProducerRecognizer } from './producer-recognizer.js';

/** The names of a producer whose record no profile reads (never attribute values). */
export interface UnreadProducer {
  /** The Resource's `service.name`, or `undefined` when it has none. */
  readonly serviceName: string | undefined;
  /** The record's instrumentation scope name, or `undefined` when unknown or empty. */
  readonly scopeName: string | undefined;
}

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

  constructor(engine: FailureEngine, repetition: RepetitionEngine, options: RoutingProfileOptions = {}) {
    this._engine = engine;
    this._repetition = repetition;
    this._options = options;
    this._recognizer = options.recognizer ?? new ProducerRecognizer({ producerProfile: options.producerProfile });
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
    this._span(span)?.onSpanStart(span);
  }

  onSpanEnd(span: SpanView): void {
    this._span(span)?.onSpanEnd(span);
  }

  onLogRecord(record: LogRecordView): void {
    const name = this._recognizer.log(record);
    if (name !== undefined) this._profile(name).onLogRecord(record);
    else this._unread(record.resource, record.instrumentationScope.name === '' ? undefined : record.instrumentationScope.name);
  }

  private _span(span: SpanView): WireProfile | undefined {
    const name = this._recognizer.span(span);
    if (name !== undefined) return this._profile(name);
    this._unread(span.resource, spanScopeName(span));
    return undefined;
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

  private _unread(resource: ResourceView | undefined, scopeName: string | undefined): void {
    const onUnread = this._options.onUnread;
    if (onUnread === undefined) return;
    const service = resource?.attributes['service.name'];
    onUnread({ serviceName: typeof service === 'string' && service !== '' ? service : undefined, scopeName });
  }
}

/**
 * Which profile reads each producer: per Resource, from the producer's own names as its records
 * arrive (each registry entry's `recognise`), for the `auto` router and for `serve`'s projection
 * at ingest (one recognizer shared by both, so a record is kept for the profile that will read it).
 *
 * Evidence only accumulates, so a producer can only move to a profile of higher precedence (a
 * qwen-code producer whose later spans show the design's batch span moves to `batch-span`), never
 * back. When a producer's profile is known beforehand (`replay` reads its whole input first),
 * `producerProfile` fixes it.
 */
import { BoundedMap } from '../../engine/bounded.js';
import { TelemetrySampleBuilder } from '../detect.js';
import type { ScopedSpanView } from '../detect.js';
import { detectWireProfiles, WIRE_PROFILE_PRECEDENCE, WIRE_PROFILES } from '../registry.js';
import type { WireProfileDefinition, WireProfileName } from '../registry.js';
import type { LogRecordView, ResourceView } from '../wire-profile.js';

/** Producers (distinct Resources) remembered at once; a forgotten one is recognised again from its next records. */
const MAX_PRODUCERS = 4096;

/** Canonical key of a Resource's attributes, cached per Resource object. */
const resourceKeys = new WeakMap<object, string>();

/** A Resource's identity: its attributes, canonical (`''` for none). Held in memory only, never emitted. */
export function resourceKey(resource: ResourceView | undefined): string {
  if (resource === undefined) return '';
  let key = resourceKeys.get(resource);
  if (key === undefined) {
    const attrs = resource.attributes;
    key = JSON.stringify(Object.keys(attrs).sort().map((k) => [k, attrs[k]]));
    resourceKeys.set(resource, key);
  }
  return key;
}

/** Options of {@link ProducerRecognizer}. */
export interface ProducerRecognizerOptions {
  /**
   * The profile of a producer when known beforehand, or `undefined` to recognise it from its
   * records. Called once per distinct Resource; must not throw.
   */
  readonly producerProfile?: (resource: ResourceView | undefined) => WireProfileName | undefined;
}

interface Producer {
  readonly sample: TelemetrySampleBuilder;
  /** The sample's size when the profile was last chosen. */
  seen: number;
  name: WireProfileName | undefined;
  /** Fixed by `producerProfile`: no more recognition. */
  readonly fixed: boolean;
}

const TOP = WIRE_PROFILE_PRECEDENCE[0];

function isFallback(name: WireProfileName): boolean {
  return (WIRE_PROFILES[name] as WireProfileDefinition).recognise.fallback === true;
}

/** Tells, record by record, which built-in profile reads the record's producer (see the module comment). */
export class ProducerRecognizer {
  private readonly _options: ProducerRecognizerOptions;
  private readonly _producers = new BoundedMap<string, Producer>(MAX_PRODUCERS);

  constructor(options: ProducerRecognizerOptions = {}) {
    this._options = options;
  }

  /** The profile reading a producer now (`undefined`: none recognised yet, or a producer not seen). */
  profileOf(resource: ResourceView | undefined): WireProfileName | undefined {
    return this._producers.get(resourceKey(resource))?.name;
  }

  /** The profile reading the producer of a {@link resourceKey} now. */
  profileOfKey(key: string): WireProfileName | undefined {
    return this._producers.get(key)?.name;
  }

  /** Take a span's names as its producer's evidence; the profile that reads the producer now. */
  span(span: ScopedSpanView): WireProfileName | undefined {
    const p = this._producer(span.resource);
    if (!p.fixed && p.name !== TOP) {
      // Attribute keys only tell a conventions (fallback) profile: not needed once an agent reads the producer.
      p.sample.addSpan(span, p.name === undefined || isFallback(p.name));
      this._recognise(p);
    }
    return p.name;
  }

  /** Take a log record's names as its producer's evidence; the profile that reads the producer now. */
  log(record: LogRecordView): WireProfileName | undefined {
    const p = this._producer(record.resource);
    if (!p.fixed && p.name !== TOP) {
      p.sample.addLog(record);
      this._recognise(p);
    }
    return p.name;
  }

  private _producer(resource: ResourceView | undefined): Producer {
    const key = resourceKey(resource);
    let p = this._producers.get(key);
    if (p === undefined) {
      const fixed = this._options.producerProfile?.(resource);
      p = { sample: new TelemetrySampleBuilder(), seen: 0, name: fixed, fixed: fixed !== undefined };
      this._producers.set(key, p);
    }
    return p;
  }

  private _recognise(p: Producer): void {
    if (p.sample.size === p.seen) return;
    p.seen = p.sample.size;
    const first = detectWireProfiles(p.sample.sample())[0];
    if (first !== undefined) p.name = first;
  }
}

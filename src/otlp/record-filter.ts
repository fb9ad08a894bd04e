/**
 * A profile's reads ({@link WireProfileReads}) as a filter of single records: what `serve` keeps
 * at ingest and `replay` keeps of a file.
 */
import { RecordedSpan } from './records.js';
import type { RecordedLog } from './records.js';
import type { WireProfileReads } from '../profiles/wire-profile.js';

/**
 * The attributes of `attrs` among `keys` (own properties only), in the order of `keys`: a new object.
 * @internal
 */
export function pickAttributes<V>(attrs: Readonly<Record<string, V>>, keys: Iterable<string>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const k of keys) if (Object.prototype.hasOwnProperty.call(attrs, k)) out[k] = attrs[k] as V;
  return out;
}

/**
 * The Resource attributes anything downstream of a projection reads: profile detection
 * (`service.name`), the shadow report's context (`service.version`, `deployment.environment`,
 * `deployment.environment.name`) and the replica's identity (`service.instance.id`). A projected
 * record keeps only these of its Resource: an agent's Resource can carry anything (host details,
 * process command lines), and a held record must not keep it alive outside the ingest budget.
 */
export const RESOURCE_KEYS_READ: readonly string[] = Object.freeze([
  'service.name',
  'service.version',
  'service.instance.id',
  'deployment.environment',
  'deployment.environment.name',
]);

/**
 * Kept on every projected span and log record whatever the profile reads: `serve` orders each
 * session on its own timeline (its reorder buffer keys producers by it), so a record that lost it
 * would be ordered apart from the rest of its session.
 */
export const SESSION_ID_KEY = 'session.id';

/** Projected Resources by their source object: the records of one Resource keep sharing one. */
const projectedResources = new WeakMap<object, { readonly attributes: Record<string, unknown> }>();

/**
 * The Resource as far as it is read ({@link RESOURCE_KEYS_READ}), one object per source Resource.
 * @internal
 */
export function projectResource<R extends { readonly attributes: Readonly<Record<string, unknown>> }>(resource: R | undefined): R | undefined {
  if (resource === undefined) return undefined;
  let projected = projectedResources.get(resource);
  if (projected === undefined) {
    projected = { attributes: pickAttributes(resource.attributes, RESOURCE_KEYS_READ) };
    projectedResources.set(resource, projected);
  }
  return projected as unknown as R;
}

/**
 * Keeps, of each record, what a profile reads: spans of its span names with its span attribute
 * keys, log records of its event names (the `event.name` attribute when a non-empty string, else
 * the record's event name) with its log attribute keys and no body, and of the Resource only
 * {@link RESOURCE_KEYS_READ}. Contexts, times, scope, status and exception events are kept as they
 * are. Without reads every record is kept whole (the same object).
 */
export class RecordFilter {
  private readonly _reads: WireProfileReads | undefined;
  private readonly _spanNames: ReadonlySet<string> | undefined;
  private readonly _spanKeys: readonly string[];
  private readonly _logEvents: ReadonlySet<string> | undefined;
  private readonly _logKeys: readonly string[];

  /** @param reads - the profile's reads; `undefined` keeps every record whole */
  constructor(reads: WireProfileReads | undefined) {
    this._reads = reads;
    this._spanNames = reads?.spanNames === undefined ? undefined : new Set(reads.spanNames);
    this._spanKeys = [...new Set([...(reads?.spanAttributes ?? []), SESSION_ID_KEY])];
    this._logEvents = reads?.logEventNames === undefined ? undefined : new Set(reads.logEventNames);
    this._logKeys = [...new Set([...(reads?.logAttributes ?? []), SESSION_ID_KEY])];
  }

  /** Whether every record is kept whole (no reads). */
  get whole(): boolean {
    return this._reads === undefined;
  }

  /** The span as far as the profile reads it (a new record), or `undefined` when it reads none of it. */
  span(s: RecordedSpan): RecordedSpan | undefined {
    if (this._reads === undefined) return s;
    if (this._spanNames !== undefined && !this._spanNames.has(s.name)) return undefined;
    return new RecordedSpan({
      name: s.name,
      attributes: pickAttributes(s.attributes, this._spanKeys),
      spanContext: s.spanContext(),
      parentSpanContext: s.parentSpanContext,
      startTime: s.startTime,
      endTime: s.endTime,
      scopeName: s.scopeName,
      resource: projectResource(s.resource),
      status: s.status,
      events: s.events,
    });
  }

  /** The log record as far as the profile reads it (a new record), or `undefined` when it reads none of it. */
  log(l: RecordedLog): RecordedLog | undefined {
    if (this._reads === undefined) return l;
    if (this._logEvents !== undefined) {
      const nameAttr = l.attributes['event.name'];
      const name = typeof nameAttr === 'string' && nameAttr !== '' ? nameAttr : l.eventName;
      if (name === undefined || !this._logEvents.has(name)) return undefined;
    }
    return {
      hrTime: l.hrTime,
      attributes: pickAttributes(l.attributes, this._logKeys),
      spanContext: l.spanContext,
      eventName: l.eventName,
      instrumentationScope: l.instrumentationScope,
      body: undefined,
      resource: projectResource(l.resource),
    };
  }
}

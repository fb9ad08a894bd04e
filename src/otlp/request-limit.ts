/**
 * Bounds on the work of decoding one OTLP request: how many records (spans or log records) it may
 * hold, how many JSON values a JSON body may build, and a charge for what decoding builds, so a
 * small body that decodes into millions of objects (an expansion bomb) is refused before or while
 * it is built, never after.
 */

/** Default most records (spans, log records) one request may carry: 65,536 (OTLP exporters send 512 by default). */
export const DEFAULT_MAX_RECORDS_PER_REQUEST = 65_536;

/** JSON values a JSON body may hold per record of {@link DEFAULT_MAX_RECORDS_PER_REQUEST} (a span with 7 attributes holds about 16). */
export const JSON_VALUES_PER_RECORD = 16;

/**
 * Estimated bytes one decoded JSON value builds (an object or array header, a property slot, a
 * boxed number or a short string), charged before `JSON.parse` runs.
 */
export const JSON_VALUE_BYTES = 64;

/** Estimated bytes one decoded protobuf record builds before it is projected (the record, its context, its attribute map). */
export const DECODED_RECORD_BYTES = 640;

/** How a request's decoding is bounded. */
export interface RequestLimits {
  /** Most records (spans or log records, kept or not) the request may hold. */
  readonly maxRecords: number;
  /**
   * Charge `bytes` more of what decoding builds to the memory budget; `false` refuses the request
   * (the budget is reached). Called every {@link CHARGE_EVERY_RECORDS} records. @defaultValue none
   */
  readonly charge?: (bytes: number) => boolean;
}

/** Records between two charges while decoding protobuf. */
export const CHARGE_EVERY_RECORDS = 256;

/** Why decoding stopped: the request holds too much (`records`, `values`) or the budget is reached (`budget`). */
export class RequestLimitError extends Error {
  /** `records`: more records than allowed; `values`: a JSON body with more values than allowed; `budget`: the memory budget refused the charge. */
  readonly reason: 'records' | 'values' | 'budget';
  /** The limit passed (`records`, `values`). */
  readonly limit: number;
  constructor(reason: 'records' | 'values' | 'budget', limit = 0) {
    super(
      reason === 'records'
        ? `request holds more than ${limit} records; send fewer per request`
        : reason === 'values'
          ? `JSON body holds more than ${limit} values; send fewer records per request`
          : 'guard memory budget reached by requests in flight; retry later',
    );
    this.name = 'RequestLimitError';
    this.reason = reason;
    this.limit = limit;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const COMMA = 0x2c;

/**
 * Count the values a JSON text will build, without building them: every `{`, `[` and `,` outside
 * strings (each opens a container or separates one more value), plus one. Stops counting once past
 * `limit` and returns `limit + 1`. Linear in the bytes, no allocation: a 16 MiB body scans in tens
 * of milliseconds. Invalid JSON is left to `JSON.parse` to refuse.
 */
export function countJsonValues(text: Uint8Array, limit: number): number {
  let n = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as number;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY || c === COMMA) {
      if (++n > limit) return limit + 1;
    }
  }
  return n;
}

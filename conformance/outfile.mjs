// @ts-check
/**
 * Reading qwen-code's telemetry outfile: pretty-printed JSON objects (spans and log records, as
 * the OpenTelemetry JS SDK serialises them) concatenated in export order, which is not event
 * order (logs are batched every second, spans every five).
 */
import { readFileSync } from 'node:fs';

/** The in-tree guard's log event name (wire reference §2.2). */
export const GUARD_EVENT = 'qwen-code.repeated_tool_failure_guard';

/**
 * Splits concatenated JSON objects. Tolerates a truncated last object (a killed run).
 * @param {string} text
 * @returns {any[]}
 */
export function parseConcatenatedJson(text) {
  /** @type {any[]} */
  const out = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === '}') {
      depth--;
      if (depth === 0 && start >= 0) {
        try {
          out.push(JSON.parse(text.slice(start, i + 1)));
        } catch {
          // skip a malformed object
        }
        start = -1;
      }
    }
  }
  return out;
}

/**
 * @param {string} file
 * @returns {any[]}
 */
export function readOutfile(file) {
  return parseConcatenatedJson(readFileSync(file, 'utf8'));
}

/**
 * Nanoseconds since the epoch of a record: a log's `_hrTime`, a span's `endTime`.
 * @param {any} record
 * @returns {bigint}
 */
export function recordTime(record) {
  const hr = record?._hrTime ?? record?.endTime ?? record?._endTime ?? [0, 0];
  return BigInt(hr[0] ?? 0) * 1_000_000_000n + BigInt(hr[1] ?? 0);
}

/**
 * The log records with the given `event.name`, in timestamp order (file order breaks ties).
 * @param {any[]} records
 * @param {string} eventName
 * @returns {any[]}
 */
export function logEvents(records, eventName) {
  return records
    .map((r, index) => ({ r, index }))
    .filter(({ r }) => r?.attributes?.['event.name'] === eventName)
    .sort((a, b) => {
      const d = recordTime(a.r) - recordTime(b.r);
      return d < 0n ? -1 : d > 0n ? 1 : a.index - b.index;
    })
    .map(({ r }) => r);
}

/**
 * One in-tree guard decision, in the same shape as `replay --compare --format json` lines.
 * @typedef {object} FailureDecision
 * @property {string} promptId
 * @property {string} mode
 * @property {string} decision
 * @property {string} phaseBefore
 * @property {string} phaseAfter
 * @property {string} failureCountBucket
 * @property {string} batchCountBucket
 * @property {number} candidateOrdinal
 * @property {string} [resetReason]
 * @property {string} [executionErrorType]
 */

/**
 * The in-tree guard's `qwen-code.repeated_tool_failure_guard` records, in timestamp order.
 * @param {any[]} records
 * @returns {FailureDecision[]}
 */
export function inTreeGuardDecisions(records) {
  return logEvents(records, GUARD_EVENT).map((r) => {
    const a = r.attributes;
    /** @type {FailureDecision} */
    const d = {
      promptId: a.prompt_id,
      mode: a.mode,
      decision: a.decision,
      phaseBefore: a.phase_before,
      phaseAfter: a.phase_after,
      failureCountBucket: String(a.failure_count_bucket),
      batchCountBucket: String(a.batch_count_bucket),
      candidateOrdinal: Number(a.candidate_ordinal),
    };
    if (a.reset_reason !== undefined) d.resetReason = a.reset_reason;
    if (a.execution_error_type !== undefined) d.executionErrorType = a.execution_error_type;
    return d;
  });
}

/**
 * A compact one-line rendering, e.g. `tracked(1-2,1)#1`, `reset:success(5-7,3+)#1`: decision
 * (with the reset reason), failure and batch count buckets, candidate ordinal.
 * @param {Pick<FailureDecision, 'decision' | 'failureCountBucket' | 'batchCountBucket' | 'candidateOrdinal' | 'resetReason'>} d
 * @returns {string}
 */
export function formatDecision(d) {
  const reason = d.resetReason === undefined ? '' : `:${d.resetReason}`;
  return `${d.decision}${reason}(${d.failureCountBucket},${d.batchCountBucket})#${d.candidateOrdinal}`;
}

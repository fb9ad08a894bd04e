/**
 * Batch assembly: the calls of one open model tool batch, merged from span and log facts as they
 * arrive, and sealed into the reducer's {@link BatchReceipt}. No clock, no listeners, no prompt
 * state: the failure engine decides when a batch opens and closes, this module what it holds.
 */
import type { BatchReceipt, ExecutionStatus, TerminalStatus, ToolCallObservation, ToolType } from '../core/failure/types.js';
import type { CallFacts, CallUpdate } from './call-facts.js';
import { classifyExecutionErrorType } from './error-vocabulary.js';
import type { ExecutionErrorVocabulary } from './error-vocabulary.js';

/**
 * One call of the open batch. The facts are held compactly (one object of six fields a call,
 * whatever the number of facts): the strings the receipt needs as they are, every status and flag
 * as a small code in {@link CallRecord.bits}. A held batch can be held for every open prompt at
 * once, so its size is the guard's memory (bench P4a).
 */
export interface CallRecord {
  /** The call's id; `''` in a spare record (see {@link OpenBatch.calls}). */
  callId: string;
  /**
   * Span flags ({@link TOOL_OPEN}, {@link EXECUTION_OPEN}, {@link SETTLED}) and the coded facts
   * (terminal status, span and log execution status, tool type, provider duplicate): see the
   * `*_SHIFT` constants. A code of 0 is a fact not seen yet (first value kept).
   */
  bits: number;
  /** Policy tool name from `gen_ai.tool.name` on the tool or execution span. */
  toolName: string | undefined;
  /** Lookup name from the `tool_call` log's `function_name` (normally equal to `toolName`). */
  lookupName: string | undefined;
  /** Execution error type from the execution span, as written. */
  spanErrorType: string | undefined;
  /** Terminal error type from the `tool_call` log, as written. */
  logErrorType: string | undefined;
}

/** The call's tool span started and has not ended. */
const TOOL_OPEN = 1;
/** The call's execution span started and has not ended. */
const EXECUTION_OPEN = 2;
/** The call's terminal record (a `tool_call` log, or a batch-span child's end) arrived. */
const SETTLED = 4;

/** Terminal status: 0 unseen, 1..3 the values below, 4 another value (invalid: no terminal status). */
const TERMINAL_SHIFT = 3;
const TERMINAL_CODES: readonly (TerminalStatus | undefined)[] = [undefined, 'success', 'error', 'cancelled', undefined];
/** Execution status (span, then log): 0 unseen, 1..5 the values below, 6 another value (read as `unknown`). */
const SPAN_EXECUTION_SHIFT = 6;
const LOG_EXECUTION_SHIFT = 9;
const EXECUTION_CODES: readonly (ExecutionStatus | undefined)[] = [undefined, 'not_started', 'success', 'error', 'cancelled', 'unknown', 'unknown'];
const EXECUTION_ERROR = 3;
/** Tool type: 0 unseen, 1 native, 2 mcp. */
const TOOL_TYPE_SHIFT = 12;
const TOOL_TYPES: readonly (ToolType | undefined)[] = [undefined, 'native', 'mcp', undefined];
/** Provider duplicate: 0 unseen, 1 false, 2 true. */
const DUPLICATE_SHIFT = 14;
const THREE_BITS = 7;
const TWO_BITS = 3;

function terminalCode(v: string): number {
  return v === 'success' ? 1 : v === 'error' ? 2 : v === 'cancelled' ? 3 : 4;
}

function executionCode(v: string): number {
  switch (v) {
    case 'not_started':
      return 1;
    case 'success':
      return 2;
    case 'error':
      return 3;
    case 'cancelled':
      return 4;
    case 'unknown':
      return 5;
    default:
      return 6;
  }
}

/**
 * The batch being assembled for one prompt: the calls one model response asked for, until the
 * failure engine closes it and {@link sealBatch} turns it into a receipt. A closed batch can be
 * released ({@link releaseBatch}) and reopened for another batch ({@link reopenBatch}), its call
 * records with it: then a batch allocates nothing that outlives it (bench P6).
 */
export interface OpenBatch {
  /**
   * The batch's calls in arrival order: the first {@link OpenBatch.callCount} records; records after
   * them are spares, cleared, kept from an earlier batch for reuse. A short array (batches hold a few
   * calls; bounded by maxCallsPerBatch), replaced, not grown, while short: see {@link appendCall}.
   */
  calls: CallRecord[];
  /** How many of {@link OpenBatch.calls} are the batch's calls. */
  callCount: number;
  /**
   * {@link EXPLICIT_BATCH} and {@link OVERFLOWED}, read with {@link isExplicitBatch} and
   * {@link hasOverflowed} (one small integer, not two fields: a batch is held for every open prompt).
   */
  flags: number;
  /** The model response id of the batch's calls, when the wire writes one (headless qwen-code). */
  responseId: string | undefined;
  /** Time of the batch's latest record, in milliseconds since the epoch. */
  lastActivityMillis: number;
}

/** Opened by an explicit batch boundary (a batch span): only {@link FailureEngine.closeBatch} closes it. */
const EXPLICIT_BATCH = 1;
/** A call beyond `maxCallsPerBatch` was dropped: the receipt will be incomplete. */
const OVERFLOWED = 2;

const NO_CALLS: CallRecord[] = [];
/** Below this many calls a batch's array is copied to its exact length when it must grow. */
const EXACT_UP_TO = 16;
/**
 * A released batch of at most this many records is kept for reuse: most batches hold one to four
 * calls, and a reopened batch's unused spares (about 70 bytes each) stay within the 1 KiB a prompt
 * the byte estimate allows beyond its calls.
 */
const SPARE_UP_TO = 4;

/**
 * Append a call: a spare record of the batch when it has one, else a new one. V8 grows an empty
 * array's store to 17 slots on its first push (152 bytes for a batch of one or two calls); up to
 * {@link EXACT_UP_TO} records the array is copied at its exact length instead, which costs a short
 * copy per new record and nothing per held batch.
 */
function appendCall(open: OpenBatch, callId: string): CallRecord {
  const calls = open.calls;
  const n = open.callCount;
  open.callCount = n + 1;
  if (n < calls.length) {
    const spare = calls[n] as CallRecord;
    spare.callId = callId;
    return spare;
  }
  const call = newCall(callId);
  if (n >= EXACT_UP_TO) {
    calls.push(call);
    return call;
  }
  const next: CallRecord[] = new Array<CallRecord>(n + 1);
  for (let i = 0; i < n; i++) next[i] = calls[i] as CallRecord;
  next[n] = call;
  open.calls = next;
  return call;
}

function newCall(callId: string): CallRecord {
  return { callId, bits: 0, toolName: undefined, lookupName: undefined, spanErrorType: undefined, logErrorType: undefined };
}

/** Merge facts field by field; the first value seen for a field is kept. */
function assign(t: CallRecord, f: CallFacts | undefined): void {
  if (f === undefined) return;
  if (t.toolName === undefined) t.toolName = f.toolName;
  if (t.lookupName === undefined) t.lookupName = f.lookupName;
  if (t.spanErrorType === undefined) t.spanErrorType = f.spanErrorType;
  if (t.logErrorType === undefined) t.logErrorType = f.logErrorType;
  let bits = t.bits;
  if (f.terminalStatus !== undefined && ((bits >> TERMINAL_SHIFT) & THREE_BITS) === 0) bits |= terminalCode(f.terminalStatus) << TERMINAL_SHIFT;
  if (f.spanExecutionStatus !== undefined && ((bits >> SPAN_EXECUTION_SHIFT) & THREE_BITS) === 0) {
    bits |= executionCode(f.spanExecutionStatus) << SPAN_EXECUTION_SHIFT;
  }
  if (f.logExecutionStatus !== undefined && ((bits >> LOG_EXECUTION_SHIFT) & THREE_BITS) === 0) {
    bits |= executionCode(f.logExecutionStatus) << LOG_EXECUTION_SHIFT;
  }
  if (f.toolType !== undefined && ((bits >> TOOL_TYPE_SHIFT) & TWO_BITS) === 0) bits |= (f.toolType === 'mcp' ? 2 : 1) << TOOL_TYPE_SHIFT;
  if (f.providerDuplicate !== undefined && ((bits >> DUPLICATE_SHIFT) & TWO_BITS) === 0) bits |= (f.providerDuplicate ? 2 : 1) << DUPLICATE_SHIFT;
  t.bits = bits;
}

/** Whether some call of the batch has terminal status `cancelled`. */
export function hasCancelledCall(open: OpenBatch): boolean {
  const calls = open.calls;
  for (let i = 0; i < open.callCount; i++) if (TERMINAL_CODES[((calls[i] as CallRecord).bits >> TERMINAL_SHIFT) & THREE_BITS] === 'cancelled') return true;
  return false;
}

/**
 * Build one receipt entry from a call's gathered facts (wire reference §8 "Per-call inputs"). The
 * execution error type is mapped onto the profile's closed vocabulary (`error-vocabulary.ts`): a
 * value outside it becomes an in-memory `other#<digest>` key, free text stays unclassified.
 */
function observationOf(call: CallRecord, vocabulary?: ExecutionErrorVocabulary): ToolCallObservation {
  const bits = call.bits;
  const spanExecution = (bits >> SPAN_EXECUTION_SHIFT) & THREE_BITS;
  const logExecution = (bits >> LOG_EXECUTION_SHIFT) & THREE_BITS;
  // The execution span's status is preferred; a status outside the vocabulary reads `unknown`.
  const execution = EXECUTION_CODES[spanExecution !== 0 ? spanExecution : logExecution];
  let errorType: string | undefined;
  if (execution === 'error') {
    if (spanExecution === EXECUTION_ERROR && call.spanErrorType) errorType = call.spanErrorType;
    else if (logExecution === EXECUTION_ERROR && call.logErrorType) errorType = call.logErrorType;
    // Free text is never a classification; nothing raw reaches the diagnostic log.
    errorType = classifyExecutionErrorType(errorType, vocabulary);
  }
  return {
    callId: call.callId,
    policyToolName: call.toolName || call.lookupName || undefined,
    toolType: TOOL_TYPES[(bits >> TOOL_TYPE_SHIFT) & TWO_BITS],
    terminalStatus: TERMINAL_CODES[(bits >> TERMINAL_SHIFT) & THREE_BITS],
    executionStatus: execution,
    executionErrorType: errorType,
    providerDuplicate: ((bits >> DUPLICATE_SHIFT) & TWO_BITS) === 2,
  };
}

/** A new, empty open batch. `explicit`: opened by a batch span, closed only by its end. */
export function newOpenBatch(explicit: boolean, timeMillis: number): OpenBatch {
  return { calls: NO_CALLS, callCount: 0, flags: explicit ? EXPLICIT_BATCH : 0, responseId: undefined, lastActivityMillis: timeMillis };
}

/** Whether the batch was opened by an explicit boundary (a batch span): only its end closes it. */
export function isExplicitBatch(open: OpenBatch): boolean {
  return (open.flags & EXPLICIT_BATCH) !== 0;
}

/** Whether a call beyond `maxCallsPerBatch` was dropped: the receipt will be incomplete. */
export function hasOverflowed(open: OpenBatch): boolean {
  return (open.flags & OVERFLOWED) !== 0;
}

/**
 * Mark the batch as lacking calls the agent never recorded (a model response asked for calls and
 * none left a record): like an overflow, the receipt will be incomplete.
 */
export function markUnrecordedCalls(open: OpenBatch): void {
  open.flags |= OVERFLOWED;
}

/**
 * Make a released batch ({@link releaseBatch}) a new, empty open batch: what {@link newOpenBatch}
 * returns, with the released batch's records kept as spares.
 */
export function reopenBatch(open: OpenBatch, explicit: boolean, timeMillis: number): OpenBatch {
  open.flags = explicit ? EXPLICIT_BATCH : 0;
  open.lastActivityMillis = timeMillis;
  return open;
}

/**
 * Release a closed batch for reuse: its calls become cleared spares (no string of the batch stays
 * reachable) and its response id is reset; {@link reopenBatch} sets its flags and time. Returns
 * whether the batch is worth keeping: `false`, clearing nothing, for a batch of more than
 * {@link SPARE_UP_TO} records, which is left to the garbage collector (the prompt that reopens a
 * batch holds its spares, uncounted by the byte estimate).
 */
export function releaseBatch(open: OpenBatch): boolean {
  const calls = open.calls;
  if (calls.length > SPARE_UP_TO) return false;
  for (let i = 0; i < open.callCount; i++) {
    const c = calls[i] as CallRecord;
    c.callId = '';
    c.bits = 0;
    c.toolName = undefined;
    c.lookupName = undefined;
    c.spanErrorType = undefined;
    c.logErrorType = undefined;
  }
  open.callCount = 0;
  open.responseId = undefined;
  return true;
}

/** The call with `callId` in the batch (searched from the newest: batches hold a few calls). */
export function findCall(open: OpenBatch, callId: string): CallRecord | undefined {
  const calls = open.calls;
  for (let i = open.callCount - 1; i >= 0; i--) if ((calls[i] as CallRecord).callId === callId) return calls[i];
  return undefined;
}

/** Whether the call has its terminal record. */
export function isCallSettled(call: CallRecord): boolean {
  return (call.bits & SETTLED) !== 0;
}

/** Whether a span of some call of the batch started and has not ended (a call still running). */
export function hasRunningCall(open: OpenBatch | undefined): boolean {
  if (open === undefined) return false;
  const calls = open.calls;
  for (let i = 0; i < open.callCount; i++) if (((calls[i] as CallRecord).bits & (TOOL_OPEN | EXECUTION_OPEN)) !== 0) return true;
  return false;
}

/** Whether some call of the batch has its terminal record. */
export function hasSettledCall(open: OpenBatch): boolean {
  const calls = open.calls;
  for (let i = 0; i < open.callCount; i++) if (((calls[i] as CallRecord).bits & SETTLED) !== 0) return true;
  return false;
}

/** Whether some call of the batch has no terminal record yet. */
export function hasUnsettledCall(open: OpenBatch): boolean {
  const calls = open.calls;
  for (let i = 0; i < open.callCount; i++) if (((calls[i] as CallRecord).bits & SETTLED) === 0) return true;
  return false;
}

/**
 * Merge one update into the batch: the call is added (unless the batch already holds
 * `maxCalls` calls: then the batch overflows and will be reduced `incomplete`), its open/closed
 * span flags and settled flag updated, its facts merged (first value of each field kept).
 */
export function mergeCallUpdate(open: OpenBatch, update: CallUpdate, maxCalls: number): void {
  let call = findCall(open, update.callId);
  if (call === undefined) {
    if (open.callCount >= maxCalls) {
      if (update.responseId !== undefined && open.responseId === undefined) open.responseId = update.responseId;
      open.lastActivityMillis = Math.max(open.lastActivityMillis, update.timeMillis);
      open.flags |= OVERFLOWED;
      return;
    }
    call = appendCall(open, update.callId);
  }
  mergeIntoCall(open, call, update);
}

/**
 * Merge one update into a call the batch already holds (found with {@link findCall}): what
 * {@link mergeCallUpdate} does once it has the call.
 */
export function mergeIntoCall(open: OpenBatch, call: CallRecord, update: CallUpdate): void {
  if (update.responseId !== undefined && open.responseId === undefined) open.responseId = update.responseId;
  open.lastActivityMillis = Math.max(open.lastActivityMillis, update.timeMillis);
  assign(call, update.facts);
  let bits = call.bits;
  if (update.opened === 'tool') bits |= TOOL_OPEN;
  else if (update.opened === 'execution') bits |= EXECUTION_OPEN;
  if (update.closed === 'tool') bits &= ~TOOL_OPEN;
  else if (update.closed === 'execution') bits &= ~EXECUTION_OPEN;
  if (update.settled === true) bits |= SETTLED;
  call.bits = bits;
}

/**
 * Seal the batch into a receipt. The receipt is complete when no call was dropped (no overflow)
 * and every call is settled: its terminal record (a `tool_call` log, a batch-span child's end) is
 * in. A span of a settled call that has not ended yet does not make the batch incomplete: span
 * ends and the next batch's start can sort either way across timestamp precisions
 * (OpenTelemetry JS records starts to the millisecond and ends to the nanosecond,
 * opentelemetry-js#5804), and the terminal record already carries the outcome.
 */
export function sealBatch(open: OpenBatch, vocabulary?: ExecutionErrorVocabulary): BatchReceipt {
  const observations: ToolCallObservation[] = [];
  let complete = !hasOverflowed(open);
  const calls = open.calls;
  for (let i = 0; i < open.callCount; i++) {
    const call = calls[i] as CallRecord;
    if ((call.bits & SETTLED) === 0) complete = false;
    observations.push(observationOf(call, vocabulary));
  }
  return { complete, observations };
}

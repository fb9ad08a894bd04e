/**
 * Batch assembly: the calls of one open model tool batch, merged from span and log facts as they
 * arrive, and sealed into the reducer's {@link BatchReceipt}. No clock, no listeners, no prompt
 * state: the failure engine decides when a batch opens and closes, this module what it holds.
 */
import type { BatchReceipt, ExecutionStatus, TerminalStatus, ToolCallObservation } from '../core/failure/types.js';
import type { CallFacts, CallUpdate } from './call-facts.js';
import { classifyExecutionErrorType } from './error-vocabulary.js';
import type { ExecutionErrorVocabulary } from './error-vocabulary.js';

/** One call of the open batch: its facts, flattened in (one object a call). */
export interface CallRecord extends CallFacts {
  readonly callId: string;
  /** {@link TOOL_OPEN} | {@link EXECUTION_OPEN} | {@link SETTLED}: one small integer, not three fields. */
  flags: number;
}

/** The call's tool span started and has not ended. */
const TOOL_OPEN = 1;
/** The call's execution span started and has not ended. */
const EXECUTION_OPEN = 2;
/** The call's terminal record (a `tool_call` log, or a batch-span child's end) arrived. */
const SETTLED = 4;

/**
 * The batch being assembled for one prompt: the calls one model response asked for, until the
 * failure engine closes it and {@link sealBatch} turns it into a receipt.
 */
export interface OpenBatch {
  /** The batch's calls in arrival order (a short array: batches hold a few calls; bounded by maxCallsPerBatch). */
  readonly calls: CallRecord[];
  /** Opened by an explicit batch boundary (a batch span): only {@link FailureEngine.closeBatch} closes it. */
  readonly explicit: boolean;
  /** The model response id of the batch's calls, when the wire writes one (headless qwen-code). */
  responseId: string | undefined;
  /** A call beyond `maxCallsPerBatch` was dropped: the receipt will be incomplete. */
  overflow: boolean;
  /** Time of the batch's latest record, in milliseconds since the epoch. */
  lastActivityMillis: number;
}

const TERMINAL: ReadonlySet<string> = new Set<TerminalStatus>(['success', 'error', 'cancelled']);
const EXECUTION: ReadonlySet<string> = new Set<ExecutionStatus>(['not_started', 'success', 'error', 'cancelled', 'unknown']);

function newCall(callId: string): CallRecord {
  return {
    callId,
    flags: 0,
    toolName: undefined,
    lookupName: undefined,
    toolType: undefined,
    terminalStatus: undefined,
    spanExecutionStatus: undefined,
    spanErrorType: undefined,
    logExecutionStatus: undefined,
    logErrorType: undefined,
    providerDuplicate: undefined,
  };
}

/** Merge facts field by field; the first value seen for a field is kept. */
function assign(t: CallFacts, f: CallFacts | undefined): void {
  if (f === undefined) return;
  if (t.toolName === undefined) t.toolName = f.toolName;
  if (t.lookupName === undefined) t.lookupName = f.lookupName;
  if (t.toolType === undefined) t.toolType = f.toolType;
  if (t.terminalStatus === undefined) t.terminalStatus = f.terminalStatus;
  if (t.spanExecutionStatus === undefined) t.spanExecutionStatus = f.spanExecutionStatus;
  if (t.spanErrorType === undefined) t.spanErrorType = f.spanErrorType;
  if (t.logExecutionStatus === undefined) t.logExecutionStatus = f.logExecutionStatus;
  if (t.logErrorType === undefined) t.logErrorType = f.logErrorType;
  if (t.providerDuplicate === undefined) t.providerDuplicate = f.providerDuplicate;
}

/**
 * Build one receipt entry from gathered facts (wire reference §8 "Per-call inputs"). The execution
 * error type is mapped onto the profile's closed vocabulary (`error-vocabulary.ts`): a value
 * outside it becomes an in-memory `other#<digest>` key, free text stays unclassified.
 */
export function observationFromFacts(callId: string, f: CallFacts, vocabulary?: ExecutionErrorVocabulary): ToolCallObservation {
  const terminal = f.terminalStatus !== undefined && TERMINAL.has(f.terminalStatus) ? (f.terminalStatus as TerminalStatus) : undefined;
  const rawExecution = f.spanExecutionStatus ?? f.logExecutionStatus;
  const execution = rawExecution === undefined ? undefined : EXECUTION.has(rawExecution) ? (rawExecution as ExecutionStatus) : 'unknown';
  let errorType: string | undefined;
  if (execution === 'error') {
    if (f.spanExecutionStatus === 'error' && f.spanErrorType) errorType = f.spanErrorType;
    else if (f.logExecutionStatus === 'error' && f.logErrorType) errorType = f.logErrorType;
    // Free text is never a classification; nothing raw reaches the diagnostic log.
    errorType = classifyExecutionErrorType(errorType, vocabulary);
  }
  return {
    callId,
    policyToolName: f.toolName || f.lookupName || undefined,
    toolType: f.toolType,
    terminalStatus: terminal,
    executionStatus: execution,
    executionErrorType: errorType,
    providerDuplicate: f.providerDuplicate === true,
  };
}

/** A new, empty open batch. `explicit`: opened by a batch span, closed only by its end. */
export function newOpenBatch(explicit: boolean, timeMillis: number): OpenBatch {
  return { calls: [], explicit, responseId: undefined, overflow: false, lastActivityMillis: timeMillis };
}

/** The call with `callId` in the batch (searched from the newest: batches hold a few calls). */
export function findCall(open: OpenBatch, callId: string): CallRecord | undefined {
  const calls = open.calls;
  for (let i = calls.length - 1; i >= 0; i--) if ((calls[i] as CallRecord).callId === callId) return calls[i];
  return undefined;
}

/** Whether a span of some call of the batch started and has not ended (a call still running). */
export function hasRunningCall(open: OpenBatch | undefined): boolean {
  if (open === undefined) return false;
  for (const c of open.calls) if ((c.flags & (TOOL_OPEN | EXECUTION_OPEN)) !== 0) return true;
  return false;
}

/** Whether some call of the batch has its terminal record. */
export function hasSettledCall(open: OpenBatch): boolean {
  for (const c of open.calls) if ((c.flags & SETTLED) !== 0) return true;
  return false;
}

/** Whether some call of the batch has no terminal record yet. */
export function hasUnsettledCall(open: OpenBatch): boolean {
  for (const c of open.calls) if ((c.flags & SETTLED) === 0) return true;
  return false;
}

/**
 * Merge one update into the batch: the call is added (unless the batch already holds
 * `maxCalls` calls: then the batch overflows and will be reduced `incomplete`), its open/closed
 * span flags and settled flag updated, its facts merged (first value of each field kept).
 */
export function mergeCallUpdate(open: OpenBatch, update: CallUpdate, maxCalls: number): void {
  if (update.responseId !== undefined && open.responseId === undefined) open.responseId = update.responseId;
  open.lastActivityMillis = Math.max(open.lastActivityMillis, update.timeMillis);
  let call = findCall(open, update.callId);
  if (call === undefined) {
    if (open.calls.length >= maxCalls) {
      open.overflow = true;
      return;
    }
    call = newCall(update.callId);
    open.calls.push(call);
  }
  if (update.opened === 'tool') call.flags |= TOOL_OPEN;
  else if (update.opened === 'execution') call.flags |= EXECUTION_OPEN;
  if (update.closed === 'tool') call.flags &= ~TOOL_OPEN;
  else if (update.closed === 'execution') call.flags &= ~EXECUTION_OPEN;
  if (update.settled === true) call.flags |= SETTLED;
  assign(call, update.facts);
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
  let complete = !open.overflow;
  for (const call of open.calls) {
    if ((call.flags & SETTLED) === 0) complete = false;
    observations.push(observationFromFacts(call.callId, call, vocabulary));
  }
  return { complete, observations };
}

/**
 * `repeated-tool-failure-guard/core`: the two pure reducers, their types, texts, configs and the
 * low-cardinality buckets. Imports nothing from OpenTelemetry, Node or the engines.
 *
 * @packageDocumentation
 */

// The repeated tool-failure guard
export { RESET_REASONS } from './core/failure/types.js';
export {
  DEFAULT_FAILURE_POLICY,
  initialFailureState,
  reduceFailure,
  REPEATED_TOOL_FAILURE_BATCH_THRESHOLD,
  REPEATED_TOOL_FAILURE_REMINDER,
  REPEATED_TOOL_FAILURE_STOP_MESSAGE,
  REPEATED_TOOL_FAILURE_STOP_TEXT,
  REPEATED_TOOL_FAILURE_THRESHOLD,
} from './core/failure/reducer.js';
export type { FailurePolicy } from './core/failure/reducer.js';
export type {
  BatchReceipt,
  BatchSettledEvent,
  CandidateFields,
  CandidateOutcome,
  DrainSignals,
  ExecutionStatus,
  FailureAction,
  FailureDecision,
  FailureEvent,
  FailureIdleState,
  FailureKey,
  FailureLatchedState,
  FailureNoAction,
  FailureOutcome,
  FailurePhase,
  FailureRemindAction,
  FailureState,
  FailureStopAction,
  FailureTrackingState,
  FailureWarnedState,
  GuardMode,
  ResetReason,
  TerminalStatus,
  ToolCallObservation,
  ToolType,
} from './core/failure/types.js';

// The identical tool-call repetition breaker
export { initialRepetitionState, reduceRepetition, REPETITION_ABORT_TEXT, REPETITION_WARNING_TEXT } from './core/repetition/reducer.js';
export { DEFAULT_REPETITION_CONFIG, resolveRepetitionConfig } from './core/repetition/config.js';
export type { RepetitionConfig, RepetitionMode, ResolvedRepetitionConfig } from './core/repetition/config.js';
export type {
  RepetitionAction,
  RepetitionBlockAction,
  RepetitionCounters,
  RepetitionDecision,
  RepetitionEvent,
  RepetitionIdleState,
  RepetitionInjectedMessageEvent,
  RepetitionLatchedState,
  RepetitionNoAction,
  RepetitionOutcome,
  RepetitionPhase,
  RepetitionState,
  RepetitionToolCallEvent,
  RepetitionTrackingState,
  RepetitionUserPromptEvent,
  RepetitionWarnAction,
  RepetitionWarnedState,
} from './core/repetition/types.js';

// Mode vocabulary and buckets
export { DEFAULT_GUARD_MODE, parseGuardMode } from './core/mode.js';
export { batchCountBucket, failureCountBucket } from './core/buckets.js';
export type { BatchCountBucket, FailureCountBucket } from './core/buckets.js';

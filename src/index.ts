/**
 * repeated-tool-failure-guard: OpenTelemetry span and log-record processors that detect AI coding
 * agents looping on the same failing tool call, and a control hook that lets the agent's Session
 * act on it.
 */

// Guard factory, processors and control hook
export { createRepeatedToolFailureGuard, RepeatedToolFailureGuard } from './repeated-tool-failure-guard.js';
export { RepeatedToolFailureGuardSpanProcessor } from './repeated-tool-failure-guard-span-processor.js';
export { RepeatedToolFailureGuardLogRecordProcessor } from './repeated-tool-failure-guard-log-record-processor.js';
export { GuardControl } from './guard-control.js';
export type { AfterToolBatchInput, BeforeToolCallInput } from './guard-control.js';
export { DEFAULT_OPTIONS, resolveOptions } from './config.js';
export type { RepeatedToolFailureGuardOptions, ResolvedGuardOptions, WireProfileName } from './config.js';

// Pure reducer
export {
  initialGuardState,
  reduceGuard,
  REPEATED_TOOL_FAILURE_BATCH_THRESHOLD,
  REPEATED_TOOL_FAILURE_REMINDER,
  REPEATED_TOOL_FAILURE_STOP_MESSAGE,
  REPEATED_TOOL_FAILURE_STOP_TEXT,
  REPEATED_TOOL_FAILURE_THRESHOLD,
} from './reducer.js';
export type {
  BatchReceipt,
  BatchSettledEvent,
  CandidateFields,
  CandidateOutcome,
  DrainSignals,
  ExecutionStatus,
  FailureKey,
  GuardAction,
  GuardDecision,
  GuardEvent,
  GuardMode,
  GuardOutcome,
  GuardPhase,
  GuardRemindAction,
  GuardState,
  GuardStopAction,
  IdleGuardState,
  LatchedGuardState,
  NoGuardAction,
  ResetReason,
  TerminalStatus,
  ToolCallObservation,
  ToolType,
  TrackingGuardState,
  WarnedGuardState,
} from './types.js';
export { batchCountBucket, failureCountBucket } from './buckets.js';
export type { BatchCountBucket, FailureCountBucket } from './buckets.js';

// Identical tool-call repetition breaker (second guard)
export {
  DEFAULT_REPETITION_CONFIG,
  INITIAL_REPETITION_STATE,
  reduceRepetition,
  REPETITION_ABORT_TEXT,
  REPETITION_WARNING_TEXT,
  resolveRepetitionConfig,
} from './repetition-reducer.js';
export type {
  RepetitionAction,
  RepetitionBlockAction,
  RepetitionConfig,
  RepetitionCounters,
  RepetitionDecision,
  RepetitionEvent,
  RepetitionIdleState,
  RepetitionInjectedMessageEvent,
  RepetitionLatchedState,
  RepetitionMode,
  RepetitionNoAction,
  RepetitionOutcome,
  RepetitionPhase,
  RepetitionState,
  RepetitionToolCallEvent,
  RepetitionTrackingState,
  RepetitionUserPromptEvent,
  RepetitionWarnAction,
  RepetitionWarnedState,
  ResolvedRepetitionConfig,
} from './repetition-reducer.js';
export { argumentsFingerprint, argumentsTextFingerprint, canonicalJson, parseArgumentsJson } from './canonical-json.js';
export type { ArgumentsParseFailed, ArgumentsParseOk, ArgumentsParseResult } from './canonical-json.js';
export { isReportedRepetitionDecision, RepetitionEngine, sessionKeyOf } from './repetition-engine.js';
export type { RepetitionCall, RepetitionDecisionRecord, RepetitionEngineSettings, RepetitionListener } from './repetition-engine.js';

// Mode resolution
export { DEFAULT_GUARD_MODE, GUARD_MODE_ENV_VAR, parseGuardMode, resolveGuardMode, resolveGuardModeFromEnv } from './mode.js';
export type { ModeSource, ModeSourceValue, ResolvedGuardMode, ResolveGuardModeInput } from './mode.js';

// Engine and wire profiles
export { GuardEngine } from './guard-engine.js';
export type { BatchDecision, EngineListener, EngineSettings, EvictionReason } from './guard-engine.js';
export { GuardTelemetry, decisionLogAttributes, decisionMetricAttributes, repetitionMetricAttributes } from './guard-telemetry.js';
export type { GuardTelemetryOptions } from './guard-telemetry.js';
export { QwenCodeProfile } from './profiles/qwen-code-profile.js';
export { BatchSpanProfile, DEFAULT_BATCH_SPAN_ATTRIBUTES } from './profiles/batch-span-profile.js';
export type { BatchSpanAttributeMapping, BatchSpanProfileOptions } from './profiles/batch-span-profile.js';
export type { LogRecordView, SpanView, WireProfile, WireProfileFactory } from './wire-profile.js';
export {
  DEFAULT_NAMESPACE,
  EVENT_LOOP_DETECTED,
  GUARD_EVENT_SUFFIX,
  GUARD_EVICTION_METRIC_SUFFIX,
  GUARD_METRIC_SUFFIX,
  INSTRUMENTATION_SCOPE_NAME,
  LOOP_TYPE_CONSECUTIVE_IDENTICAL_TOOL_CALLS,
  LOOP_TYPE_REPEATED_TOOL_EXECUTION_FAILURE,
  REPETITION_EVENT_SUFFIX,
  REPETITION_METRIC_SUFFIX,
  RUM_EXCLUDE_SUFFIX,
} from './semconv.js';
export type { GuardRoute } from './semconv.js';

// Out of process: replay and serve
export { parseTelemetryText, TelemetryParseError } from './replay/telemetry-file.js';
export { decodeOtlpProtobuf, otlpRequestToRecords } from './replay/otlp.js';
export type { OtlpSignal } from './replay/otlp.js';
export { emptyRecordBatch, RecordedSpan } from './replay/records.js';
export type { RecordBatch, RecordedLog } from './replay/records.js';
export { replayRecords } from './replay/replay.js';
export type { EmittedGuardRecord, ReplayOptions, ReplayResult } from './replay/replay.js';
export { compareWithInTree } from './replay/compare.js';
export type { BatchComparison, ComparedDecision, ComparisonResult } from './replay/compare.js';
export { auditInvariants, inputIdentifiers, sensitiveInputStrings } from './replay/audit.js';
export type { InputIdentifiers, InvariantResult } from './replay/audit.js';
export { inTreeGuardEvents } from './replay/in-tree.js';
export type { InTreeGuardEvent } from './replay/in-tree.js';
export { startGuardServer } from './serve/guard-server.js';
export type { GuardServer, GuardServerOptions } from './serve/guard-server.js';

/**
 * repeated-tool-failure-guard: OpenTelemetry span and log-record processors that detect AI coding
 * agents looping on the same failing tool call, and a control hook that lets the agent's Session
 * act on it.
 *
 * This root entry loads only the in-process guard (and `@opentelemetry/api` and `core`; on the
 * OpenTelemetry JS 2.x line, where `api` has no logs API, `api-logs` when the guard first logs).
 * The pure reducers are at `repeated-tool-failure-guard/core`; replay and serve at
 * `repeated-tool-failure-guard/replay` and `repeated-tool-failure-guard/serve`.
 *
 * @packageDocumentation
 */

// The guard: factory, processors, control hook
export { createRepeatedToolFailureGuard, RepeatedToolFailureGuard } from './otel/repeated-tool-failure-guard.js';
export { RepeatedToolFailureGuardSpanProcessor } from './otel/repeated-tool-failure-guard-span-processor.js';
export { RepeatedToolFailureGuardLogRecordProcessor } from './otel/repeated-tool-failure-guard-log-record-processor.js';
export type { GuardLogger, GuardLoggerProvider, GuardLogRecord } from './otel/global-logs.js';
export type { TelemetrySink } from './otel/telemetry-sink.js';
export { GuardControl } from './otel/guard-control.js';
export type { AfterToolBatchInput, BeforeToolCallInput } from './otel/guard-control.js';

// Options
export { DEFAULT_OPTIONS, resolveOptions } from './otel/config.js';
export type { RepeatedToolFailureGuardOptions, ResolvedGuardOptions } from './otel/config.js';
export type { WireProfileName } from './profiles/registry.js';
export { ProducerRecognizer } from './profiles/router/producer-recognizer.js';
export type { ProducerRecognizerOptions } from './profiles/router/producer-recognizer.js';
export { genAiPromptId } from './profiles/genai/genai-profile.js';
export { GENAI_ERROR_TYPES } from './profiles/genai/error-types.js';
export type { GenAiErrorType } from './profiles/genai/error-types.js';
export { DEFAULT_GUARD_MODE, GUARD_MODE_NEUTRAL_ENV_VAR, parseGuardMode } from './core/mode.js';
export { GUARD_MODE_ENV_VAR } from './profiles/qwen-code/mode-sources.js';

// Decisions (what listeners and the control hook hand out)
export type { BatchDecision, EvictionReason, FailureEngineListener } from './engine/failure-types.js';
export type { RepetitionDecisionRecord, RepetitionListener } from './engine/repetition-engine.js';
export type { GuardRoute } from './engine/call-facts.js';
export type {
  BatchReceipt,
  DrainSignals,
  FailureAction,
  FailureDecision,
  FailureNoAction,
  FailureOutcome,
  FailurePhase,
  FailureRemindAction,
  FailureStopAction,
  GuardMode,
  ResetReason,
  ToolCallObservation,
} from './core/failure/types.js';
export type { RepetitionAction, RepetitionDecision } from './core/repetition/types.js';
export {
  REPEATED_TOOL_FAILURE_REMINDER,
  REPEATED_TOOL_FAILURE_STOP_TEXT,
} from './core/failure/reducer.js';
export { REPETITION_ABORT_TEXT, REPETITION_WARNING_TEXT } from './core/repetition/reducer.js';

// Custom wire profiles (experimental)
export type { LogRecordView, SpanView, WireProfile, WireProfileFactory } from './profiles/wire-profile.js';
export type { FailureEngine } from './engine/failure-engine.js';
export type { RepetitionEngine } from './engine/repetition-engine.js';

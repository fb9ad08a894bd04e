/**
 * Public types of the repeated tool-failure guard's pure reducer.
 *
 * Every name and literal value here comes from the design
 * (`design-acp-repeated-tool-call-protection.txt`, "State machine", "Identity and
 * eligibility") or from the qwen-code 0.24.4 in-tree guard
 * (`packages/cli/src/acp-integration/session/repeated-tool-failure-guard.ts`), which use the
 * same vocabulary. None of these types can hold tool arguments, results, paths or raw error text.
 */

/**
 * Operator-controlled guard mode.
 *
 * - `off`: no reducer, no telemetry.
 * - `shadow`: compute decisions (`would_warn`, `would_stop`) but never act. The default.
 * - `warn`: hand the fixed reminder to the Session, never stop.
 * - `enforce`: remind, then stop on the next matching batch.
 *
 * Source: design "Scope and enforcement modes"; env `QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD`.
 */
export type GuardMode = 'off' | 'shadow' | 'warn' | 'enforce';

/** Guard phase. Source: design "State machine"; in-tree `RepeatedToolFailureGuardPhase`. */
export type FailurePhase = 'idle' | 'tracking' | 'warned' | 'latched';

/**
 * Terminal status of one tool call (qwen-code `status`, authoritative since PR #8176).
 */
export type TerminalStatus = 'success' | 'error' | 'cancelled';

/**
 * Execution status frozen at the `invocation.execute()` boundary (qwen-code `execution_status`,
 * PR #8180). `unknown` is what telemetry writes when the producer did not set it.
 */
export type ExecutionStatus = 'not_started' | 'success' | 'error' | 'cancelled' | 'unknown';

/** Tool type as qwen-code labels it (`tool_type`). */
export type ToolType = 'native' | 'mcp';

/**
 * One entry of a settled batch receipt. It deliberately has no field for arguments, results,
 * paths or error text.
 *
 * Source: design "Batch and concurrency rules"; in-tree `RepeatedToolFailureObservation`.
 */
export interface ToolCallObservation {
  /** Provider (or synthesized) call id; used only to join telemetry, never emitted by the guard. */
  readonly callId: string;
  /** Resolved registry tool name (`tool.name`), e.g. `read_file` or a server-qualified MCP name. */
  readonly policyToolName: string | undefined;
  /** `native` or `mcp`; `undefined` when the producer did not say. */
  readonly toolType: ToolType | undefined;
  /** Terminal status; `undefined` when the outcome is incomplete (the call is then ineligible). */
  readonly terminalStatus: TerminalStatus | undefined;
  /** Frozen execution status; `undefined` is treated like `unknown`. */
  readonly executionStatus: ExecutionStatus | undefined;
  /**
   * ToolErrorType frozen at execution settle (e.g. `file_not_found`, `shell_execute_error`);
   * `undefined` or `unknown` make an error ineligible.
   */
  readonly executionErrorType: string | undefined;
  /** True for a provider call-id replay handled by the deduper: neither counted nor reset. */
  readonly providerDuplicate: boolean;
}

/**
 * The narrow receipt of one fully settled model tool batch.
 *
 * Source: design "Batch and concurrency rules"; in-tree `RepeatedToolFailureBatch`.
 */
export interface BatchReceipt {
  /** True only when every admitted call of the batch has a settled record. */
  readonly complete: boolean;
  /** Outcomes in original model call order (the reduction is order-independent). */
  readonly observations: readonly ToolCallObservation[];
}

/**
 * The result of the Session's mid-turn input drain, taken after the batch settled.
 * Source: design step 2 of "State machine"; wire reference §5.5.
 */
export interface DrainSignals {
  /** New external input was drained during the batch. */
  readonly hasExternalInput: boolean;
  /** A full prompt is queued behind the current one. */
  readonly hasQueuedPrompt: boolean;
  /** The drain answered with a well-formed response in time. */
  readonly inputReliable: boolean;
}

/** The failure key: `(policyToolName, executionErrorType)`. Private to the guard; never emitted as a label. */
export interface FailureKey {
  readonly policyToolName: string;
  readonly executionErrorType: string;
}

/** No candidate. `nextCandidateOrdinal` starts at `1`. */
export interface FailureIdleState {
  readonly phase: 'idle';
  readonly nextCandidateOrdinal: number;
  /** Once true, `enforce` acts as `warn` for the rest of the prompt. */
  readonly enforcementDisabled: boolean;
}

/** Fields shared by every state that holds a candidate streak. */
export interface CandidateFields {
  readonly key: FailureKey;
  /** Eligible failures of the key counted in this streak. */
  readonly failureCount: number;
  /** Complete batches that contributed to this streak. */
  readonly batchCount: number;
  /** Prompt-local ordinal of this candidate (1, 2, ...). */
  readonly candidateOrdinal: number;
  readonly nextCandidateOrdinal: number;
  readonly enforcementDisabled: boolean;
}

/** A candidate streak below the threshold. */
export interface FailureTrackingState extends CandidateFields {
  readonly phase: 'tracking';
}

/** The threshold was reached and the reminder was requested (or would have been, in shadow). */
export interface FailureWarnedState extends CandidateFields {
  readonly phase: 'warned';
}

/** A matching batch followed the reminder. Terminal for the prompt: no further decisions. */
export interface FailureLatchedState extends CandidateFields {
  readonly phase: 'latched';
}

/** Per-prompt guard state, discriminated by `phase`. */
export type FailureState = FailureIdleState | FailureTrackingState | FailureWarnedState | FailureLatchedState;

/**
 * Reducer decision. `none` is never emitted as telemetry.
 * Source: in-tree telemetry `decision` values, plus `none`.
 */
export type FailureDecision =
  | 'none'
  | 'reset'
  | 'tracked'
  | 'would_warn'
  | 'warned'
  | 'would_stop'
  | 'stopped';

/** Reset reason values, exactly as the in-tree guard writes `reset_reason`. */
export type ResetReason = (typeof RESET_REASONS)[number];

/** Every {@link ResetReason}, in the design's order: the closed vocabulary of `reset_reason`. */
export const RESET_REASONS = [
  'success',
  'cancelled',
  'not_started',
  'post_execution_failure',
  'unknown',
  'mixed',
  'incomplete',
  'external_input',
  'queued_prompt',
  'unreliable_input',
  'contract_violation',
] as const;

/** Nothing for the Session to do. */
export interface FailureNoAction {
  readonly type: 'none';
}

/** Append {@link FailureRemindAction.text} (the fixed reminder) to the next model-bound message. */
export interface FailureRemindAction {
  readonly type: 'remind';
  readonly text: string;
}

/** Stop automatic continuation; add {@link FailureStopAction.text} to history; open no model stream. */
export interface FailureStopAction {
  readonly type: 'stop';
  readonly text: string;
}

/** What the Session must do after a batch. Only `warn` and `enforce` ever return a non-`none` action. */
export type FailureAction = FailureNoAction | FailureRemindAction | FailureStopAction;

/**
 * The batch's single eligible candidate, reported on non-reset decisions. Terminal and execution
 * status are always `error` for an eligible failure.
 */
export interface CandidateOutcome {
  readonly terminalStatus: 'error';
  readonly executionStatus: 'error';
  /** Kept for the diagnostic log only, never as a metric label. */
  readonly executionErrorType: string;
  readonly toolType: ToolType | undefined;
}

/**
 * What one reduction produced. For a reset, the counts and ordinal are those of the candidate it
 * ended (zeros when it left idle), as the in-tree guard reports them.
 */
export interface FailureOutcome {
  readonly decision: FailureDecision;
  readonly phaseBefore: FailurePhase;
  readonly phaseAfter: FailurePhase;
  /** Present only when `decision` is `reset`. */
  readonly resetReason: ResetReason | undefined;
  readonly failureCount: number;
  readonly batchCount: number;
  readonly candidateOrdinal: number;
  /** Present on `tracked`, `would_warn`, `warned`, `would_stop`, `stopped`. */
  readonly candidate: CandidateOutcome | undefined;
  /** True when this batch switched enforcement off for the rest of the prompt. */
  readonly enforcementNewlyDisabled: boolean;
  readonly action: FailureAction;
}

/** The reducer's only event: a model tool batch settled and the mid-turn drain answered. */
export interface BatchSettledEvent extends DrainSignals {
  readonly type: 'batch_settled';
  readonly mode: GuardMode;
  readonly batch: BatchReceipt;
}

/** Events the reducer accepts. */
export type FailureEvent = BatchSettledEvent;

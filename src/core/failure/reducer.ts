/**
 * The pure per-prompt repeated tool-failure reducer.
 *
 * Imports nothing from OpenTelemetry, reads no clock and no randomness. The steps follow the
 * design (`design-acp-repeated-tool-call-protection.txt`, "State machine") and, where the design
 * leaves detail open, the qwen-code 0.24.4 in-tree reducer (wire reference §5.4).
 *
 * Longer than the ~350-line norm on purpose: the design's twelve steps in their order, one small
 * function a step, so the file reads as the specification does.
 */
import type {
  BatchSettledEvent,
  CandidateFields,
  CandidateOutcome,
  FailureKey,
  FailureAction,
  FailureDecision,
  FailureEvent,
  GuardMode,
  FailureOutcome,
  FailureState,
  FailureIdleState,
  ResetReason,
  ToolCallObservation,
  ToolType,
} from './types.js';

/** Eligible failures needed before the reminder. Source: design; in-tree `REPEATED_TOOL_FAILURE_THRESHOLD`. */
export const REPEATED_TOOL_FAILURE_THRESHOLD = 8;

/** Complete batches needed before the reminder. Source: design; in-tree `REPEATED_TOOL_FAILURE_BATCH_THRESHOLD`. */
export const REPEATED_TOOL_FAILURE_BATCH_THRESHOLD = 2;

/**
 * Parameters of the failure reducer. The runtime always runs with {@link DEFAULT_FAILURE_POLICY},
 * the design's fixed thresholds ("a code constant in the first release, not a user setting"); other
 * values exist for the shadow report's policy what-if and as a documented opt-in for experiments.
 */
export interface FailurePolicy {
  /** Eligible failures of one key before the reminder. Minimum: `1`. @defaultValue 8 */
  readonly failureThreshold: number;
  /** Complete batches of one key before the reminder. Minimum: `1`. @defaultValue 2 */
  readonly batchThreshold: number;
  /**
   * Policy tool names whose success in a batch resets a candidate of another tool (the success
   * changed files, so the failing call's preconditions may have changed); the batch's own failures
   * then start a new streak. Empty by default: in the design, successes of other tools neither
   * advance nor reset the candidate.
   * @defaultValue empty
   */
  readonly resetOnSuccessOf: ReadonlySet<string>;
  /**
   * What a failure with no type is ({@link isUntypedFailure}, of a known tool): `ineligible`, the design's rule (it is
   * `unknown`: resets and disables enforcement for the prompt), or `key-by-tool`, an explicit
   * opt-in for producers that never type their failures (OpenAI Agents under OpenLLMetry or
   * OpenInference): keyed `(tool, untyped)` ({@link UNTYPED_EXECUTION_ERROR_TYPE}), so every failure
   * of a tool is one streak.
   * @defaultValue `'ineligible'`
   */
  readonly untypedFailures?: UntypedFailurePolicy;
}

/** How the reducer treats a failure with no type (see {@link FailurePolicy.untypedFailures}). */
export type UntypedFailurePolicy = 'ineligible' | 'key-by-tool';

/** The policies of {@link UntypedFailurePolicy}, the default first. */
export const UNTYPED_FAILURE_POLICIES: readonly UntypedFailurePolicy[] = Object.freeze(['ineligible', 'key-by-tool']);

/** The execution error type of the key an untyped failure gets under `untypedFailures: 'key-by-tool'`. */
export const UNTYPED_EXECUTION_ERROR_TYPE = 'untyped';

/**
 * Whether an observation is a failure with no type: terminal `error`, execution status `error` (it
 * ran and failed), and no execution error type or `unknown` (a producer that records no class:
 * OpenAI Agents' "Error running tool", Codex's bare `success: "false"`, a GenAI span with error
 * status and neither `error.type` nor an exception type). Such a failure is `unknown` by the design
 * (never counted: it resets the candidate and disables enforcement for the prompt); the summary and
 * report count them, and `untypedFailures: 'key-by-tool'` keys them `(tool, untyped)`.
 */
export function isUntypedFailure(o: ToolCallObservation): boolean {
  return (
    !o.providerDuplicate &&
    o.terminalStatus === 'error' &&
    o.executionStatus === 'error' &&
    (o.executionErrorType === undefined || o.executionErrorType === '' || o.executionErrorType === 'unknown')
  );
}

/** The design's policy: 8 failures, 2 batches, no other-tool reset. */
export const DEFAULT_FAILURE_POLICY: FailurePolicy = Object.freeze({
  failureThreshold: REPEATED_TOOL_FAILURE_THRESHOLD,
  batchThreshold: REPEATED_TOOL_FAILURE_BATCH_THRESHOLD,
  resetOnSuccessOf: new Set<string>() as ReadonlySet<string>,
  untypedFailures: 'ineligible',
});

/**
 * The fixed corrective reminder, byte for byte as the design and the in-tree guard give it.
 * It contains no tool data.
 */
export const REPEATED_TOOL_FAILURE_REMINDER =
  'System: the same tool execution has failed repeatedly for the same classified reason. Do not repeat the same approach. Inspect the returned result, change the approach or required preconditions, or explain the blocker.';

/**
 * The in-tree stop message constant (without the `System: ` prefix that the Session adds when it
 * writes it to history).
 */
export const REPEATED_TOOL_FAILURE_STOP_MESSAGE =
  'Automatic continuation stopped because the same tool execution failure continued after a corrective reminder. New user input is required to continue.';

/** The stopped message as the design gives it and as it enters history: `System: ` + the stop message. */
export const REPEATED_TOOL_FAILURE_STOP_TEXT = `System: ${REPEATED_TOOL_FAILURE_STOP_MESSAGE}`;

/**
 * Ineligible outcomes in reset precedence order. Source: wire reference §5.4 step 8.
 */
const INELIGIBLE_PRECEDENCE = [
  'contract_violation',
  'cancelled',
  'unknown',
  'not_started',
  'post_execution_failure',
] as const satisfies readonly ResetReason[];

type IneligibleReason = (typeof INELIGIBLE_PRECEDENCE)[number];

const NO_ACTION: FailureAction = { type: 'none' };
const REMIND_ACTION: FailureAction = { type: 'remind', text: REPEATED_TOOL_FAILURE_REMINDER };
const STOP_ACTION: FailureAction = { type: 'stop', text: REPEATED_TOOL_FAILURE_STOP_TEXT };

/** Shared by every fresh prompt (states are immutable). */
const INITIAL_STATE: FailureIdleState = Object.freeze({ phase: 'idle', nextCandidateOrdinal: 1, enforcementDisabled: false });

/**
 * The state a fresh prompt starts in.
 *
 * @returns `{ phase: 'idle', nextCandidateOrdinal: 1, enforcementDisabled: false }`
 */
export function initialFailureState(): FailureIdleState {
  return INITIAL_STATE;
}


function candidateFields(state: FailureState): Pick<CandidateFields, 'failureCount' | 'batchCount' | 'candidateOrdinal'> {
  switch (state.phase) {
    case 'idle':
      return { failureCount: 0, batchCount: 0, candidateOrdinal: 0 };
    case 'tracking':
    case 'warned':
    case 'latched':
      return state;
    default: {
      const _exhaustive: never = state;
      return _exhaustive;
    }
  }
}

function none(state: FailureState): readonly [FailureState, FailureOutcome] {
  return [
    state,
    {
      decision: 'none',
      phaseBefore: state.phase,
      phaseAfter: state.phase,
      resetReason: undefined,
      ...candidateFields(state),
      candidate: undefined,
      enforcementNewlyDisabled: false,
      action: NO_ACTION,
    },
  ];
}

/**
 * Reset to idle. A reset that leaves idle unchanged is reported as `none` (the in-tree guard does
 * not emit it), except when this batch newly disables enforcement.
 */
function reset(
  state: FailureState,
  reason: ResetReason,
  disableEnforcement: boolean,
): readonly [FailureState, FailureOutcome] {
  const enforcementDisabled = state.enforcementDisabled || disableEnforcement;
  const newlyDisabled = enforcementDisabled !== state.enforcementDisabled;
  if (state.phase === 'idle' && !newlyDisabled) {
    return none(state);
  }
  const next: FailureIdleState = {
    phase: 'idle',
    nextCandidateOrdinal: state.nextCandidateOrdinal,
    enforcementDisabled,
  };
  return [
    next,
    {
      decision: 'reset',
      phaseBefore: state.phase,
      phaseAfter: 'idle',
      resetReason: reason,
      ...candidateFields(state),
      candidate: undefined,
      enforcementNewlyDisabled: newlyDisabled,
      action: NO_ACTION,
    },
  ];
}

function sameKey(a: FailureKey | undefined, b: FailureKey): boolean {
  return a !== undefined && a.policyToolName === b.policyToolName && a.executionErrorType === b.executionErrorType;
}

/** `enforce` acts as `warn` once enforcement is disabled for the prompt. */
function effectiveMode(mode: GuardMode, enforcementDisabled: boolean): GuardMode {
  return mode === 'enforce' && enforcementDisabled ? 'warn' : mode;
}

interface EligibleFailure {
  readonly key: FailureKey;
  readonly toolType: ToolType | undefined;
}

interface Classification {
  readonly eligible: readonly EligibleFailure[];
  readonly succeededTools: ReadonlySet<string>;
  readonly ineligible: ReadonlySet<IneligibleReason>;
  readonly disableEnforcement: boolean;
}

/** Classify every non-duplicate observation (wire reference §5.4 step 7; design "Identity and eligibility"). */
function classify(event: BatchSettledEvent, policy: FailurePolicy): Classification {
  const keyUntyped = policy.untypedFailures === 'key-by-tool';
  const eligible: EligibleFailure[] = [];
  const succeededTools = new Set<string>();
  const ineligible = new Set<IneligibleReason>();
  let disableEnforcement = false;
  const markUnknown = (): void => {
    ineligible.add('unknown');
    disableEnforcement = true;
  };
  for (const o of event.batch.observations) {
    if (o.providerDuplicate) continue;
    if (keyUntyped && o.policyToolName && isUntypedFailure(o)) {
      // Opt-in: a failure with no type, keyed by its tool alone.
      eligible.push({ key: { policyToolName: o.policyToolName, executionErrorType: UNTYPED_EXECUTION_ERROR_TYPE }, toolType: o.toolType });
      continue;
    }
    const { terminalStatus, executionStatus } = o;
    if (terminalStatus === 'cancelled') {
      ineligible.add('cancelled');
      continue;
    }
    if (executionStatus === undefined || executionStatus === 'unknown') {
      markUnknown();
      continue;
    }
    if (terminalStatus === 'success') {
      if (executionStatus === 'error' || executionStatus === 'cancelled') {
        ineligible.add('contract_violation');
        disableEnforcement = true;
      } else if (o.policyToolName) {
        succeededTools.add(o.policyToolName);
      } else {
        markUnknown();
      }
      continue;
    }
    if (terminalStatus !== 'error') {
      // Incomplete outcome fields (no terminal status) are never eligible (design).
      markUnknown();
      continue;
    }
    switch (executionStatus) {
      case 'cancelled':
        ineligible.add('cancelled');
        break;
      case 'not_started':
        ineligible.add('not_started');
        break;
      case 'success':
        ineligible.add('post_execution_failure');
        break;
      case 'error':
        if (!o.policyToolName || !o.executionErrorType || o.executionErrorType === 'unknown') {
          markUnknown();
        } else {
          eligible.push({
            key: { policyToolName: o.policyToolName, executionErrorType: o.executionErrorType },
            toolType: o.toolType,
          });
        }
        break;
      default: {
        const _exhaustive: never = executionStatus;
        return _exhaustive;
      }
    }
  }
  return { eligible, succeededTools, ineligible, disableEnforcement };
}

function currentKey(state: FailureState): FailureKey | undefined {
  return state.phase === 'idle' ? undefined : state.key;
}

function advanced(
  before: FailureState,
  next: FailureState & CandidateFields,
  decision: FailureDecision,
  failure: EligibleFailure,
  action: FailureAction,
): readonly [FailureState, FailureOutcome] {
  const candidate: CandidateOutcome = {
    terminalStatus: 'error',
    executionStatus: 'error',
    executionErrorType: failure.key.executionErrorType,
    toolType: failure.toolType,
  };
  return [
    next,
    {
      decision,
      phaseBefore: before.phase,
      phaseAfter: next.phase,
      resetReason: undefined,
      failureCount: next.failureCount,
      batchCount: next.batchCount,
      candidateOrdinal: next.candidateOrdinal,
      candidate,
      enforcementNewlyDisabled: false,
      action,
    },
  ];
}

function reduceBatch(state: FailureState, event: BatchSettledEvent, policy: FailurePolicy): readonly [FailureState, FailureOutcome] {
  if (event.mode === 'off' || state.phase === 'latched') return none(state);
  if (!event.inputReliable) return reset(state, 'unreliable_input', true);
  if (event.hasExternalInput) return reset(state, 'external_input', false);
  if (event.hasQueuedPrompt) return reset(state, 'queued_prompt', false);
  if (!event.batch.complete) return reset(state, 'incomplete', false);
  if (!event.batch.observations.some((o) => !o.providerDuplicate)) return none(state);

  const { eligible, succeededTools, ineligible, disableEnforcement } = classify(event, policy);
  const firstIneligible = INELIGIBLE_PRECEDENCE.find((r) => ineligible.has(r));
  if (firstIneligible !== undefined) return reset(state, firstIneligible, disableEnforcement);

  // A success of a tool clears every failure classification of that tool in the same batch.
  const failures = eligible.filter((f) => !succeededTools.has(f.key.policyToolName));
  const first = failures[0];
  const tracked = currentKey(state);
  // Opt-in (policy what-if): a success of a listed tool resets another tool's candidate.
  const changedFiles =
    tracked !== undefined && policy.resetOnSuccessOf.size > 0 && [...succeededTools].some((t) => t !== tracked.policyToolName && policy.resetOnSuccessOf.has(t));
  if (first === undefined) {
    if (tracked !== undefined && (succeededTools.has(tracked.policyToolName) || changedFiles)) return reset(state, 'success', false);
    if (succeededTools.size > 0) return none(state);
    return reset(state, 'unknown', true);
  }
  if (failures.some((f) => !sameKey(f.key, first.key))) return reset(state, 'mixed', false);

  if (state.phase === 'idle' || changedFiles || !sameKey(tracked, first.key)) {
    return advanced(
      state,
      {
        phase: 'tracking',
        key: first.key,
        failureCount: failures.length,
        batchCount: 1,
        candidateOrdinal: state.nextCandidateOrdinal,
        nextCandidateOrdinal: state.nextCandidateOrdinal + 1,
        enforcementDisabled: state.enforcementDisabled,
      },
      'tracked',
      first,
      NO_ACTION,
    );
  }

  const mode = effectiveMode(event.mode, state.enforcementDisabled);
  const counts = {
    failureCount: state.failureCount + failures.length,
    batchCount: state.batchCount + 1,
  };
  if (state.phase === 'warned') {
    const stop = mode === 'enforce';
    return advanced(
      state,
      { ...state, ...counts, phase: 'latched' },
      stop ? 'stopped' : 'would_stop',
      first,
      stop ? STOP_ACTION : NO_ACTION,
    );
  }
  if (
    counts.failureCount < policy.failureThreshold ||
    counts.batchCount < policy.batchThreshold
  ) {
    return advanced(state, { ...state, ...counts, phase: 'tracking' }, 'tracked', first, NO_ACTION);
  }
  const remind = mode !== 'shadow';
  return advanced(
    state,
    { ...state, ...counts, phase: 'warned' },
    remind ? 'warned' : 'would_warn',
    first,
    remind ? REMIND_ACTION : NO_ACTION,
  );
}

/**
 * Reduce one settled batch.
 *
 * Pure: the same state and event always give the same result, and an event that changes nothing
 * returns the same state object with decision `none`.
 *
 * @param state - the prompt's current state ({@link initialFailureState} for a new prompt)
 * @param event - the settled batch receipt, the mode and the drain signals
 * @param policy - thresholds and opt-in variants; the runtime always passes the default, the design's
 *   (see {@link FailurePolicy}); other values are for the shadow report's what-if
 * @returns `[nextState, outcome]`; the shell turns the outcome into telemetry and the control action
 *
 * @example
 * ```ts
 * let state: FailureState = initialFailureState();
 * const [next, outcome] = reduceFailure(state, {
 *   type: 'batch_settled', mode: 'shadow', hasExternalInput: false, hasQueuedPrompt: false,
 *   inputReliable: true, batch: { complete: true, observations },
 * });
 * ```
 */
export function reduceFailure(
  state: FailureState,
  event: FailureEvent,
  policy: FailurePolicy = DEFAULT_FAILURE_POLICY,
): readonly [FailureState, FailureOutcome] {
  switch (event.type) {
    case 'batch_settled':
      return reduceBatch(state, event, policy);
    default: {
      const _exhaustive: never = event.type;
      return _exhaustive;
    }
  }
}

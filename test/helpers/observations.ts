import type {
  BatchSettledEvent,
  ExecutionStatus,
  GuardMode,
  FailureState,
  TerminalStatus,
  ToolCallObservation,
} from '../../src/core/failure/types.js';

let seq = 0;

/** An observation; defaults to an eligible `read_file` / `file_not_found` failure. */
export function obs(over: Partial<ToolCallObservation> = {}): ToolCallObservation {
  seq += 1;
  return {
    callId: `call_${seq}`,
    policyToolName: 'read_file',
    toolType: 'native',
    terminalStatus: 'error',
    executionStatus: 'error',
    executionErrorType: 'file_not_found',
    providerDuplicate: false,
    ...over,
  };
}

export function fail(tool = 'read_file', type = 'file_not_found'): ToolCallObservation {
  return obs({ policyToolName: tool, executionErrorType: type });
}

export function ok(tool = 'read_file'): ToolCallObservation {
  return obs({ policyToolName: tool, terminalStatus: 'success', executionStatus: 'success', executionErrorType: undefined });
}

export function outcome(terminal: TerminalStatus | undefined, execution: ExecutionStatus | undefined, type?: string): ToolCallObservation {
  return obs({ terminalStatus: terminal, executionStatus: execution, executionErrorType: type });
}

export function times<T>(n: number, f: () => T): T[] {
  return Array.from({ length: n }, f);
}

export function batch(
  observations: readonly ToolCallObservation[],
  over: Partial<Omit<BatchSettledEvent, 'type' | 'batch'>> & { complete?: boolean } = {},
): BatchSettledEvent {
  const { complete = true, ...rest } = over;
  return {
    type: 'batch_settled',
    mode: 'enforce' satisfies GuardMode,
    hasExternalInput: false,
    hasQueuedPrompt: false,
    inputReliable: true,
    ...rest,
    batch: { complete, observations },
  };
}

/** A tracking state for `read_file` / `file_not_found`. */
export function trackingState(failureCount: number, batchCount: number, over: Partial<FailureState> = {}): FailureState {
  return {
    phase: 'tracking',
    key: { policyToolName: 'read_file', executionErrorType: 'file_not_found' },
    failureCount,
    batchCount,
    candidateOrdinal: 1,
    nextCandidateOrdinal: 2,
    enforcementDisabled: false,
    ...over,
  } as FailureState;
}

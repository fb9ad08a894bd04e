/**
 * Batch assembly as a table: call updates (in arrival order) → the sealed receipt. Expected values
 * follow the design ("Batch and concurrency rules": a receipt is complete only when every admitted
 * call settled; eligibility reads the frozen execution outcome, preferring the execution span) and
 * wire reference §8 "Per-call inputs".
 */
import { describe, expect, it } from 'vitest';
import { hasRunningCall, mergeCallUpdate, newOpenBatch, sealBatch } from '../../src/engine/batch-assembler.js';
import type { CallUpdate } from '../../src/engine/call-facts.js';
import type { BatchReceipt, ToolCallObservation } from '../../src/core/failure/types.js';

type Step = Omit<CallUpdate, 'promptId' | 'timeMillis'>;

const failedRead = (callId: string): Step[] => [
  { callId, opened: 'tool', facts: { toolName: 'read_file', toolType: 'native' } },
  { callId, opened: 'execution' },
  { callId, closed: 'execution', facts: { spanExecutionStatus: 'error', spanErrorType: 'file_not_found' } },
  { callId, closed: 'tool' },
  { callId, settled: true, facts: { terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'file_not_found', lookupName: 'read_file' } },
];

const obs = (callId: string, o: Partial<ToolCallObservation> = {}): ToolCallObservation => ({
  callId,
  policyToolName: 'read_file',
  toolType: 'native',
  terminalStatus: 'error',
  executionStatus: 'error',
  executionErrorType: 'file_not_found',
  providerDuplicate: false,
  ...o,
});

const cases: { desc: string; steps: Step[]; maxCalls?: number; receipt: BatchReceipt; running?: boolean }[] = [
  { desc: 'one failed call, spans then log', steps: failedRead('c1'), receipt: { complete: true, observations: [obs('c1')] } },
  {
    desc: 'the log first, then the spans (arrival order does not matter)',
    steps: [...failedRead('c1')].reverse().map((s) => (s.opened ? { ...s, opened: undefined } : s)),
    receipt: { complete: true, observations: [obs('c1')] },
  },
  {
    desc: 'logs only: a settled call with no span',
    steps: [{ callId: 'c1', settled: true, facts: { lookupName: 'run_shell_command', terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'shell_execute_error' } }],
    receipt: { complete: true, observations: [obs('c1', { policyToolName: 'run_shell_command', toolType: undefined, executionErrorType: 'shell_execute_error' })] },
  },
  {
    desc: 'a call with no terminal record is not settled: incomplete',
    steps: failedRead('c1').slice(0, 4),
    receipt: { complete: false, observations: [obs('c1', { terminalStatus: undefined })] },
  },
  {
    desc: 'a settled call whose tool span end has not arrived: complete (its terminal record is in), still running',
    steps: [...failedRead('c1').slice(0, 3), failedRead('c1')[4] as Step],
    receipt: { complete: true, observations: [obs('c1')] },
    running: true,
  },
  {
    desc: 'a tool span end whose start was never seen leaves no call running',
    steps: [{ callId: 'c1', closed: 'tool', facts: { toolName: 'read_file', toolType: 'native' } }, ...failedRead('c1').slice(1, 3), failedRead('c1')[4] as Step],
    receipt: { complete: true, observations: [obs('c1')] },
  },
  {
    desc: 'parallel calls keep model call order',
    steps: [...failedRead('a'), ...failedRead('b')],
    receipt: { complete: true, observations: [obs('a'), obs('b')] },
  },
  {
    desc: 'more calls than maxCalls: the batch overflows and is incomplete',
    steps: [...failedRead('a'), ...failedRead('b')],
    maxCalls: 1,
    receipt: { complete: false, observations: [obs('a')] },
  },
  {
    desc: 'the execution span outcome wins over the log',
    steps: [
      { callId: 'c1', closed: 'execution', facts: { toolName: 'read_file', spanExecutionStatus: 'success' } },
      { callId: 'c1', settled: true, facts: { terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'file_not_found' } },
    ],
    receipt: { complete: true, observations: [obs('c1', { toolType: undefined, executionStatus: 'success', executionErrorType: undefined })] },
  },
  {
    desc: 'free text is never an error type',
    steps: [{ callId: 'c1', settled: true, facts: { toolName: 'read_file', terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'No such file: /etc/x' } }],
    receipt: { complete: true, observations: [obs('c1', { toolType: undefined, executionErrorType: undefined })] },
  },
  {
    desc: 'an unknown execution status is unknown',
    steps: [{ callId: 'c1', settled: true, facts: { toolName: 'read_file', terminalStatus: 'error', logExecutionStatus: 'exploded' } }],
    receipt: { complete: true, observations: [obs('c1', { toolType: undefined, executionStatus: 'unknown', executionErrorType: undefined })] },
  },
  {
    desc: 'the first value of a field is kept',
    steps: [
      { callId: 'c1', settled: true, facts: { toolName: 'read_file', terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'file_not_found' } },
      { callId: 'c1', facts: { toolName: 'write_file', terminalStatus: 'success' } },
    ],
    receipt: { complete: true, observations: [obs('c1', { toolType: undefined })] },
  },
  {
    desc: 'a terminal status outside success/error/cancelled is no terminal status, and stays the first value',
    steps: [
      { callId: 'c1', settled: true, facts: { toolName: 'read_file', terminalStatus: 'errored', logExecutionStatus: 'error', logErrorType: 'file_not_found' } },
      { callId: 'c1', facts: { terminalStatus: 'error' } },
    ],
    receipt: { complete: true, observations: [obs('c1', { toolType: undefined, terminalStatus: undefined })] },
  },
  {
    desc: 'an execution span status outside the vocabulary still wins over the log: unknown',
    steps: [
      { callId: 'c1', closed: 'execution', facts: { toolName: 'read_file', spanExecutionStatus: '', spanErrorType: 'file_not_found' } },
      { callId: 'c1', settled: true, facts: { terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'file_not_found' } },
    ],
    receipt: { complete: true, observations: [obs('c1', { toolType: undefined, executionStatus: 'unknown', executionErrorType: undefined })] },
  },
  {
    desc: 'the span error type is read only with an error span status, else the log one',
    steps: [
      { callId: 'c1', closed: 'execution', facts: { toolName: 'read_file', spanErrorType: 'permission_denied' } },
      { callId: 'c1', settled: true, facts: { terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'file_not_found' } },
    ],
    receipt: { complete: true, observations: [obs('c1', { toolType: undefined })] },
  },
  {
    desc: 'a cancelled, never started MCP call that the provider duplicated (first tool type and duplicate flag kept)',
    steps: [
      { callId: 'c1', opened: 'tool', facts: { toolName: 'mcp__fs__read', toolType: 'mcp', providerDuplicate: true } },
      { callId: 'c1', closed: 'tool', facts: { toolType: 'native', providerDuplicate: false } },
      { callId: 'c1', settled: true, facts: { terminalStatus: 'cancelled', logExecutionStatus: 'not_started' } },
    ],
    receipt: {
      complete: true,
      observations: [obs('c1', { policyToolName: 'mcp__fs__read', toolType: 'mcp', terminalStatus: 'cancelled', executionStatus: 'not_started', executionErrorType: undefined, providerDuplicate: true })],
    },
  },
  {
    desc: 'twenty parallel calls keep model call order (the call list grows past its exact-length copies)',
    steps: Array.from({ length: 20 }, (_, i) => failedRead(`c${i}`)).flat(),
    receipt: { complete: true, observations: Array.from({ length: 20 }, (_, i) => obs(`c${i}`)) },
  },
];

describe('batch assembly: call updates → receipt', () => {
  it.each(cases)('$desc', ({ steps, maxCalls, receipt, running }) => {
    const open = newOpenBatch(false, 0);
    steps.forEach((s, i) => mergeCallUpdate(open, { promptId: 'p', timeMillis: i, ...s }, maxCalls ?? 1024));
    expect(sealBatch(open)).toStrictEqual(receipt);
    expect(hasRunningCall(open)).toBe(running ?? false);
    expect(open.lastActivityMillis).toBe(steps.length - 1);
  });
});

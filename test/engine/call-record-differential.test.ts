/**
 * The open batch's compact call records (statuses and flags coded in one integer) against a plain
 * model that holds every fact in its own field: random streams of call updates (repeated and
 * conflicting facts, values outside the vocabularies, more than 16 calls, overflow past
 * `maxCallsPerBatch`) must seal to the same receipt. The model's rules are the documented ones:
 * each fact keeps its first value (`CallFacts`); a receipt is complete only when every admitted
 * call settled and no call was refused (design "Batch and concurrency rules"); wire reference §8
 * "Per-call inputs": the terminal status is one of success | error | cancelled or absent, the
 * execution status prefers the execution span's and reads `unknown` outside the vocabulary, the
 * error type is taken (from the source whose status is `error`) only for an `error` execution.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findCall, hasCancelledCall, hasOverflowed, hasRunningCall, hasSettledCall, hasUnsettledCall, isExplicitBatch, mergeCallUpdate, newOpenBatch, releaseBatch, reopenBatch, sealBatch } from '../../src/engine/batch-assembler.js';
import type { OpenBatch } from '../../src/engine/batch-assembler.js';
import type { CallFacts, CallUpdate } from '../../src/engine/call-facts.js';
import { classifyExecutionErrorType } from '../../src/engine/error-vocabulary.js';
import type { ExecutionErrorVocabulary } from '../../src/engine/error-vocabulary.js';
import type { BatchReceipt, ExecutionStatus, TerminalStatus, ToolCallObservation } from '../../src/core/failure/types.js';

const TERMINAL: readonly string[] = ['success', 'error', 'cancelled'];
const EXECUTION: readonly string[] = ['not_started', 'success', 'error', 'cancelled', 'unknown'];

interface ModelCall {
  readonly callId: string;
  facts: CallFacts;
  toolOpen: boolean;
  executionOpen: boolean;
  settled: boolean;
}

/** The batch as plain objects: one field a fact. */
class ModelBatch {
  readonly calls: ModelCall[] = [];
  overflow = false;

  update(u: CallUpdate, maxCalls: number): void {
    let call = this.calls.find((c) => c.callId === u.callId);
    if (call === undefined) {
      if (this.calls.length >= maxCalls) {
        this.overflow = true;
        return;
      }
      call = { callId: u.callId, facts: {}, toolOpen: false, executionOpen: false, settled: false };
      this.calls.push(call);
    }
    if (u.opened === 'tool') call.toolOpen = true;
    if (u.opened === 'execution') call.executionOpen = true;
    if (u.closed === 'tool') call.toolOpen = false;
    if (u.closed === 'execution') call.executionOpen = false;
    if (u.settled === true) call.settled = true;
    const merged: Record<string, unknown> = { ...call.facts };
    for (const [k, v] of Object.entries(u.facts ?? {})) if (merged[k] === undefined) merged[k] = v;
    call.facts = merged as CallFacts;
  }

  seal(vocabulary: ExecutionErrorVocabulary | undefined): BatchReceipt {
    const observations = this.calls.map((c): ToolCallObservation => {
      const f = c.facts;
      const raw = f.spanExecutionStatus ?? f.logExecutionStatus;
      const executionStatus = raw === undefined ? undefined : EXECUTION.includes(raw) ? (raw as ExecutionStatus) : 'unknown';
      let errorType: string | undefined;
      if (executionStatus === 'error') {
        const fromSpan = f.spanExecutionStatus === 'error' && f.spanErrorType ? f.spanErrorType : undefined;
        const fromLog = f.logExecutionStatus === 'error' && f.logErrorType ? f.logErrorType : undefined;
        errorType = classifyExecutionErrorType(fromSpan ?? fromLog, vocabulary);
      }
      return {
        callId: c.callId,
        policyToolName: f.toolName || f.lookupName || undefined,
        toolType: f.toolType,
        terminalStatus: f.terminalStatus !== undefined && TERMINAL.includes(f.terminalStatus) ? (f.terminalStatus as TerminalStatus) : undefined,
        executionStatus,
        executionErrorType: errorType,
        providerDuplicate: f.providerDuplicate === true,
      };
    });
    return { complete: !this.overflow && this.calls.every((c) => c.settled), observations };
  }
}

const STATUSES = ['success', 'error', 'cancelled', 'not_started', 'unknown', '', 'bogus', 'Error', 'constructor'];
const status = fc.option(fc.constantFrom(...STATUSES), { nil: undefined });
const text = (...xs: string[]) => fc.option(fc.constantFrom(...xs), { nil: undefined });
const facts: fc.Arbitrary<CallFacts | undefined> = fc.option(
  fc.record(
    {
      toolName: text('read_file', 'edit', '', 'mcp__srv__tool'),
      lookupName: text('read_file', 'run_shell_command', ''),
      toolType: fc.option(fc.constantFrom('native' as const, 'mcp' as const), { nil: undefined }),
      terminalStatus: status,
      spanExecutionStatus: status,
      spanErrorType: text('file_not_found', 'permission_denied', 'unknown', 'not an identifier!', ''),
      logExecutionStatus: status,
      logErrorType: text('file_not_found', 'invalid_tool_params', 'edit_no_occurrence_found', 'x y', ''),
      providerDuplicate: fc.option(fc.boolean(), { nil: undefined }),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

const update = (ids: number): fc.Arbitrary<CallUpdate> =>
  fc
    .record({
      callId: fc.nat(ids - 1).map((i) => `call-${i}`),
      opened: fc.option(fc.constantFrom('tool' as const, 'execution' as const), { nil: undefined }),
      closed: fc.option(fc.constantFrom('tool' as const, 'execution' as const), { nil: undefined }),
      settled: fc.option(fc.boolean(), { nil: undefined }),
      responseId: text('resp-1', 'resp-2'),
      facts,
      timeMillis: fc.integer({ min: 0, max: 1_000_000 }),
    })
    .map((u) => ({ promptId: 'p', ...u }));

const vocabulary = fc.constantFrom<ExecutionErrorVocabulary | undefined>(undefined, new Set(['file_not_found', 'invalid_tool_params']));

/**
 * A batch that held `earlier` (sealed, released, reopened): its records are reused, and must carry
 * nothing of the earlier batch into the next one.
 */
function reused(earlier: readonly CallUpdate[], maxCalls: number): OpenBatch {
  const batch = newOpenBatch(true, 7);
  for (const u of earlier) mergeCallUpdate(batch, { ...u, callId: `earlier-${u.callId}`, responseId: 'resp-earlier' }, maxCalls);
  sealBatch(batch);
  if (!releaseBatch(batch)) return newOpenBatch(false, 0);
  expect(batch.calls.slice(batch.callCount).every((c) => c.callId === '' && c.bits === 0 && c.toolName === undefined && c.logErrorType === undefined)).toBe(true);
  return reopenBatch(batch, false, 0);
}

function check(updates: readonly CallUpdate[], maxCalls: number, vocab: ExecutionErrorVocabulary | undefined, earlier: readonly CallUpdate[] = []): void {
  const open = earlier.length === 0 ? newOpenBatch(false, 0) : reused(earlier, maxCalls);
  const model = new ModelBatch();
  for (const u of updates) {
    mergeCallUpdate(open, u, maxCalls);
    model.update(u, maxCalls);
    // the predicates the failure engine reads between updates
    expect(hasRunningCall(open)).toBe(model.calls.some((c) => c.toolOpen || c.executionOpen));
    expect(hasSettledCall(open)).toBe(model.calls.some((c) => c.settled));
    expect(hasUnsettledCall(open)).toBe(model.calls.some((c) => !c.settled));
    expect(hasCancelledCall(open)).toBe(model.calls.some((c) => c.facts.terminalStatus === 'cancelled'));
    expect(findCall(open, u.callId)?.callId).toBe(model.calls.find((c) => c.callId === u.callId)?.callId);
  }
  expect(open.calls.slice(0, open.callCount).map((c) => c.callId)).toStrictEqual(model.calls.map((c) => c.callId));
  expect(isExplicitBatch(open)).toBe(false);
  expect(hasOverflowed(open)).toBe(model.overflow);
  expect(open.responseId).toBe(updates.find((u) => u.responseId !== undefined)?.responseId);
  expect(open.lastActivityMillis).toBe(Math.max(0, ...updates.map((u) => u.timeMillis)));
  expect(sealBatch(open, vocab)).toStrictEqual(model.seal(vocab));
}

describe('compact call records seal to the receipt of the plain per-fact model', () => {
  it('a few calls, many conflicting updates each', () => {
    fc.assert(
      fc.property(fc.array(update(4), { maxLength: 60 }), fc.constantFrom(1, 2, 64), vocabulary, (us, max, vocab) => check(us, max, vocab)),
      { numRuns: 500 },
    );
  });

  it('more than 16 calls (the array grows past its exact-length copies), and overflow past maxCallsPerBatch', () => {
    fc.assert(
      fc.property(fc.array(update(40), { minLength: 40, maxLength: 200 }), fc.constantFrom(15, 16, 17, 18, 33, 64), vocabulary, (us, max, vocab) => check(us, max, vocab)),
      { numRuns: 200 },
    );
  });

  it('in a batch released and reopened after another batch (its records reused as spares)', () => {
    fc.assert(
      fc.property(
        fc.array(update(20), { minLength: 1, maxLength: 80 }),
        fc.array(update(20), { maxLength: 80 }),
        fc.constantFrom(1, 2, 16, 17, 64),
        vocabulary,
        (earlier, us, max, vocab) => check(us, max, vocab, earlier),
      ),
      { numRuns: 400 },
    );
  });
});

/**
 * The engine reuses a closed batch, with its call records, for the next batch any prompt opens
 * (`releaseBatch` / `reopenBatch`). Reuse must be invisible: each case runs a prompt's batch after
 * another prompt's batch that leaves every field of the batch and its records set (a response id,
 * an overflow, an explicit boundary, facts of a failing call), and the later prompt's decisions must
 * be the ones it gets in an engine of its own. The expected receipts are also spelled out from the
 * design's batch rules: complete when every admitted call settled and none was refused.
 */
import { describe, expect, it } from 'vitest';
import { FailureEngine } from '../../src/engine/failure-engine.js';
import type { CallUpdate } from '../../src/engine/call-facts.js';
import type { BatchDecision } from '../../src/engine/failure-types.js';
import type { ToolCallObservation } from '../../src/core/failure/types.js';
import { engineSettings } from '../helpers/engine-settings.js';

type Step = (engine: FailureEngine, promptId: string) => void;

const MAX_CALLS = 2;

function engine(): { engine: FailureEngine; decisions: BatchDecision[] } {
  const e = new FailureEngine(engineSettings({ maxCallsPerBatch: MAX_CALLS }));
  const decisions: BatchDecision[] = [];
  e.addListener({ onDecision: (d) => decisions.push(d) });
  return { engine: e, decisions };
}

const update = (promptId: string, u: Omit<CallUpdate, 'promptId' | 'timeMillis'>): CallUpdate => ({ promptId, timeMillis: 1_700_000_000_000, ...u });
const failingCall =
  (callId: string, responseId?: string): Step =>
  (e, p) => {
    e.updateCall(update(p, { callId, opened: 'execution', facts: { toolName: 'edit' } }));
    e.updateCall(update(p, { callId, closed: 'execution', facts: { spanExecutionStatus: 'error', spanErrorType: 'edit_no_occurrence_found' } }));
    e.updateCall(
      update(p, {
        callId,
        settled: true,
        responseId,
        facts: { lookupName: 'edit', toolType: 'mcp', terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'edit_no_occurrence_found', providerDuplicate: false },
      }),
    );
  };
/** A call known only from its `tool_call` log: a success of `read_file`, native. */
const succeededCall =
  (callId: string, responseId?: string): Step =>
  (e, p) =>
    e.updateCall(update(p, { callId, settled: true, responseId, facts: { lookupName: 'read_file', toolType: 'native', terminalStatus: 'success', logExecutionStatus: 'success' } }));
const request: Step = (e, p) => e.boundary(p);

const READ_OK = (callId: string): ToolCallObservation => ({
  callId,
  policyToolName: 'read_file',
  toolType: 'native',
  terminalStatus: 'success',
  executionStatus: 'success',
  executionErrorType: undefined,
  providerDuplicate: false,
});

interface Case {
  readonly name: string;
  /** Prompt A's steps: its batch closes before prompt B's opens, and is reused by it. */
  readonly before: readonly Step[];
  /** Prompt B's steps. */
  readonly steps: readonly Step[];
  /** B's receipts, batch by batch. */
  readonly receipts: readonly { complete: boolean; observations: ToolCallObservation[] }[];
}

const CASES: readonly Case[] = [
  {
    name: 'after a failing call with every fact set, a call known only from its log',
    before: [request, failingCall('a1'), request],
    steps: [request, succeededCall('b1'), request],
    receipts: [{ complete: true, observations: [READ_OK('b1')] }],
  },
  {
    name: "after a batch of response id r1, a batch whose calls carry r2 stays one batch",
    before: [request, failingCall('a1', 'r1'), request],
    steps: [request, succeededCall('b1', 'r2'), succeededCall('b2', 'r2'), request],
    receipts: [{ complete: true, observations: [READ_OK('b1'), READ_OK('b2')] }],
  },
  {
    name: 'after a batch that overflowed (a call beyond maxCallsPerBatch), a batch within it is complete',
    before: [request, failingCall('a1'), failingCall('a2'), failingCall('a3'), request],
    steps: [request, succeededCall('b1'), request],
    receipts: [{ complete: true, observations: [READ_OK('b1')] }],
  },
  {
    name: 'after an explicit batch (a batch span), a batch that the next model request closes',
    before: [(e, p) => e.openBatch(p, 1_700_000_000_000), failingCall('a1'), (e, p) => e.closeBatch(p)],
    steps: [request, succeededCall('b1'), request, succeededCall('b2'), request],
    receipts: [
      { complete: true, observations: [READ_OK('b1')] },
      { complete: true, observations: [READ_OK('b2')] },
    ],
  },
  {
    name: 'after a batch of two calls, a batch of one (a spare record stays unused) and then of two',
    before: [request, failingCall('a1'), failingCall('a2'), request],
    steps: [request, succeededCall('b1'), request, succeededCall('b2'), succeededCall('b3'), request],
    receipts: [
      { complete: true, observations: [READ_OK('b1')] },
      { complete: true, observations: [READ_OK('b2'), READ_OK('b3')] },
    ],
  },
  {
    name: 'after a batch held open by a call without its log, sealed incomplete, a complete batch',
    before: [request, (e, p) => e.updateCall(update(p, { callId: 'a1', opened: 'tool', facts: { toolName: 'edit' } })), request, request],
    steps: [request, succeededCall('b1'), request],
    receipts: [{ complete: true, observations: [READ_OK('b1')] }],
  },
];

const receiptsOf = (ds: readonly BatchDecision[], promptId: string) => ds.filter((d) => d.promptId === promptId).map((d) => d.receipt);

describe('a reused batch carries nothing of the batch it held before', () => {
  it.each(CASES)('$name', ({ before, steps, receipts }) => {
    const alone = engine();
    for (const step of steps) step(alone.engine, 'B');
    alone.engine.endPrompt('B');

    const after = engine();
    for (const step of before) step(after.engine, 'A');
    // A's batch is closed (sealed and released) before B opens one.
    for (const step of steps) step(after.engine, 'B');
    after.engine.endPrompt('B');
    after.engine.endPrompt('A');

    expect(receiptsOf(alone.decisions, 'B')).toStrictEqual(receipts);
    expect(receiptsOf(after.decisions, 'B')).toStrictEqual(receipts);
    expect(after.decisions.filter((d) => d.promptId === 'B').map((d) => d.outcome)).toStrictEqual(alone.decisions.map((d) => d.outcome));
  });

  it('prompts that take turns share batches without mixing their calls', () => {
    const e = engine();
    const prompts = ['P1', 'P2', 'P3'];
    for (const p of prompts) request(e.engine, p);
    for (let round = 0; round < 4; round++) {
      for (const p of prompts) {
        const fail = p === 'P2';
        (fail ? failingCall : succeededCall)(`${p}-${round}`)(e.engine, p);
        request(e.engine, p);
      }
    }
    for (const p of prompts) e.engine.endPrompt(p);
    for (const p of prompts) {
      const ds = e.decisions.filter((d) => d.promptId === p);
      expect(ds.map((d) => d.receipt.observations.map((o) => o.callId))).toStrictEqual([0, 1, 2, 3].map((r) => [`${p}-${r}`]));
    }
    // P2 fails once a batch: 4 eligible failures of (edit, edit_no_occurrence_found) in 4 complete
    // batches, below the design's 8 — tracked, never warned; the others never leave idle.
    expect(e.decisions.filter((d) => d.promptId === 'P2').map((d) => d.outcome.decision)).toStrictEqual(['tracked', 'tracked', 'tracked', 'tracked']);
    expect(e.decisions.filter((d) => d.promptId !== 'P2').every((d) => d.outcome.decision === 'none')).toBe(true);
  });
});

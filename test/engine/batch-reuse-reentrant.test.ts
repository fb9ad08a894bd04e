/**
 * Batch reuse (`releaseBatch` / `reopenBatch`) with a listener that calls back into the engine.
 * A batch a prompt holds must never be handed to another prompt: a prompt's decisions hold only
 * that prompt's calls, and every prompt's batch of calls is judged for that prompt.
 */
import { expect, it } from 'vitest';
import { FailureEngine } from '../../src/engine/failure-engine.js';
import type { CallUpdate } from '../../src/engine/call-facts.js';
import type { BatchDecision } from '../../src/engine/failure-types.js';
import { engineSettings } from '../helpers/engine-settings.js';

const T = 1_700_000_000_000;
const opened = (promptId: string, callId: string): CallUpdate => ({ promptId, callId, timeMillis: T, opened: 'tool', facts: { toolName: 'read_file' } });
const settled = (promptId: string, callId: string): CallUpdate => ({
  promptId,
  callId,
  timeMillis: T,
  settled: true,
  facts: { lookupName: 'read_file', terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'file_not_found' },
});

it('a listener that closes a prompt batch during a boundary does not give that batch to another prompt', () => {
  const engine = new FailureEngine(engineSettings({ mode: 'shadow', controlHookRequired: false }));
  const decisions: BatchDecision[] = [];
  let reenter = false;
  engine.addListener({
    onDecision: (d) => {
      decisions.push(d);
      if (reenter && d.promptId === 'p') {
        reenter = false;
        // The batch span of p's open batch ends, and another prompt's first call starts.
        engine.closeBatch('p');
        engine.updateCall(opened('q', 'q1'));
      }
    },
  });
  for (const id of ['p', 'q']) engine.observePrompt(id, { foreground: true, sessionId: 's' });
  engine.updateCall(opened('p', 'a1'));
  engine.boundary('p'); // a1 unsettled: held as p's closing batch
  engine.updateCall(opened('p', 'a2'));
  reenter = true;
  engine.boundary('p'); // seals the closing batch: onDecision re-enters
  engine.updateCall(settled('q', 'q1'));
  engine.endPrompt('p', false);
  engine.endPrompt('q', false);

  const callsOf = (promptId: string) => decisions.filter((d) => d.promptId === promptId).flatMap((d) => d.receipt.observations.map((o) => o.callId));
  // Each call judged once, in its own prompt: p's two batches, then q's.
  expect(callsOf('p')).toEqual(['a1', 'a2']);
  expect(callsOf('q')).toEqual(['q1']);
});

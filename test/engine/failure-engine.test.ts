/**
 * The failure engine's batch closing, driven directly with call updates and boundaries. Expected
 * decisions follow the design: 8 eligible failures of one key across >= 2 complete batches warn,
 * the next matching batch stops; an incomplete batch resets (reason `incomplete`).
 */
import { describe, expect, it } from 'vitest';
import { FailureEngine } from '../../src/engine/failure-engine.js';
import type { BatchDecision, UnjudgedReason } from '../../src/engine/failure-types.js';
import { engineSettings } from '../helpers/engine-settings.js';

const P = 'sess########1';

function setup() {
  const engine = new FailureEngine(engineSettings({ offMessageTypes: ['cron'] }));
  const decisions: BatchDecision[] = [];
  const unjudged: [UnjudgedReason, number][] = [];
  engine.addListener({ onDecision: (d) => decisions.push(d), onUnjudgedBatch: (_p, r, b) => unjudged.push([r, b]) });
  let seq = 0;
  let t = 0;
  const spanStart = (callId: string) => engine.updateCall({ promptId: P, callId, opened: 'tool', facts: { toolName: 'read_file' }, timeMillis: ++t });
  const spanEnd = (callId: string) => engine.updateCall({ promptId: P, callId, closed: 'tool', timeMillis: ++t });
  const log = (callId: string) =>
    engine.updateCall({
      promptId: P,
      callId,
      settled: true,
      facts: { lookupName: 'read_file', terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'file_not_found' },
      timeMillis: ++t,
    });
  const request = () => engine.boundary(P);
  const ids = (n: number) => Array.from({ length: n }, () => `c${++seq}`);
  return { engine, decisions, unjudged, spanStart, spanEnd, log, request, ids };
}

const summary = (ds: readonly BatchDecision[]) => ds.map((d) => [d.batch, d.outcome.decision, d.receipt.complete]);

describe('failure engine: batches closed by the next model request', () => {
  it('a batch whose terminal logs arrive after the next request started is judged complete', () => {
    const s = setup();
    s.request();
    for (let b = 0; b < 5; b++) {
      const calls = s.ids(2);
      for (const c of calls) s.spanStart(c);
      for (const c of calls) s.spanEnd(c);
      s.request(); // the next request's start sorts before the batch's tool_call logs
      for (const c of calls) s.log(c);
    }
    s.engine.endPrompt(P);
    // 2 failures a batch: 8 eligible failures after batch 4 → would_warn; batch 5 → would_stop.
    expect(summary(s.decisions)).toEqual([
      [1, 'tracked', true],
      [2, 'tracked', true],
      [3, 'tracked', true],
      [4, 'would_warn', true],
      [5, 'would_stop', true],
    ]);
    expect(s.unjudged).toEqual([]);
  });

  it('a held batch is sealed, incomplete, when the next batch closes before its log arrives; order is kept', () => {
    const s = setup();
    s.request();
    const [a] = s.ids(1) as [string];
    s.spanStart(a);
    s.spanEnd(a);
    s.request(); // a held: no log yet
    const [b] = s.ids(1) as [string];
    s.spanStart(b);
    s.spanEnd(b);
    s.log(b);
    s.request(); // closes b: a is sealed first, incomplete
    s.log(a); // too late: a was judged
    s.engine.endPrompt(P);
    expect(summary(s.decisions)).toEqual([
      [1, 'none', false],
      [2, 'tracked', true],
    ]);
    expect(s.unjudged).toEqual([['no_terminal_records', 1]]);
    expect(s.engine.lateRecords).toBe(1);
  });

  it('a held batch is judged at prompt end when its log never comes', () => {
    const s = setup();
    s.request();
    const calls = s.ids(2);
    for (const c of calls) s.spanStart(c);
    s.log(calls[0] as string);
    s.request();
    s.engine.endPrompt(P);
    expect(summary(s.decisions)).toEqual([[1, 'none', false]]);
    expect(s.unjudged).toEqual([]);
  });

  it('a batch with no terminal record of any call is reported unjudged (traces only)', () => {
    const s = setup();
    s.request();
    for (let b = 0; b < 3; b++) {
      const calls = s.ids(1);
      for (const c of calls) s.spanStart(c);
      for (const c of calls) s.spanEnd(c);
      s.request();
    }
    s.engine.endPrompt(P);
    expect(summary(s.decisions)).toEqual([
      [1, 'none', false],
      [2, 'none', false],
      [3, 'none', false],
    ]);
    expect(s.unjudged).toEqual([
      ['no_terminal_records', 1],
      ['no_terminal_records', 2],
      ['no_terminal_records', 3],
    ]);
  });
});

/**
 * The engines' lookup hints (`FailureEngine.resumePrompt`, `RepetitionEngine.resumeSession`): a
 * profile keeps references beside its trace index and hands them back to spare the engines' own
 * hash-table probes. They are hints only. Fed the same records, an engine that is handed any
 * reference ever taken (held, forgotten, evicted, trimmed or swept) decides exactly as one that
 * never is, and a reference resumes only while its prompt or session is held.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FailureEngine } from '../../src/engine/failure-engine.js';
import type { BatchDecision, PromptRef } from '../../src/engine/failure-types.js';
import { RepetitionEngine } from '../../src/engine/repetition-engine.js';
import type { RepetitionCall, RepetitionDecisionRecord, SessionRef } from '../../src/engine/repetition-engine.js';
import { engineSettings } from '../helpers/engine-settings.js';

const fail = (error: boolean) =>
  error
    ? { lookupName: 'read_file', terminalStatus: 'error', logExecutionStatus: 'error', logErrorType: 'file_not_found' }
    : { lookupName: 'read_file', terminalStatus: 'success', logExecutionStatus: 'success' };

describe('FailureEngine.resumePrompt', () => {
  type Op =
    | { readonly op: 'call'; readonly prompt: number; readonly error: boolean }
    | { readonly op: 'boundary' | 'end'; readonly prompt: number }
    | { readonly op: 'idle' }
    | { readonly op: 'resume'; readonly ref: number };
  const prompt = fc.integer({ min: 0, max: 4 });
  const op: fc.Arbitrary<Op> = fc.oneof(
    { arbitrary: fc.record({ op: fc.constant('call' as const), prompt, error: fc.boolean() }), weight: 4 },
    { arbitrary: fc.record({ op: fc.constantFrom('boundary' as const, 'end' as const), prompt }), weight: 2 },
    { arbitrary: fc.record({ op: fc.constant('idle' as const) }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('resume' as const), ref: fc.nat({ max: 50 }) }), weight: 4 },
  );

  it('decisions are the same with and without hints; a reference resumes only while its prompt is held (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 30, maxLength: 120 }), fc.integer({ min: 1, max: 3 }), (ops, maxOpenPrompts) => {
        let clock = 0;
        const make = () => {
          const decisions: unknown[] = [];
          // 1 to 3 of 5 prompt ids: prompts are evicted by capacity
          const engine = new FailureEngine(engineSettings({ maxOpenPrompts, promptIdleMillis: 1_000, now: () => clock }));
          engine.addListener({ onDecision: (d: BatchDecision) => decisions.push([d.promptId, d.batch, d.outcome.decision, d.receipt.complete]) });
          return { engine, decisions };
        };
        const plain = make();
        const hinted = make();
        const refs: Array<readonly [string, PromptRef]> = [];
        let calls = 0;
        for (const o of ops) {
          if (o.op === 'resume') {
            const ref = refs[o.ref % Math.max(1, refs.length)];
            if (ref !== undefined) expect(hinted.engine.resumePrompt(ref[1])).toBe(hinted.engine.promptRef(ref[0]) === ref[1]);
            continue;
          }
          if (o.op === 'idle') {
            clock += 2_000;
            for (const e of [plain, hinted]) e.engine.sweep();
            continue;
          }
          const p = `s${o.prompt}########1`;
          for (const { engine } of [plain, hinted]) {
            if (o.op === 'call') engine.updateCall({ promptId: p, callId: `c${calls}`, settled: true, facts: fail(o.error), timeMillis: clock });
            else if (o.op === 'boundary') engine.boundary(p);
            else engine.endPrompt(p);
          }
          if (o.op === 'call') calls += 1;
          const ref = hinted.engine.promptRef(p);
          if (ref !== undefined) refs.push([p, ref]);
          expect(hinted.decisions).toEqual(plain.decisions);
        }
        for (const e of [plain, hinted]) e.engine.finishAll();
        expect(hinted.decisions).toEqual(plain.decisions);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    { desc: 'a prompt that ended', leave: (e: FailureEngine, p: string) => e.endPrompt(p) },
    { desc: 'a prompt evicted by capacity', leave: (e: FailureEngine) => e.boundary('other########1') },
  ])('a reference to $desc no longer resumes, and its id is not found', ({ leave }) => {
    const engine = new FailureEngine(engineSettings({ maxOpenPrompts: 1, promptIdleMillis: 60_000 }));
    const p = 's########1';
    expect(engine.promptRef(p)).toBeUndefined(); // creates nothing
    engine.boundary(p);
    const ref = engine.promptRef(p);
    expect(ref).toBeDefined();
    expect(engine.resumePrompt(ref as PromptRef)).toBe(true);
    leave(engine, p);
    expect(engine.resumePrompt(ref as PromptRef)).toBe(false);
    expect(engine.promptRef(p)).toBeUndefined();
  });
});

describe('RepetitionEngine.resumeSession', () => {
  type Op = { readonly op: 'call'; readonly session: number; readonly same: boolean } | { readonly op: 'idle' } | { readonly op: 'resume'; readonly ref: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { arbitrary: fc.record({ op: fc.constant('call' as const), session: fc.integer({ min: 0, max: 3 }), same: fc.boolean() }), weight: 5 },
    { arbitrary: fc.record({ op: fc.constant('idle' as const) }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('resume' as const), ref: fc.nat({ max: 50 }) }), weight: 4 },
  );

  it('decisions are the same with and without hints; a reference resumes only while its session is held (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 30, maxLength: 120 }), fc.integer({ min: 1, max: 3 }), (ops, maxSessions) => {
        let clock = 0;
        const make = () => {
          const decisions: unknown[] = [];
          const engine = new RepetitionEngine({
            mode: 'enforce',
            config: { enabled: true, warn: 2, abort: 3, windowSize: 0 },
            maxSessions, // 1 to 3 of 4 sessions: sessions are trimmed
            sessionIdleMillis: 1_000,
            telemetryCanAct: true,
            now: () => clock,
            reportError: (err) => {
              throw err;
            },
          });
          engine.addListener({ onRepetitionDecision: (r: RepetitionDecisionRecord) => decisions.push([r.sessionKey, r.promptId, r.outcome.decision]) });
          return { engine, decisions };
        };
        const plain = make();
        const hinted = make();
        const refs: Array<readonly [string, SessionRef]> = [];
        let calls = 0;
        for (const o of ops) {
          if (o.op === 'resume') {
            const ref = refs[o.ref % Math.max(1, refs.length)];
            if (ref !== undefined) expect(hinted.engine.resumeSession(ref[1])).toBe(hinted.engine.sessionRef(ref[0], `${ref[0]}########1`) === ref[1]);
            continue;
          }
          if (o.op === 'idle') {
            clock += 2_000;
            for (const e of [plain, hinted]) e.engine.sweep();
            continue;
          }
          const session = `s${o.session}`;
          const call: RepetitionCall = {
            sessionId: session,
            promptId: `${session}########1`,
            callId: `c${++calls}`,
            toolName: 'read_file',
            args: o.same ? '{"file_path":"/a"}' : `{"file_path":"/b${calls}"}`,
            argsAreJsonText: true,
            toolType: 'native',
            userPrompt: true,
            route: 'acp_foreground',
          };
          for (const { engine } of [plain, hinted]) engine.observeCall(call);
          const ref = hinted.engine.sessionRef(session, call.promptId);
          expect(ref).toBeDefined(); // just observed: held
          refs.push([session, ref as SessionRef]);
          expect(hinted.decisions).toEqual(plain.decisions);
        }
      }),
      { numRuns: 300 },
    );
  });
});

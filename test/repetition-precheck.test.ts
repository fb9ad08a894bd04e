import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reduceRepetition, initialRepetitionState } from '../src/core/repetition/reducer.js';
import type { RepetitionConfig } from '../src/core/repetition/config.js';
import type { RepetitionAction, RepetitionOutcome, RepetitionState } from '../src/core/repetition/types.js';
import type { GuardMode } from '../src/core/failure/types.js';
import { argumentsFingerprint, argumentsTextFingerprint } from '../src/engine/fingerprint.js';
import { isReportedRepetitionDecision, RepetitionEngine } from '../src/engine/repetition-engine.js';
import type { RepetitionCall } from '../src/engine/repetition-engine.js';

/**
 * The breaker as it was specified: every call fingerprinted with SHA-256 of its canonical
 * arguments and the fingerprint handed to the reducer, with the engine's session handling.
 */
class ReferenceBreaker {
  readonly reported: unknown[] = [];
  private readonly sessions = new Map<string, { state: RepetitionState; promptId?: string; hook: boolean; ids: (string | undefined)[] }>();
  constructor(
    private readonly mode: GuardMode,
    private readonly config: RepetitionConfig,
    private readonly telemetryCanAct: boolean,
  ) {}

  call(call: RepetitionCall, hook: boolean): RepetitionAction {
    const key = call.sessionId !== undefined && call.sessionId !== '' ? call.sessionId : call.promptId;
    let s = this.sessions.get(key);
    if (s === undefined) this.sessions.set(key, (s = { state: initialRepetitionState(), hook: false, ids: [undefined, undefined] }));
    if (hook) s.hook = true;
    else if (s.hook) return { type: 'none' };
    if (call.callId !== undefined) {
      if (s.ids.includes(call.callId)) return { type: 'none' };
      s.ids = [call.callId, s.ids[0]];
    }
    const source = hook ? 'control_hook' : 'telemetry';
    const mode: GuardMode = !hook && !this.telemetryCanAct ? 'shadow' : this.mode;
    const report = (o: RepetitionOutcome) => {
      if (isReportedRepetitionDecision(o)) this.reported.push(view(call.promptId, source, mode, o));
    };
    if (s.promptId !== call.promptId) {
      s.promptId = call.promptId;
      const [next, o] = reduceRepetition(s.state, { type: call.userPrompt ? 'user_prompt' : 'injected_message', mode }, this.config);
      s.state = next;
      report(o);
    }
    const fingerprint =
      call.argsAreJsonText && typeof call.args === 'string' ? argumentsTextFingerprint(call.toolName, call.args) : argumentsFingerprint(call.toolName, call.args);
    const [next, o] = reduceRepetition(s.state, { type: 'tool_call', mode, fingerprint, toolType: call.toolType }, this.config);
    s.state = next;
    report(o);
    return hook && this.mode !== 'shadow' ? o.action : { type: 'none' };
  }
}

const view = (promptId: string, source: string, mode: string, o: RepetitionOutcome) => [promptId, source, mode, o.decision, o.phaseBefore, o.phaseAfter, o.runLength, o.action.type];

const ARGS: unknown[] = [
  { file_path: '/workspace/a.ts' },
  { file_path: '/workspace/b.ts' },
  { file_path: '/workspace/a.tz' }, // same length as the first
  { content: 'x', file_path: '/workspace/a.ts' },
  { command: 'ls', description: 'list', options: { all: true, depth: 2 } },
  { options: { depth: 2, all: true }, description: 'list', command: 'ls' },
  { q: 'é😀\n"' },
  [1, 'two', null],
  'bare',
];

/** The arguments as a host writes them: pretty (qwen-code), compact, or with the keys reversed. */
function render(args: unknown, style: number): string {
  if (style === 0) return JSON.stringify(args, null, 2);
  if (style === 1 || args === null || typeof args !== 'object' || Array.isArray(args)) return JSON.stringify(args);
  return JSON.stringify(Object.fromEntries(Object.entries(args).reverse()), null, style === 2 ? 2 : undefined);
}

const op = fc.record({
  session: fc.nat({ max: 2 }),
  newPrompt: fc.boolean(),
  userPrompt: fc.boolean(),
  tool: fc.constantFrom('read_file', 'read_filf', 'run_shell_command'),
  args: fc.nat({ max: ARGS.length - 1 }),
  style: fc.nat({ max: 3 }),
  asText: fc.boolean(),
  callId: fc.option(fc.nat({ max: 40 }), { nil: undefined }),
  hook: fc.boolean(),
});

describe('repetition breaker: the engine (tool name pre-check, in-memory digest, strict-mode tokens) decides as SHA-256 fingerprints would', () => {
  it('property: identical reported decisions and hook actions for any call sequence, mode and config', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<GuardMode>('shadow', 'warn', 'enforce'),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 2 }),
        fc.constantFrom(0, 0, 1, 3),
        fc.boolean(),
        fc.array(op, { maxLength: 60 }),
        (mode, warn, extra, windowExtra, telemetryCanAct, ops) => {
          const abort = warn + extra;
          const config: RepetitionConfig = { enabled: true, warn, abort, windowSize: windowExtra === 0 ? 0 : abort + windowExtra - 1 };
          const engine = new RepetitionEngine({ mode, config, maxSessions: 100, sessionIdleMillis: 60_000, telemetryCanAct, now: () => 0, reportError: (e) => { throw e; } });
          const got: unknown[] = [];
          engine.addListener({ onRepetitionDecision: (r) => got.push(view(r.promptId, r.source, r.mode, r.outcome)) });
          const reference = new ReferenceBreaker(mode, config, telemetryCanAct);
          const prompts = [0, 0, 0];
          for (const o of ops) {
            if (o.newPrompt) prompts[o.session]! += 1;
            const args = ARGS[o.args];
            const call: RepetitionCall = {
              sessionId: `s${o.session}`,
              promptId: `s${o.session}########${prompts[o.session]}`,
              callId: o.callId === undefined ? undefined : `call_${o.callId}`,
              toolName: o.tool,
              args: o.asText ? render(args, o.style) : args,
              argsAreJsonText: o.asText,
              toolType: 'native',
              userPrompt: o.userPrompt,
              route: 'acp_foreground',
            };
            const expected = reference.call(call, o.hook);
            if (o.hook) expect(engine.beforeToolCall(call)).toEqual(expected);
            else engine.observeCall(call);
          }
          expect(got).toEqual(reference.reported);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('a long identical run in strict mode is still counted through the tokens (warn at 3, abort at 5)', () => {
    const engine = new RepetitionEngine({
      mode: 'enforce',
      config: { enabled: true, warn: 3, abort: 5, windowSize: 0 },
      maxSessions: 10,
      sessionIdleMillis: 60_000,
      telemetryCanAct: true,
      now: () => 0,
      reportError: () => undefined,
    });
    const actions = [];
    for (let i = 0; i < 6; i++) {
      const text = i % 2 === 0 ? '{\n  "view": "ranges",\n  "scope": "uncompressed"\n}' : '{"scope":"uncompressed","view":"ranges"}';
      actions.push(engine.beforeToolCall({ sessionId: 's', promptId: 's########1', callId: `c${i}`, toolName: 'acp_status', args: text, argsAreJsonText: true, toolType: 'native', userPrompt: true, route: 'acp_foreground' }).type);
    }
    expect(actions).toEqual(['none', 'none', 'warn', 'none', 'block', 'none']);
  });
});

import { describe, expect, it } from 'vitest';
import { argumentsFingerprint, parseArgumentsJson } from '../src/engine/fingerprint.js';
import { DEFAULT_REPETITION_CONFIG, resolveRepetitionConfig } from '../src/core/repetition/config.js';
import {
  initialRepetitionState,
  REPETITION_ABORT_TEXT,
  REPETITION_WARNING_TEXT,
  reduceRepetition,
} from '../src/core/repetition/reducer.js';
import type { RepetitionConfig, RepetitionMode } from '../src/core/repetition/config.js';
import type {
  RepetitionDecision,
  RepetitionEvent,
  RepetitionOutcome,
  RepetitionPhase,
  RepetitionState,
} from '../src/core/repetition/types.js';

const CONFIG = DEFAULT_REPETITION_CONFIG;

function fingerprintOf(tool: string, argsText: string): string {
  const parsed = parseArgumentsJson(argsText);
  if (!parsed.ok) throw new Error(`bad fixture: ${argsText}`);
  return argumentsFingerprint(tool, parsed.value);
}

/** The #308 incident: acp_status with identical arguments, alternately pretty and compact, key order varying. */
const ACP_STATUS_TEXTS = [
  JSON.stringify({ scope: 'uncompressed', view: 'ranges' }, null, 2),
  '{"view":"ranges","scope":"uncompressed"}',
] as const;
const INCIDENT: readonly string[] = Array.from({ length: 30 }, (_, i) =>
  fingerprintOf('acp_status', ACP_STATUS_TEXTS[i % 2] ?? ''),
);

const A = 'fp-a';
const B = 'fp-b';
const C = 'fp-c';

/** An event before the prompt's mode is attached (tables vary the mode separately). */
type ModelessEvent = { type: 'tool_call'; fingerprint: string } | { type: 'user_prompt' } | { type: 'injected_message' };
const call = (fingerprint: string): ModelessEvent => ({ type: 'tool_call', fingerprint });
const USER: ModelessEvent = { type: 'user_prompt' };
const INJECTED: ModelessEvent = { type: 'injected_message' };
const withMode = (event: ModelessEvent, mode: RepetitionMode): RepetitionEvent => ({ ...event, mode });

function run(
  events: readonly ModelessEvent[],
  mode: RepetitionMode,
  config: RepetitionConfig = CONFIG,
  start: RepetitionState = initialRepetitionState(),
): { readonly state: RepetitionState; readonly outcomes: readonly RepetitionOutcome[] } {
  let state = start;
  const outcomes: RepetitionOutcome[] = [];
  for (const event of events) {
    const [next, outcome] = reduceRepetition(state, withMode(event, mode), config);
    state = next;
    outcomes.push(outcome);
  }
  return { state, outcomes };
}

/** Indices (1-based call numbers) of outcomes whose decision is not 'tracked' / 'none'. */
function notable(outcomes: readonly RepetitionOutcome[]): Record<number, RepetitionDecision> {
  const result: Record<number, RepetitionDecision> = {};
  outcomes.forEach((o, i) => {
    if (o.decision !== 'tracked' && o.decision !== 'none') result[i + 1] = o.decision;
  });
  return result;
}

describe('reduceRepetition: the 30x identical successful acp_status incident', () => {
  it('fingerprints every incident call identically', () => {
    expect(new Set(INCIDENT).size).toBe(1);
  });

  type IncidentCase = {
    readonly mode: RepetitionMode;
    readonly notable: Record<number, RepetitionDecision>;
    readonly actions: Record<number, 'warn' | 'block'>;
    readonly finalPhase: RepetitionPhase;
    readonly countedCalls: number;
  };
  it.each<IncidentCase>([
    { mode: 'enforce', notable: { 3: 'warned', 5: 'aborted' }, actions: { 3: 'warn', 5: 'block' }, finalPhase: 'latched', countedCalls: 5 },
    { mode: 'shadow', notable: { 3: 'would_warn', 5: 'would_abort' }, actions: {}, finalPhase: 'latched', countedCalls: 5 },
    { mode: 'warn', notable: { 3: 'warned', 5: 'warned' }, actions: { 3: 'warn', 5: 'warn' }, finalPhase: 'warned', countedCalls: 30 },
    { mode: 'off', notable: {}, actions: {}, finalPhase: 'idle', countedCalls: 0 },
  ])('mode $mode', ({ mode, notable: expectedNotable, actions, finalPhase, countedCalls }) => {
    const { state, outcomes } = run(INCIDENT.map(call), mode);
    expect(notable(outcomes)).toStrictEqual(expectedNotable);
    const actual: Record<number, string> = {};
    outcomes.forEach((o, i) => {
      if (o.action.type !== 'none') actual[i + 1] = o.action.type;
    });
    expect(actual).toStrictEqual(actions);
    expect(state.phase).toBe(finalPhase);
    expect(outcomes.filter((o) => o.decision !== 'none')).toHaveLength(countedCalls);
  });

  it('enforce: warn text at 3, block text at 5, run lengths 1..5 then frozen', () => {
    const { outcomes } = run(INCIDENT.map(call), 'enforce');
    expect(outcomes[2]?.action).toStrictEqual({ type: 'warn', text: REPETITION_WARNING_TEXT });
    expect(outcomes[4]?.action).toStrictEqual({ type: 'block', text: REPETITION_ABORT_TEXT });
    expect(outcomes.map((o) => o.runLength).slice(0, 7)).toStrictEqual([1, 2, 3, 4, 5, 5, 5]);
    expect(outcomes.map((o) => o.phaseAfter).slice(0, 6)).toStrictEqual([
      'tracking', 'tracking', 'warned', 'warned', 'latched', 'latched',
    ]);
  });
});

describe('reduceRepetition: decision sequences', () => {
  type SequenceCase = {
    readonly desc: string;
    readonly events: readonly ModelessEvent[];
    readonly mode?: RepetitionMode;
    readonly config?: RepetitionConfig;
    readonly decisions: readonly RepetitionDecision[];
    readonly runLengths?: readonly number[];
  };
  const WINDOW_9: RepetitionConfig = { ...CONFIG, windowSize: 9 };
  const ALTERNATION = [A, B, A, B, A, B, A, B, A].map(call);
  it.each<SequenceCase>([
    { desc: 'argument change resets the run', events: [A, A, B, B, B].map(call), decisions: ['tracked', 'tracked', 'reset', 'tracked', 'warned'], runLengths: [1, 2, 1, 2, 3] },
    { desc: 'tool switch after a warning resets to tracking', events: [A, A, A, A, C, C].map(call), decisions: ['tracked', 'tracked', 'warned', 'tracked', 'reset', 'tracked'], runLengths: [1, 2, 3, 4, 1, 2] },
    { desc: 'a change after a single call is just tracked', events: [A, B, C].map(call), decisions: ['tracked', 'tracked', 'tracked'], runLengths: [1, 1, 1] },
    { desc: 'user prompt resets a run', events: [call(A), call(A), USER, call(A), call(A), call(A)], decisions: ['tracked', 'tracked', 'reset', 'tracked', 'tracked', 'warned'], runLengths: [1, 2, 0, 1, 2, 3] },
    { desc: 'user prompt on idle does nothing', events: [USER, call(A)], decisions: ['none', 'tracked'] },
    { desc: 'injected messages do not reset', events: [call(A), INJECTED, call(A), INJECTED, call(A)], decisions: ['tracked', 'none', 'tracked', 'none', 'warned'], runLengths: [1, 1, 2, 2, 3] },
    { desc: 'user prompt releases the latch', events: [...[A, A, A, A, A].map(call), USER, call(A)], mode: 'enforce', decisions: ['tracked', 'tracked', 'warned', 'tracked', 'aborted', 'reset', 'tracked'] },
    { desc: 'latched emits nothing, whatever the call', events: [...[A, A, A, A, A, A, B].map(call), INJECTED], mode: 'enforce', decisions: ['tracked', 'tracked', 'warned', 'tracked', 'aborted', 'none', 'none', 'none'], runLengths: [1, 2, 3, 4, 5, 5, 5, 5] },
    { desc: 'strict mode misses A-B alternation', events: ALTERNATION, decisions: Array<RepetitionDecision>(9).fill('tracked') },
    { desc: 'window 9 catches A-B-A-B-A', events: ALTERNATION, config: WINDOW_9, decisions: ['tracked', 'tracked', 'tracked', 'tracked', 'warned', 'warned', 'tracked', 'tracked', 'aborted'], runLengths: [1, 1, 2, 2, 3, 3, 4, 4, 5] },
    { desc: 'window 9 in shadow', events: ALTERNATION, config: WINDOW_9, mode: 'shadow', decisions: ['tracked', 'tracked', 'tracked', 'tracked', 'would_warn', 'would_warn', 'tracked', 'tracked', 'would_abort'] },
    { desc: 'window counts age out', events: [A, A, B, C, B, C, A].map(call), config: { ...CONFIG, windowSize: 5 }, decisions: ['tracked', 'tracked', 'reset', 'tracked', 'tracked', 'tracked', 'reset'], runLengths: [1, 2, 1, 1, 2, 2, 1] },
    { desc: 'window mode still catches a plain run', events: [A, A, A, A, A].map(call), config: WINDOW_9, decisions: ['tracked', 'tracked', 'warned', 'tracked', 'aborted'] },
    { desc: 'custom thresholds warn 2 / abort 3', events: [A, A, A].map(call), config: { ...CONFIG, warn: 2, abort: 3 }, decisions: ['tracked', 'warned', 'aborted'] },
    { desc: 'warn 1 warns on the first call', events: [A, B].map(call), config: { ...CONFIG, warn: 1, abort: 2 }, decisions: ['warned', 'warned'] },
    { desc: 'enabled false is inert', events: [A, A, A, A, A].map(call), config: { ...CONFIG, enabled: false }, decisions: ['none', 'none', 'none', 'none', 'none'], runLengths: [0, 0, 0, 0, 0] },
  ])('$desc', ({ events, mode = 'enforce', config = CONFIG, decisions, runLengths }) => {
    const { outcomes } = run(events, mode, config);
    expect(outcomes.map((o) => o.decision)).toStrictEqual(decisions);
    if (runLengths) expect(outcomes.map((o) => o.runLength)).toStrictEqual(runLengths);
  });
});

describe('reduceRepetition: identity', () => {
  const tracking = run([call(A), call(A)], 'enforce').state;
  const latched = run([A, A, A, A, A].map(call), 'enforce').state;
  const states: readonly [string, RepetitionState][] = [
    ['idle', initialRepetitionState()],
    ['tracking', tracking],
    ['latched', latched],
  ];
  const modes: readonly RepetitionMode[] = ['shadow', 'warn', 'enforce'];

  type IdentityCase = {
    readonly desc: string;
    readonly state: RepetitionState;
    readonly event: ModelessEvent;
    readonly mode: RepetitionMode;
    readonly config: RepetitionConfig;
  };
  it.each<IdentityCase>([
    ...states.flatMap(([name, state]) =>
      [call(A), call(B), USER, INJECTED].map((event) => ({
        desc: `mode off returns the same ${name} state on ${event.type}`,
        state, event, mode: 'off' as const, config: CONFIG,
      })),
    ),
    ...states.flatMap(([name, state]) =>
      modes.map((mode) => ({ desc: `injected_message keeps the ${name} state (${mode})`, state, event: INJECTED, mode, config: CONFIG })),
    ),
    ...modes.map((mode) => ({ desc: `enabled=false keeps the state (${mode})`, state: tracking, event: call(A), mode, config: { ...CONFIG, enabled: false } })),
    ...modes.map((mode) => ({ desc: `latched keeps the state on a tool call (${mode})`, state: latched, event: call(A), mode, config: CONFIG })),
    ...modes.map((mode) => ({ desc: `user prompt on idle keeps the state (${mode})`, state: initialRepetitionState(), event: USER, mode, config: CONFIG })),
  ])('$desc', ({ state, event, mode, config }) => {
    const before = structuredClone(state);
    const [next, outcome] = reduceRepetition(state, withMode(event, mode), config);
    expect(next).toBe(state);
    expect(state).toStrictEqual(before);
    expect(outcome.decision).toBe('none');
    expect(outcome.action).toStrictEqual({ type: 'none' });
    expect(outcome.phaseAfter).toBe(outcome.phaseBefore);
  });

  it('never mutates the input state on a counted call', () => {
    const start = run([A, B].map(call), 'enforce', { ...CONFIG, windowSize: 9 }).state;
    const before = structuredClone(start);
    const [next] = reduceRepetition(start, withMode(call(A), 'enforce'), { ...CONFIG, windowSize: 9 });
    expect(next).not.toBe(start);
    expect(start).toStrictEqual(before);
    expect(next).toMatchObject({ phase: 'tracking', fingerprint: A, runLength: 2, recent: [A, B, A] });
  });

  it('keeps recent empty in strict mode', () => {
    const { state } = run([A, A, B].map(call), 'enforce');
    expect(state).toStrictEqual({ phase: 'tracking', fingerprint: B, runLength: 1, recent: [] });
  });
});

describe('resolveRepetitionConfig', () => {
  type ResolveCase = {
    readonly desc: string;
    readonly input: Partial<RepetitionConfig>;
    readonly expected: RepetitionConfig;
    readonly issues: number;
  };
  it.each<ResolveCase>([
    { desc: 'empty input gives the defaults', input: {}, expected: { enabled: true, warn: 3, abort: 5, windowSize: 0 }, issues: 0 },
    { desc: 'valid values are kept', input: { enabled: false, warn: 2, abort: 3, windowSize: 6 }, expected: { enabled: false, warn: 2, abort: 3, windowSize: 6 }, issues: 0 },
    { desc: 'abort equal to warn is clamped to warn + 1', input: { warn: 4, abort: 4 }, expected: { enabled: true, warn: 4, abort: 5, windowSize: 0 }, issues: 1 },
    { desc: 'abort below warn is clamped to warn + 1', input: { warn: 6, abort: 2 }, expected: { enabled: true, warn: 6, abort: 7, windowSize: 0 }, issues: 1 },
    { desc: 'a large warn clamps the default abort', input: { warn: 10 }, expected: { enabled: true, warn: 10, abort: 11, windowSize: 0 }, issues: 1 },
    { desc: 'warn below 1 takes the default', input: { warn: 0 }, expected: { enabled: true, warn: 3, abort: 5, windowSize: 0 }, issues: 1 },
    { desc: 'non-integer warn takes the default', input: { warn: 2.5 }, expected: { enabled: true, warn: 3, abort: 5, windowSize: 0 }, issues: 1 },
    { desc: 'non-integer abort takes the default', input: { abort: Number.NaN }, expected: { enabled: true, warn: 3, abort: 5, windowSize: 0 }, issues: 1 },
    { desc: 'negative windowSize becomes 0', input: { windowSize: -1 }, expected: { enabled: true, warn: 3, abort: 5, windowSize: 0 }, issues: 1 },
    { desc: 'non-integer windowSize becomes 0', input: { windowSize: Infinity }, expected: { enabled: true, warn: 3, abort: 5, windowSize: 0 }, issues: 1 },
    { desc: 'windowSize below abort is raised to abort', input: { windowSize: 2 }, expected: { enabled: true, warn: 3, abort: 5, windowSize: 5 }, issues: 1 },
    { desc: 'wrong runtime types take defaults', input: JSON.parse('{"enabled":"yes","warn":"3"}'), expected: { enabled: true, warn: 3, abort: 5, windowSize: 0 }, issues: 2 },
  ])('$desc', ({ input, expected, issues }) => {
    const resolved = resolveRepetitionConfig(input);
    expect(resolved.config).toStrictEqual(expected);
    expect(resolved.issues).toHaveLength(issues);
  });
});


describe('texts', () => {
  it.each([REPETITION_WARNING_TEXT, REPETITION_ABORT_TEXT])('%s is fixed and tool-agnostic', (text) => {
    expect(text.startsWith('System:')).toBe(true);
    expect(text).not.toMatch(/acp_status|\{|\}/);
  });
});

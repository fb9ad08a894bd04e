/**
 * Replay is compositional: a capture made of several sessions (fresh ids, arbitrary time gaps,
 * arbitrary file order) gives, per prompt, exactly the decisions each session gives alone.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayRecords } from '../src/replay/replay.js';
import type { ReplayOptions } from '../src/replay/replay.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { outfileObjects, recaptureObject } from './helpers/generators.js';

const FIXTURES = ['acp-shadow-drain', 'acp-enforce', 'acp-shadow-nodrain', 'headless-yolo'] as const;
const objects = Object.fromEntries(
  FIXTURES.map((f) => [f, outfileObjects(readFileSync(new URL(`../fixtures/qwen-code-0.24.4/${f}.outfile.json`, import.meta.url), 'utf8'))]),
) as Record<(typeof FIXTURES)[number], string[]>;

/** Decisions by prompt, as `decision/resetReason` strings, prompts sorted. */
async function byPrompt(text: string, options: ReplayOptions): Promise<Record<string, string[]>> {
  const result = await replayRecords(parseTelemetryText(text, 'gen.json'), options);
  const out: Record<string, string[]> = {};
  for (const d of result.decisions) (out[d.promptId] ??= []).push(`${d.outcome.decision}/${d.outcome.resetReason ?? ''}`);
  return out;
}

const arbSessions = fc.array(fc.tuple(fc.constantFrom(...FIXTURES), fc.integer({ min: 0, max: 7_200 })), { minLength: 2, maxLength: 4 });

async function check(sessions: ReadonlyArray<readonly [(typeof FIXTURES)[number], number]>, order: readonly number[], options: ReplayOptions): Promise<void> {
  const copies = sessions.map(([f, gap], k) => objects[f].map((o) => recaptureObject(o, k + 1, gap)));
  const expected: Record<string, string[]> = {};
  for (const c of copies) Object.assign(expected, await byPrompt(c.join('\n'), options));
  const merged = copies.flat();
  const shuffled = merged.map((o, i) => [order[i] ?? i, i, o] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
  expect(await byPrompt(shuffled.join('\n'), options)).toEqual(expected);
}

describe('replay of concatenated sessions (fast-check)', () => {
  it('equals replaying each session alone, with an explicit mode', async () => {
    await fc.assert(
      fc.asyncProperty(arbSessions, fc.array(fc.nat(), { maxLength: 400 }), fc.constantFrom<ReplayOptions['mode']>('shadow', 'enforce'), (sessions, order, mode) =>
        check(sessions, order, { mode }),
      ),
      { numRuns: 12 },
    );
  });

  // Regression (fixed in 839ef4c): a recorded mode override used to create the prompt at virtual
  // time 0, so the first idle sweep evicted every prompt that started more than a minute in.
  it('equals replaying each session alone, with the in-tree modes (the default)', async () => {
    await check([['acp-shadow-drain', 0], ['acp-shadow-drain', 120]], [], {});
    await fc.assert(
      fc.asyncProperty(arbSessions, fc.array(fc.nat(), { maxLength: 400 }), (sessions, order) => check(sessions, order, {})),
      { numRuns: 8 },
    );
  });
});

/**
 * The in-process guard's activity stamps with the default clock: read once a second
 * (`CoarseClock`), not once per record. Idleness (`promptIdleMillis`, at least 1 s) is still judged
 * from the last activity, to the second; decisions keep the exact clock.
 */
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CoarseClock } from '../src/otel/coarse-clock.js';
import { guardedSdk } from './helpers/setup.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('CoarseClock', () => {
  it.each([
    { desc: 'between ticks it keeps its reading', advance: [400, 500], expected: [0, 0] },
    { desc: 'each tick takes a new reading', advance: [1_000, 1_000, 500], expected: [1_000, 2_000, 2_000] },
    { desc: 'a late tick reads the time it runs at', advance: [2_500], expected: [2_000] },
  ])('$desc', ({ advance, expected }) => {
    vi.useFakeTimers({ now: 0 });
    const clock = new CoarseClock(Date.now);
    const readings = advance.map((ms) => {
      vi.advanceTimersByTime(ms);
      return clock.now();
    });
    clock.stop();
    expect(readings).toEqual(expected);
  });

  it('stops taking readings after stop()', () => {
    vi.useFakeTimers({ now: 10_000 });
    const clock = new CoarseClock(Date.now);
    vi.advanceTimersByTime(1_000);
    clock.stop();
    vi.advanceTimersByTime(5_000);
    expect(clock.now()).toBe(11_000);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('a guard on the default clock judges idleness from the last activity, to the second', () => {
  it('a prompt active at 3 s is kept at 7 s and evicted by 9 s (promptIdleMillis 5 s)', async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000, toFake: ['Date', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    const sdk = guardedSdk({ promptIdleMillis: 5_000, sweepIntervalMillis: 1_000 });
    const promptId = 'sess-1########1';
    const interaction = sdk.tracer.startSpan('qwen-code.interaction', {
      root: true,
      attributes: { 'session.id': 'sess-1', 'qwen-code.prompt_id': promptId, 'qwen-code.message_type': 'acp_prompt' },
    });
    const request = (): void =>
      sdk.tracer
        .startSpan('qwen-code.llm_request', { attributes: { 'qwen-code.prompt_id': promptId, 'llm_request.context': 'interaction', 'session.id': 'sess-1' } }, trace.setSpan(ROOT_CONTEXT, interaction))
        .end();
    request();
    expect(sdk.guard.engine.openPromptCount).toBe(1);
    vi.advanceTimersByTime(3_000);
    request(); // activity at 3 s
    vi.advanceTimersByTime(4_000); // 7 s: idle 4 s
    expect(sdk.guard.engine.openPromptCount).toBe(1);
    vi.advanceTimersByTime(2_000); // 9 s: idle 6 s, swept
    expect(sdk.guard.engine.openPromptCount).toBe(0);
    interaction.end();
    vi.useRealTimers(); // the SDK's shutdown waits on real timers
    await sdk.shutdown();
  });
});

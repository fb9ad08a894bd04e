/**
 * `promptIdleMillis` is documented as "a prompt with no telemetry for this long is evicted", in
 * milliseconds, minimum 1000: a prompt whose last record is younger than that must not be evicted
 * as idle. On the default clock too: activity stamps from a clock read once a second (tried in
 * issue 17's fifth session, reverted) made a prompt look up to a tick older than it was, and
 * evicted it early; an evicted prompt is never tracked again.
 */
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { guardedSdk } from './helpers/setup.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('idleness on the default clock', () => {
  it('a prompt last active 1,001 ms ago is not evicted with promptIdleMillis 1,500', async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000, toFake: ['Date', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    const evictions: string[] = [];
    const sdk = guardedSdk({ promptIdleMillis: 1_500, sweepIntervalMillis: 0 });
    sdk.guard.addListener({ onEviction: (promptId, reason) => evictions.push(`${promptId}:${reason}`) });
    const promptId = 'sess-1########1';
    vi.advanceTimersByTime(999);
    // the prompt's only activity, at 0.999 s
    const interaction = sdk.tracer.startSpan('qwen-code.interaction', {
      root: true,
      attributes: { 'session.id': 'sess-1', 'qwen-code.prompt_id': promptId, 'qwen-code.message_type': 'acp_prompt' },
    });
    sdk.tracer
      .startSpan('qwen-code.llm_request', { attributes: { 'qwen-code.prompt_id': promptId, 'llm_request.context': 'interaction', 'session.id': 'sess-1' } }, trace.setSpan(ROOT_CONTEXT, interaction))
      .end();
    expect(sdk.guard.engine.openPromptCount).toBe(1);
    vi.advanceTimersByTime(1_001); // 2.000 s: idle 1,001 ms, under promptIdleMillis
    sdk.guard.sweep();
    expect(evictions).toEqual([]);
    expect(sdk.guard.engine.openPromptCount).toBe(1);
    vi.advanceTimersByTime(500); // 2.500 s: idle 1,501 ms, over it
    sdk.guard.sweep();
    expect(evictions).toEqual([`${promptId}:idle`]);
    interaction.end();
    vi.useRealTimers(); // the SDK's shutdown waits on real timers
    await sdk.shutdown();
  });
});

/**
 * Issue 13 item 1, in process: the guard's prompt state is bounded in bytes (`maxHeldBytes`), not
 * only in prompts. At the old defaults 10,000 prompts with 1,024 open calls each held about 1.6 GB;
 * with a byte bound the oldest prompts are evicted (`capacity`, counted) once the estimate passes it,
 * and an evicted prompt never acts again.
 */
import { describe, expect, it } from 'vitest';
import { CALL_ESTIMATE_BYTES, PROMPT_ESTIMATE_BYTES } from '../src/engine/failure-types.js';
import { createRepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';

const BOUND = 1024 * 1024;

function flood(maxHeldBytes: number | undefined, prompts: number, calls: number) {
  const guard = createRepeatedToolFailureGuard({ mode: 'enforce', sweepIntervalMillis: 0, maxHeldBytes });
  const evicted: string[] = [];
  guard.addListener({ onEviction: (id, reason) => evicted.push(`${id}:${reason}`) });
  let peak = 0;
  for (let p = 0; p < prompts; p++) {
    const promptId = `s${p}########1`;
    guard.engine.observePrompt(promptId, { foreground: true });
    for (let c = 0; c < calls; c++) {
      guard.engine.updateCall({ promptId, callId: `c${p}-${c}`, opened: 'tool', timeMillis: p, facts: { toolName: 'read_file' } });
      peak = Math.max(peak, guard.engine.heldBytes);
    }
  }
  return { guard, evicted, peak };
}

describe('the guard state is bounded in bytes', () => {
  it('prompts with 1,024 open calls each: the estimate never passes the bound, the oldest are evicted as capacity', async () => {
    const { guard, evicted, peak } = flood(BOUND, 40, 1024);
    expect(peak).toBeLessThanOrEqual(BOUND);
    // each prompt alone is about 1024 * 256 B + 1 KiB, so at most 3 fit in 1 MiB
    expect(guard.engine.openPromptCount).toBeLessThanOrEqual(Math.floor(BOUND / (PROMPT_ESTIMATE_BYTES + 1024 * CALL_ESTIMATE_BYTES)) + 1);
    expect(evicted.length).toBe(40 - guard.engine.openPromptCount);
    expect(evicted.every((e) => e.endsWith(':capacity'))).toBe(true);
    // an evicted prompt is never tracked again
    guard.engine.updateCall({ promptId: 's0########1', callId: 'late', opened: 'tool', timeMillis: 1, facts: {} });
    expect(guard.engine.lateRecords).toBeGreaterThan(0);
    await guard.shutdown();
  });

  it('small prompts are not touched by the byte bound at the default', async () => {
    const { guard, evicted } = flood(undefined, 2000, 3);
    expect(evicted).toEqual([]);
    expect(guard.engine.openPromptCount).toBe(2000);
    expect(guard.engine.heldBytes).toBe(2000 * (PROMPT_ESTIMATE_BYTES + 3 * CALL_ESTIMATE_BYTES));
    await guard.shutdown();
  });

  it('ending prompts gives their bytes back', async () => {
    const { guard } = flood(BOUND, 3, 10);
    expect(guard.engine.heldBytes).toBeGreaterThan(0);
    guard.engine.finishAll();
    expect(guard.engine.heldBytes).toBe(0);
    await guard.shutdown();
  });
});

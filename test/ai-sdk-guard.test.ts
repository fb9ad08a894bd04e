import { describe, expect, it } from 'vitest';
import { createAiSdkGuard } from '../src/ai-sdk.js';
import type { AiSdkContentPart, AiSdkPrepareStepOptions, AiSdkStep } from '../src/ai-sdk.js';
import { REPEATED_TOOL_FAILURE_REMINDER } from '../src/core/failure/reducer.js';
import type { GuardMode } from '../src/core/failure/types.js';

/** A step as the SDK builds it: calls and their results or errors (`ENOENT` as Node's fs throws it). */
function step(calls: Array<{ tool?: string; ok?: boolean; error?: unknown }>, tag: string): AiSdkStep {
  const content: AiSdkContentPart[] = [];
  calls.forEach((c, i) => {
    const toolCallId = `${tag}-${i}`;
    const toolName = c.tool ?? 'read_file';
    content.push({ type: 'tool-call', toolCallId, toolName, input: { path: `missing-${i}.txt` } });
    content.push(c.ok === true ? { type: 'tool-result', toolCallId, toolName } : { type: 'tool-error', toolCallId, toolName, error: c.error ?? Object.assign(new Error('ENOENT: /secret'), { code: 'ENOENT' }) });
  });
  return { content };
}

/** Drive one SDK call the way generateText does: prepareStep, (model + tools), stopWhen, until a stop or the script ends. */
async function drive(mode: GuardMode, script: Array<Parameters<typeof step>[0]>, opts: { instructions?: boolean } = {}) {
  const guard = createAiSdkGuard({ mode, sweepIntervalMillis: 0 });
  const decisions: string[] = [];
  guard.addListener({ onDecision: (d) => d.outcome.decision !== 'none' && decisions.push(d.outcome.decision + (d.outcome.resetReason === undefined ? '' : `/${d.outcome.resetReason}`)) });
  const settings = guard.settings();
  const steps: AiSdkStep[] = [];
  const sent: unknown[] = [];
  for (let n = 0; ; n++) {
    const options: AiSdkPrepareStepOptions = { steps, stepNumber: n, messages: [{ role: 'user', content: 'go' }], ...(opts.instructions === true ? { instructions: 'be brief' } : {}) };
    sent.push(await settings.prepareStep(options));
    const calls = script[n];
    if (calls === undefined) break;
    steps.push(step(calls, `s${n}`));
    const stop = await Promise.all(settings.stopWhen.map((c) => c({ steps })));
    if (stop.some(Boolean)) break;
  }
  await guard.shutdown();
  return { decisions, sent, steps };
}

const LOOP = Array.from({ length: 6 }, () => [{}, {}]);

describe('ai-sdk adapter (stopWhen + prepareStep, no SDK)', () => {
  it('shadow: decisions only; the loop is never stopped and nothing is added', async () => {
    const r = await drive('shadow', LOOP);
    expect(r.decisions).toEqual(['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop']);
    expect(r.steps).toHaveLength(6);
    expect(r.sent.every((s) => s === undefined)).toBe(true);
  });

  it('enforce: the reminder is added once, to the messages of the fifth model call; the fifth step stops the loop', async () => {
    const r = await drive('enforce', LOOP);
    expect(r.decisions).toEqual(['tracked', 'tracked', 'tracked', 'warned', 'stopped']);
    expect(r.steps).toHaveLength(5);
    const withReminder = r.sent.map((s) => JSON.stringify(s ?? null).includes(REPEATED_TOOL_FAILURE_REMINDER));
    expect(withReminder).toEqual([false, false, false, false, true]);
    expect((r.sent[4] as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'go' },
      { role: 'system', content: REPEATED_TOOL_FAILURE_REMINDER },
    ]);
  });

  it('AI SDK 7 (prepareStep sees instructions): the reminder joins the instructions as a system message', async () => {
    const r = await drive('warn', LOOP, { instructions: true });
    expect(r.sent[4]).toEqual({ instructions: [{ role: 'system', content: 'be brief' }, { role: 'system', content: REPEATED_TOOL_FAILURE_REMINDER }] });
  });

  it('an error with no name or code is unclassified (never counted); an AbortError is a cancellation', async () => {
    expect((await drive('shadow', [[{}], [{ error: 'a string' }]])).decisions).toEqual(['tracked', 'reset/unknown']);
    expect((await drive('shadow', [[{}], [{ error: Object.assign(new Error('x'), { name: 'AbortError' }) }]])).decisions).toEqual(['tracked', 'reset/cancelled']);
  });

  it('keys a run on the steps array: two calls through one settings object are two prompts', async () => {
    const guard = createAiSdkGuard({ mode: 'enforce', sweepIntervalMillis: 0 });
    const prompts = new Set<string>();
    guard.addListener({ onDecision: (d) => prompts.add(d.promptId) });
    const settings = guard.settings();
    for (let call = 0; call < 2; call++) {
      const steps: AiSdkStep[] = [];
      for (let n = 0; n < 3; n++) {
        steps.push(step([{}, {}], `c${call}s${n}`));
        expect(await settings.stopWhen[0]?.({ steps })).toBe(false);
      }
    }
    expect(prompts.size).toBe(2);
    await guard.shutdown();
  });

  it("keeps the caller's stop conditions and prepareStep result", async () => {
    const guard = createAiSdkGuard({ mode: 'enforce', sweepIntervalMillis: 0 });
    const mine = ({ steps }: { steps: AiSdkStep[] }) => steps.length === 2;
    const settings = guard.settings({ stopWhen: mine, prepareStep: () => ({ toolChoice: 'auto' }) });
    expect(settings.stopWhen[0]).toBe(mine);
    expect(settings.stopWhen).toHaveLength(2);
    expect(await (settings.prepareStep as (o: AiSdkPrepareStepOptions) => unknown)({ steps: [], stepNumber: 0, messages: [] })).toEqual({ toolChoice: 'auto' });
    await guard.shutdown();
  });
});

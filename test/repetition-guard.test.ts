import { describe, expect, it } from 'vitest';
import { argumentsFingerprint } from '../src/engine/fingerprint.js';
import { REPETITION_ABORT_TEXT, REPETITION_WARNING_TEXT } from '../src/core/repetition/reducer.js';
import { replayRecords } from '../src/replay/replay.js';
import { loadFixture } from './helpers/recorded.js';
import { setup } from './helpers/setup.js';

const P = 'sess-1########1';
const ARGS = { scope: 'uncompressed', view: 'ranges' };
const pretty = (o: unknown) => JSON.stringify(o, null, 2);
const repetitionEvents = (s: ReturnType<typeof setup>) =>
  s.guardLogs.getFinishedLogRecords().filter((r) => r.attributes['event.name'] === 'qwen-code.tool_call_repetition_guard');

function identicalSuccesses(s: ReturnType<typeof setup>, n: number, promptId = P, args: Record<string, string> = ARGS, name = "acp_status") {
  for (let i = 0; i < n; i++) {
    s.agent.modelRequest(promptId);
    // key order alternates: the fingerprint must not care
    const text = i % 2 === 0 ? pretty(args) : JSON.stringify(Object.fromEntries(Object.entries(args).reverse()));
    s.agent.toolCall(promptId, { name, status: 'success', args: text });
  }
}

describe('identical tool-call repetition breaker, from telemetry (no Session code)', () => {
  it('the 30x identical successful call incident: would_warn at 3, would_abort at 5, then nothing (shadow)', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    identicalSuccesses(s, 30);
    s.agent.endPrompt(P);
    const events = repetitionEvents(s);
    expect(events.map((e) => [e.attributes.decision, e.attributes.run_length_bucket])).toEqual([
      ['would_warn', '3-4'],
      ['would_abort', '5-7'],
    ]);
    // the failure guard sees only successes
    expect(s.guardEvents()).toHaveLength(0);
    expect(s.loopEvents()).toHaveLength(0);
    await s.shutdown();
  });

  it('enforce without the Session hook cannot act: telemetry-only calls are reported as would_warn / would_abort, no loop event', async () => {
    const s = setup({ mode: 'enforce' });
    s.agent.startPrompt(P);
    identicalSuccesses(s, 6);
    expect(repetitionEvents(s).map((e) => [e.attributes.decision, e.attributes.mode])).toEqual([
      ['would_warn', 'shadow'],
      ['would_abort', 'shadow'],
    ]);
    expect(s.loopEvents()).toHaveLength(0);
    await s.shutdown();
  });

  it('replay in enforce shows what enforce would do, with the in-tree loop type on the abort', async () => {
    const records = loadFixture('headless-yolo');
    for (const l of records.logs) {
      if (l.attributes['event.name'] === 'qwen-code.tool_call') (l.attributes as Record<string, unknown>).function_args = pretty({ file_path: '/same.txt' });
    }
    const r = await replayRecords(records, { mode: 'enforce' });
    expect(r.repetition.map((d) => d.outcome.decision)).toEqual(['warned', 'aborted']);
    const loops = r.emitted.filter((e) => e.name === 'loop_detected');
    expect(loops.map((l) => l.attributes.loop_type)).toEqual(['consecutive_identical_tool_calls']);
    expect(loops[0]?.attributes['qwen-code.rum.exclude']).toBeUndefined();
  });

  it.each([
    { desc: 'an argument change', second: { name: 'acp_status', args: { scope: 'compressed', view: 'ranges' } } },
    { desc: 'a tool switch', second: { name: 'acp_inspect', args: ARGS } },
  ])('$desc resets the run', async ({ second }) => {
    const s = setup();
    s.agent.startPrompt(P);
    identicalSuccesses(s, 3);
    identicalSuccesses(s, 1, P, second.args, second.name);
    identicalSuccesses(s, 4);
    s.agent.endPrompt(P);
    expect(repetitionEvents(s).map((e) => e.attributes.decision)).toEqual(['would_warn', 'reset', 'would_warn']);
    await s.shutdown();
  });

  it('a new user prompt resets the run; a prompt the agent injected (e.g. a notification turn) does not', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    identicalSuccesses(s, 2);
    s.agent.endPrompt(P);
    const injected = 'sess-1########2';
    s.agent.startPrompt(injected, 'notification');
    identicalSuccesses(s, 1, injected);
    s.agent.endPrompt(injected);
    expect(repetitionEvents(s).map((e) => e.attributes.decision)).toEqual(['would_warn']);
    const next = 'sess-1########3';
    s.agent.startPrompt(next);
    identicalSuccesses(s, 2, next);
    s.agent.endPrompt(next);
    // the user prompt ended the warned run (reported) and restarted counting at 1
    expect(repetitionEvents(s).map((e) => e.attributes.decision)).toEqual(['would_warn', 'reset']);
    await s.shutdown();
  });

  it('cron prompts (forced off) are not counted at all', async () => {
    const s = setup();
    s.agent.startPrompt(P, 'cron');
    identicalSuccesses(s, 10, P);
    s.agent.endPrompt(P);
    expect(repetitionEvents(s)).toHaveLength(0);
    await s.shutdown();
  });

  it('never emits the arguments, the fingerprint or the tool name', async () => {
    const secret = { path: '/home/alice/SECRET-77', token: 'tok-ABCDEF' };
    const s = setup({ mode: 'enforce' });
    s.agent.startPrompt(P);
    identicalSuccesses(s, 6, P, secret, 'read_secret_tool');
    s.agent.endPrompt(P);
    const out = JSON.stringify([s.guardLogs.getFinishedLogRecords().map((r) => [r.attributes, r.body]), await s.metricPoints()]);
    expect(repetitionEvents(s).length).toBeGreaterThan(0);
    expect(out).not.toContain('SECRET-77');
    expect(out).not.toContain('tok-ABCDEF');
    expect(out).not.toContain('read_secret_tool');
    expect(out).not.toContain(argumentsFingerprint('read_secret_tool', secret));
    const points = (await s.metricPoints()).filter((p) => p.name === 'qwen-code.tool_call_repetition_guard.count');
    expect(points.length).toBeGreaterThan(0);
    for (const p of points) expect(Object.keys(p.attributes).sort()).toEqual(['decision', 'mode', 'phase_after', 'phase_before', 'route', 'run_length_bucket', 'tool_type']);
    await s.shutdown();
  });
});

describe('identical tool-call repetition breaker, through the control hook', () => {
  it('enforce: warns at 3, blocks at 5, and the same calls are not counted again from telemetry', async () => {
    const s = setup({ mode: 'enforce' });
    s.agent.startPrompt(P);
    const actions = [];
    for (let i = 0; i < 5; i++) {
      const callId = `c${i}`;
      const action = s.guard.control.beforeToolCall({ sessionId: 'sess-1', promptId: P, callId, toolName: 'acp_status', arguments: { view: 'ranges', scope: 'uncompressed' } });
      actions.push(action);
      if (action.type !== 'block') {
        s.agent.modelRequest(P);
        s.agent.toolCall(P, { name: 'acp_status', callId, status: 'success', args: pretty(ARGS) });
      }
    }
    expect(actions).toEqual([
      { type: 'none' },
      { type: 'none' },
      { type: 'warn', text: REPETITION_WARNING_TEXT },
      { type: 'none' },
      { type: 'block', text: REPETITION_ABORT_TEXT },
    ]);
    expect(repetitionEvents(s).map((e) => e.attributes.decision)).toEqual(['warned', 'aborted']);
    await s.shutdown();
  });

  it('abort <= warn is clamped to warn + 1', async () => {
    const s = setup({ mode: 'enforce', repetition: { warn: 2, abort: 2 } });
    expect(s.guard.options.repetition).toMatchObject({ warn: 2, abort: 3 });
    const actions = [0, 1, 2].map((i) => s.guard.control.beforeToolCall({ sessionId: 's', promptId: P, callId: `k${i}`, toolName: 't', arguments: [1, 2] }).type);
    expect(actions).toEqual(['none', 'warn', 'block']);
    await s.shutdown();
  });

  it('shadow never acts; off is inert', async () => {
    for (const mode of ['shadow', 'off'] as const) {
      const s = setup({ mode: 'enforce', repetition: { mode } });
      const actions = [0, 1, 2, 3, 4, 5].map((i) => s.guard.control.beforeToolCall({ sessionId: 's', promptId: P, callId: `k${i}`, toolName: 't', arguments: {} }).type);
      expect(actions.every((a) => a === 'none')).toBe(true);
      expect(repetitionEvents(s).length).toBe(mode === 'shadow' ? 2 : 0);
      await s.shutdown();
    }
  });

  it('malformed input never throws', async () => {
    const s = setup({ mode: 'enforce' });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(s.guard.control.beforeToolCall(null as never)).toEqual({ type: 'none' });
    expect(s.guard.control.beforeToolCall({ sessionId: 's', promptId: P, toolName: 't', arguments: cyclic })).toEqual({ type: 'none' });
    expect(s.guard.control.beforeToolCall({ sessionId: 's', promptId: P, toolName: 't', arguments: 10n })).toEqual({ type: 'none' });
    await s.shutdown();
  });
});

describe('replay reports both guards', () => {
  it.each(['acp-enforce', 'acp-shadow-drain', 'acp-shadow-nodrain', 'headless-yolo'])('%s: distinct arguments never trip the repetition breaker', async (name) => {
    const r = await replayRecords(loadFixture(name));
    expect(r.decisions.length).toBeGreaterThan(0);
    expect(r.repetition).toEqual([]);
  });

  it('a capture with identical calls is reported by the breaker', async () => {
    const records = loadFixture('headless-yolo');
    for (const l of records.logs) {
      if (l.attributes['event.name'] === 'qwen-code.tool_call') (l.attributes as Record<string, unknown>).function_args = pretty({ file_path: '/same.txt' });
    }
    const r = await replayRecords(records);
    expect(r.repetition.map((d) => d.outcome.decision)).toEqual(['would_warn', 'would_abort']);
    expect(r.decisions.map((d) => d.outcome.decision)).toEqual(['tracked', 'tracked', 'tracked']);
  });
});

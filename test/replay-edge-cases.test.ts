/**
 * Inputs that once produced wrong decisions (found by an adversarial review), each built from a
 * real capture, each compared with what the design and qwen-code 0.24.4 require.
 */
import { describe, expect, it } from 'vitest';
import { compareWithInTree } from '../src/replay/compare.js';
import { RecordedSpan } from '../src/otlp/records.js';
import type { RecordBatch, RecordedLog } from '../src/otlp/records.js';
import { replayRecords } from '../src/replay/replay.js';
import { hrTimeToMillis } from '../src/profiles/wire-profile.js';
import { loadFixture } from './helpers/recorded.js';

const decisions = (r: Awaited<ReturnType<typeof replayRecords>>, promptId?: string) =>
  r.decisions.filter((d) => promptId === undefined || d.promptId === promptId).map((d) => d.outcome.decision);
const SHADOW = ['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop', 'none'];

function shiftAfter(records: RecordBatch, fromMillis: number, byMillis: number): void {
  const shift = (t: readonly [number, number]): [number, number] => {
    const ms = hrTimeToMillis([t[0], t[1]]);
    if (ms < fromMillis) return [t[0], t[1]];
    const n = ms + byMillis;
    return [Math.floor(n / 1000), Math.round((n % 1000) * 1e6)];
  };
  records.spans.forEach((s, i) => {
    records.spans[i] = new RecordedSpan({
      name: s.name,
      attributes: s.attributes as Record<string, unknown>,
      spanContext: s.spanContext(),
      parentSpanContext: s.parentSpanContext,
      startTime: shift(s.startTime),
      endTime: shift(s.endTime),
      scopeName: s.scopeName,
    });
  });
  records.logs.forEach((l, i) => {
    records.logs[i] = { ...l, hrTime: shift(l.hrTime) };
  });
}

describe('replay edge cases', () => {
  it('a call running longer than the idle limit does not lose the prompt', async () => {
    const records = loadFixture('acp-shadow-drain');
    const exec = records.spans.find((s) => s.name === 'qwen-code.tool.execution' && s.attributes['tool.call_id'] === 'call_r3_0');
    expect(exec).toBeDefined();
    // everything from the end of that execution on happens 3 hours later (idle limit: 2 h)
    shiftAfter(records, hrTimeToMillis(exec?.endTime) - 0.001, 3 * 3600 * 1000);
    const r = await replayRecords(records, { mode: 'shadow' });
    expect(decisions(r)).toEqual(SHADOW);
    expect(r.evictions).toEqual([]);
  });

  it('deeply nested function_args neither blind the failure guard nor throw', async () => {
    const records = loadFixture('acp-shadow-drain');
    for (const l of records.logs) {
      if (l.attributes['event.name'] === 'qwen-code.tool_call') (l.attributes as Record<string, unknown>).function_args = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    }
    const r = await replayRecords(records, { mode: 'shadow' });
    expect(decisions(r)).toEqual(SHADOW);
    // identical (deep) arguments every call: the breaker still sees them as identical
    expect(r.repetition.map((d) => d.outcome.decision)).toEqual(['would_warn', 'would_abort']);
  });

  it('a logs-only session is judged even when another session in the input has spans', async () => {
    const logsOnly = loadFixture('acp-shadow-drain');
    const full = loadFixture('acp-enforce');
    const all: RecordBatch = { spans: [...full.spans], logs: [...logsOnly.logs, ...full.logs], metricCount: 0, ignoredCount: 0 };
    const r = await replayRecords(all);
    expect(decisions(r, '1085cf07-7444-48c4-b522-15c6572acf2b########1')).toEqual(SHADOW);
    expect(decisions(r, '3f36da7a-197c-4a0b-bc66-93c34b4e5530########1')).toEqual(['tracked', 'tracked', 'tracked', 'warned', 'stopped']);
  });

  it('a subagent call in another session does not hide a foreground call with the same id', async () => {
    const records = loadFixture('acp-shadow-drain');
    const t: [number, number] = [records.logs[0]?.hrTime[0] ?? 0, 0];
    const ctx = (spanId: string) => ({ traceId: 'f'.repeat(32), spanId, traceFlags: 1 });
    records.spans.unshift(
      new RecordedSpan({ name: 'qwen-code.subagent', attributes: {}, spanContext: ctx('1'.repeat(16)), parentSpanContext: undefined, startTime: t, endTime: t, scopeName: 'qwen-code' }),
      new RecordedSpan({
        name: 'qwen-code.tool',
        attributes: { 'tool.call_id': 'call_r2_0', 'gen_ai.tool.name': 'read_file' },
        spanContext: ctx('2'.repeat(16)),
        parentSpanContext: ctx('1'.repeat(16)),
        startTime: t,
        endTime: t,
        scopeName: 'qwen-code',
      }),
    );
    const r = await replayRecords(records);
    const c = compareWithInTree(r.decisions, r.inTree);
    expect([c.agreeing, c.total]).toEqual([6, 6]);
  });

  it('a batch\'s last tool_call log in the same millisecond as the next model request stays in its batch', async () => {
    const records = loadFixture('acp-shadow-drain');
    const lastLog = records.logs.find((l) => l.attributes.call_id === 'call_r2_1') as RecordedLog;
    const llm = records.spans.filter((s) => s.name === 'qwen-code.llm_request').sort((a, b) => hrTimeToMillis(a.startTime) - hrTimeToMillis(b.startTime))[2];
    expect(llm).toBeDefined();
    const i = records.spans.indexOf(llm as RecordedSpan);
    const s = llm as RecordedSpan;
    records.spans[i] = new RecordedSpan({
      name: s.name,
      attributes: s.attributes as Record<string, unknown>,
      spanContext: s.spanContext(),
      parentSpanContext: s.parentSpanContext,
      startTime: [lastLog.hrTime[0], lastLog.hrTime[1] + 400_000],
      endTime: s.endTime,
      scopeName: s.scopeName,
    });
    const r = await replayRecords(records, { mode: 'shadow' });
    expect(r.decisions.every((d) => d.receipt.complete)).toBe(true);
    expect(decisions(r)).toEqual(SHADOW);
  });

  it('the same capture read twice: the replay and the comparison are unchanged', async () => {
    const once = loadFixture('acp-shadow-drain');
    const twice: RecordBatch = { spans: [...once.spans, ...once.spans], logs: [...once.logs, ...once.logs], metricCount: 0, ignoredCount: 0 };
    const r = await replayRecords(twice);
    expect(decisions(r)).toEqual(SHADOW);
    const c = compareWithInTree(r.decisions, r.inTree);
    expect([c.agreeing, c.total]).toEqual([6, 6]);
  });

  it('headless logs-only input is on the headless route (response_id) and not compared', async () => {
    const records = loadFixture('headless-yolo');
    const logsOnly: RecordBatch = { spans: [], logs: records.logs, metricCount: 0, ignoredCount: 0 };
    const r = await replayRecords(logsOnly);
    expect(r.decisions.map((d) => [d.route, d.outcome.decision])).toEqual([
      ['headless', 'tracked'],
      ['headless', 'tracked'],
      ['headless', 'tracked'],
    ]);
    expect(compareWithInTree(r.decisions, r.inTree).total).toBe(0);
  });
});

describe('scope of calls', () => {
  it('a tool span whose parent is not the interaction span (a subagent\'s, seen or not) never joins the foreground batch', async () => {
    const records = loadFixture('acp-shadow-drain');
    const interaction = records.spans.find((s) => s.name === 'qwen-code.interaction') as RecordedSpan;
    const firstTool = records.spans.find((s) => s.name === 'qwen-code.tool' && s.attributes['tool.call_id'] === 'call_r2_0') as RecordedSpan;
    const traceId = interaction.spanContext().traceId;
    // a subagent's tool call inside batch 2, parented under a subagent span that never arrives
    const t = firstTool.startTime;
    records.spans.push(
      new RecordedSpan({
        name: 'qwen-code.tool',
        attributes: { 'tool.call_id': 'sub_call_1', 'gen_ai.tool.name': 'read_file' },
        spanContext: { traceId, spanId: 'abcdefabcdef0001', traceFlags: 1 },
        parentSpanContext: { traceId, spanId: 'abcdefabcdef0000', traceFlags: 1 },
        startTime: t,
        endTime: t,
        scopeName: 'qwen-code',
      }),
    );
    const r = await replayRecords(records);
    expect(decisions(r)).toEqual(SHADOW);
    expect(r.decisions.every((d) => d.receipt.complete)).toBe(true);
    expect(r.decisions[1]?.receipt.observations.map((o) => o.callId)).toEqual(['call_r2_0', 'call_r2_1']);
  });
});

describe('logs only: subagent prompts', () => {
  it('a subagent\'s model requests and failing calls (prompt id <session>#<agent>-<callId>#<k>) are never judged', async () => {
    const records = loadFixture('acp-shadow-drain');
    const logs = [...records.logs];
    const main = logs.find((l) => l.attributes['event.name'] === 'qwen-code.tool_call' && l.attributes.call_id === 'call_r2_0') as RecordedLog;
    const sid = String(main.attributes.prompt_id).split('#')[0];
    const sub = `${sid}#general-purpose-call_r2_0#0`;
    const at = (ms: number): [number, number] => [main.hrTime[0], main.hrTime[1] + ms * 1e6];
    logs.push({ hrTime: at(1), attributes: { 'event.name': 'qwen-code.api_request', prompt_id: sub }, instrumentationScope: { name: 'qwen-code' }, body: '' });
    for (let i = 0; i < 6; i++) {
      logs.push({
        hrTime: at(2 + i * 0.1),
        attributes: { 'event.name': 'qwen-code.tool_call', prompt_id: sub, call_id: `sub_${i}`, function_name: 'read_file', status: 'error', execution_status: 'error', error_type: 'file_not_found', tool_type: 'native', response_id: 'chatcmpl-9' },
        instrumentationScope: { name: 'qwen-code' },
        body: '',
      });
    }
    const r = await replayRecords({ spans: [], logs, metricCount: 0, ignoredCount: 0 });
    expect(r.decisions.filter((d) => d.promptId === sub)).toEqual([]);
    expect(decisions(r)).toEqual(SHADOW);
  });
});

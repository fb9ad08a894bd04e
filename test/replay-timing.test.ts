/**
 * Real captures re-timed the way real exporters time them (issue 12, cases 1 and 2): the decisions
 * must not change. Each transformation keeps every record's content and only moves times.
 */
import { describe, expect, it } from 'vitest';
import type { HrTime } from '@opentelemetry/api';
import { RecordedSpan } from '../src/otlp/records.js';
import type { RecordBatch, RecordedLog } from '../src/otlp/records.js';
import { replayRecords } from '../src/replay/replay.js';
import { loadFixture } from './helpers/recorded.js';

const ms = (t: HrTime) => t[0] * 1000 + t[1] / 1e6;
const hr = (m: number): HrTime => [Math.floor(m / 1000), Math.round((m % 1000) * 1e6)];

function withTimes(span: RecordedSpan, startTime: HrTime, endTime: HrTime): RecordedSpan {
  return new RecordedSpan({
    name: span.name,
    attributes: { ...span.attributes },
    spanContext: span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime,
    endTime,
    scopeName: span.scopeName,
    resource: span.resource,
  });
}

/**
 * Tight gap: every model request after the first starts in the millisecond in which the last tool
 * span before it ended (start truncated to the millisecond, OpenTelemetry JS), and each
 * `qwen-code.tool_call` log is stamped one millisecond later than its tool span's end (a log clock
 * ahead of the span clock): the log now sorts after the next request's start.
 */
function tightGap(records: RecordBatch): RecordBatch {
  const toolEnds = records.spans.filter((s) => s.name === 'qwen-code.tool').map((s) => ms(s.endTime)).sort((a, b) => a - b);
  const toolEndById = new Map(records.spans.filter((s) => s.name === 'qwen-code.tool').map((s) => [String(s.attributes['tool.call_id']), ms(s.endTime)]));
  const spans = records.spans.map((s) => {
    if (s.name !== 'qwen-code.llm_request') return s;
    const start = ms(s.startTime);
    const lastEnd = [...toolEnds].reverse().find((e) => e < start);
    if (lastEnd === undefined) return s;
    const newStart = Math.floor(lastEnd);
    return withTimes(s, hr(newStart), hr(Math.max(ms(s.endTime), newStart)));
  });
  const logs: RecordedLog[] = records.logs.map((l) => {
    if (l.attributes['event.name'] !== 'qwen-code.tool_call') return l;
    const end = toolEndById.get(String(l.attributes.call_id));
    return end === undefined ? l : { ...l, hrTime: hr(Math.floor(end) + 1) };
  });
  return { ...records, spans, logs };
}

/** A clock step: every tool span ends 5 ms before it starts. */
function clockStep(records: RecordBatch): RecordBatch {
  return {
    ...records,
    spans: records.spans.map((s) => (s.name === 'qwen-code.tool' ? withTimes(s, s.startTime, hr(ms(s.startTime) - 5)) : s)),
  };
}

const summary = (ds: readonly { promptId: string; batch: number; outcome: { decision: string; failureCount: number; resetReason?: string } }[]) =>
  ds.map((d) => [d.promptId, d.batch, d.outcome.decision, d.outcome.failureCount, d.outcome.resetReason]);

describe('replay on re-timed real captures', () => {
  it.each([
    ['acp-shadow-drain', 'tight gap', tightGap],
    ['acp-shadow-drain', 'clock step', clockStep],
    ['acp-shadow-nodrain', 'tight gap', tightGap],
    ['headless-yolo', 'tight gap', tightGap],
    ['headless-yolo', 'clock step', clockStep],
  ] as const)('%s, %s: the same decisions as the capture as recorded', async (name, _kind, retime) => {
    const records = loadFixture(name);
    const expected = await replayRecords(records, { mode: 'shadow' });
    const got = await replayRecords(retime(records), { mode: 'shadow' });
    expect(summary(got.decisions)).toEqual(summary(expected.decisions));
    expect(expected.decisions.some((d) => d.outcome.decision === 'tracked')).toBe(true);
    expect(got.unjudgedBatches.filter((u) => u.reason === 'no_terminal_records')).toEqual([]);
  });
});

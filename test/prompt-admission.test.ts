/**
 * `promptStartRequiredFromMillis` (serve --new-prompts-only): a guard that requires prompt starts
 * judges a prompt only if it saw the prompt's `qwen-code.user_prompt` stamped at or after the
 * given time, before any of the prompt's calls. Driven with a real qwen-code 0.24.4 capture.
 */
import { ROOT_CONTEXT } from '@opentelemetry/api';
import type { ReadWriteLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import type { BatchDecision } from '../src/engine/failure-types.js';
import { RepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';
import type { RecordBatch, RecordedLog } from '../src/otlp/records.js';
import { hrTimeToMillis } from '../src/profiles/wire-profile.js';
import { loadFixture } from './helpers/recorded.js';

/** acp-shadow-drain: one ACP prompt, 6 batches of 2 failing read_file calls (fixtures README). */
const IN_TREE = ['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop'];
const capture = loadFixture('acp-shadow-drain');
const isUserPrompt = (l: RecordedLog): boolean => l.attributes['event.name'] === 'qwen-code.user_prompt';
const userPrompt = capture.logs.find(isUserPrompt) as RecordedLog;
const startMillis = hrTimeToMillis(userPrompt.hrTime);
const firstToolCallMillis = Math.min(...capture.logs.filter((l) => l.attributes['event.name'] === 'qwen-code.tool_call').map((l) => hrTimeToMillis(l.hrTime)));

interface Run {
  readonly decisions: string[];
  readonly unadmitted: number;
}

/** Feed the records in event-time order (logs, span starts, span ends at equal times, as replay does). */
function run(records: RecordBatch, promptStartRequiredFromMillis: number | undefined): Run {
  const guard = new RepeatedToolFailureGuard({ mode: 'shadow', controlHookRequired: false, sweepIntervalMillis: 0, promptStartRequiredFromMillis });
  const decisions: BatchDecision[] = [];
  guard.addListener({ onDecision: (d) => decisions.push(d) });
  const events = [
    ...records.logs.map((log) => ({ t: hrTimeToMillis(log.hrTime), order: 0, log })),
    ...records.spans.map((span) => ({ t: hrTimeToMillis(span.startTime), order: 1, span })),
    ...records.spans.map((span) => ({ t: hrTimeToMillis(span.endTime), order: 2, span })),
  ].sort((a, b) => a.t - b.t || a.order - b.order);
  for (const e of events) {
    if ('log' in e) guard.logRecordProcessor.onEmit(e.log as unknown as ReadWriteLogRecord);
    else if (e.order === 1) guard.spanProcessor.onStart(e.span as unknown as Span, ROOT_CONTEXT);
    else guard.spanProcessor.onEnd(e.span as unknown as ReadableSpan);
  }
  guard.finishAll();
  const unadmitted = guard.engine.unadmittedBatches;
  void guard.shutdown();
  return { decisions: decisions.map((d) => d.outcome.decision).filter((d) => d !== 'none'), unadmitted };
}

const withLogs = (logs: RecordedLog[]): RecordBatch => ({ ...capture, logs });

describe('prompt admission (promptStartRequiredFromMillis)', () => {
  it('off (the default): every prompt is judged, with or without its start record', () => {
    expect(run(capture, undefined)).toEqual({ decisions: IN_TREE, unadmitted: 0 });
    expect(run(withLogs(capture.logs.filter((l) => !isUserPrompt(l))), undefined).decisions).toEqual(IN_TREE);
  });

  it('a prompt that starts at or after the time is judged in full', () => {
    expect(run(capture, startMillis - 60_000)).toEqual({ decisions: IN_TREE, unadmitted: 0 });
    expect(run(capture, startMillis)).toEqual({ decisions: IN_TREE, unadmitted: 0 });
  });

  it('a prompt that started before the time is never judged (all 6 batches counted as not admitted)', () => {
    expect(run(capture, startMillis + 1)).toEqual({ decisions: [], unadmitted: 6 });
  });

  it('a prompt whose start record never arrives (joined mid-prompt) is never judged', () => {
    expect(run(withLogs(capture.logs.filter((l) => !isUserPrompt(l))), startMillis - 60_000)).toEqual({ decisions: [], unadmitted: 6 });
  });

  it('a start record that arrives after one of the prompt calls admits nothing', () => {
    const late = { ...userPrompt, hrTime: [Math.floor(firstToolCallMillis / 1000), ((firstToolCallMillis % 1000) + 1) * 1_000_000] as [number, number] };
    const logs = [...capture.logs.filter((l) => !isUserPrompt(l)), late];
    expect(hrTimeToMillis(late.hrTime)).toBeGreaterThan(firstToolCallMillis);
    expect(run(withLogs(logs), startMillis - 60_000)).toEqual({ decisions: [], unadmitted: 6 });
  });

  it('a subagent or side-query prompt id on a user_prompt admits nothing (foreground ids only)', () => {
    const other = { ...userPrompt, attributes: { ...userPrompt.attributes, prompt_id: `${String(userPrompt.attributes['prompt_id']).split('#')[0]}#agent-x#1` } };
    const logs = [...capture.logs.filter((l) => !isUserPrompt(l)), other];
    expect(run(withLogs(logs), startMillis - 60_000).decisions).toEqual([]);
  });
});

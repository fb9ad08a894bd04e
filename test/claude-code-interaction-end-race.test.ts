import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { GuardMode } from '../src/core/failure/types.js';
import type { BatchDecision } from '../src/engine/failure-types.js';
import type { RecordBatch, RecordedLog } from '../src/otlp/records.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { createRepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';
import { CLAUDE_CODE_EVENTS_SCOPE, CLAUDE_CODE_PROMPT_END_GRACE_MILLIS, CLAUDE_CODE_SPAN_INTERACTION } from '../src/profiles/claude-code/claude-code-profile.js';
import { hrTimeToMillis } from '../src/profiles/wire-profile.js';
import { replayRecords } from '../src/replay/replay.js';
import { decisionLine } from '../src/report/text.js';
import { startGuardServer } from '../src/serve/guard-server.js';

/**
 * Claude Code 2.1.328 under load ends the root `claude_code.interaction` span before it logs the
 * prompt's last records: in a conformance run the blocking `PostToolBatch` `hook_execution_complete`
 * came 22 ms after the span's end, and the prompt lost its final decision. Here the real captures
 * (where those records came 11 and 17 ms before the end) are reordered so that they come 1 to 50 ms
 * after it; the decisions must be the scenario's own (the design's) in both orders, in replay, in
 * `serve` and in process.
 */
const FIXTURES = 'fixtures/claude-code-2.1.328';
const SCENARIOS = 'conformance/claude-code/scenarios';

interface Scenario {
  name: string;
  mode: GuardMode;
  expectedDecisions: Record<string, unknown>[];
}

/**
 * Which records of the prompt come after the interaction span's end: `blocking_hook`, the
 * `PostToolBatch` `hook_execution_complete` with `num_blocking` > 0 (and whatever followed it);
 * `final_batch`, every record from the final batch's first `tool_decision` on.
 */
type Late = 'blocking_hook' | 'final_batch';

const attr = (l: RecordedLog, k: string): unknown => l.attributes[k];
const millisToHr = (t: number): [number, number] => [Math.floor(t / 1000), Math.round((t % 1000) * 1e6)];

/**
 * The capture with its `late` records (Claude Code's own events) moved after the interaction span's
 * end, in their order, the first `1` ms after it and the last `lastAfterMillis` ms after it.
 */
function reordered(records: RecordBatch, late: Late, lastAfterMillis: number): RecordBatch {
  const interactions = records.spans.filter((s) => s.name === CLAUDE_CODE_SPAN_INTERACTION && s.parentSpanContext === undefined);
  expect(interactions).toHaveLength(1);
  const end = hrTimeToMillis((interactions[0] as (typeof interactions)[0]).endTime);
  const own = records.logs.filter((l) => l.instrumentationScope.name === CLAUDE_CODE_EVENTS_SCOPE).sort((a, b) => hrTimeToMillis(a.hrTime) - hrTimeToMillis(b.hrTime));
  let from: RecordedLog | undefined;
  if (late === 'blocking_hook') {
    const blocking = own.filter((l) => attr(l, 'event.name') === 'hook_execution_complete' && attr(l, 'hook_event') === 'PostToolBatch' && Number(attr(l, 'num_blocking')) > 0);
    from = blocking[blocking.length - 1];
  } else {
    const decisions = own.filter((l) => attr(l, 'event.name') === 'tool_decision');
    const lastRequest = attr(decisions[decisions.length - 1] as RecordedLog, 'request_id');
    from = decisions.find((l) => attr(l, 'request_id') === lastRequest);
  }
  expect(from).toBeDefined();
  const moved = own.slice(own.indexOf(from as RecordedLog));
  // Before: every moved record came before the span's end (the capture's own order).
  expect(moved.every((l) => hrTimeToMillis(l.hrTime) < end)).toBe(true);
  const at = new Map(moved.map((l, i) => [l, end + 1 + (moved.length === 1 ? 0 : ((lastAfterMillis - 1) * i) / (moved.length - 1))]));
  return {
    ...records,
    logs: records.logs.map((l) => {
      const t = at.get(l);
      return t === undefined ? l : { ...l, hrTime: millisToHr(t) };
    }),
  };
}

/** The decisions but `none`, numbered by prompt as the scenario files write them. */
function numbered(records: RecordBatch, decisions: readonly BatchDecision[]) {
  const promptOrder = [...new Set(records.logs.filter((l) => attr(l, 'event.name') === 'user_prompt').map((l) => String(attr(l, 'prompt.id'))))];
  return decisions
    .filter((d) => d.outcome.decision !== 'none')
    .map((d) => {
      const { promptId, guard: _guard, ...rest } = decisionLine(d);
      return { prompt: promptOrder.indexOf(promptId) + 1, ...rest };
    });
}

type Guard = ReturnType<typeof createRepeatedToolFailureGuard>;

/** Gives the guard the records in event order (logs, then span starts, then span ends at equal times), as they arrive live. */
function feedInEventOrder(guard: Guard, records: RecordBatch): void {
  const events: { t: number; order: number; seq: number; feed: () => void }[] = [];
  let seq = 0;
  for (const s of records.spans) {
    events.push({ t: hrTimeToMillis(s.startTime), order: 1, seq: seq++, feed: () => guard.spanProcessor.onStart(s as never, ROOT_CONTEXT) });
    events.push({ t: hrTimeToMillis(s.endTime), order: 2, seq: seq++, feed: () => guard.spanProcessor.onEnd(s as never) });
  }
  for (const l of records.logs) events.push({ t: hrTimeToMillis(l.hrTime), order: 0, seq: seq++, feed: () => guard.logRecordProcessor.onEmit(l as never) });
  events.sort((a, b) => a.t - b.t || a.order - b.order || a.seq - b.seq);
  for (const e of events) e.feed();
}

const rows: { capture: string; late: Late | 'none'; lastAfterMillis: number }[] = [];
for (const capture of ['bash-git-loop-enforce-hooks', 'identical-call-breaker-enforce-hooks']) {
  rows.push({ capture, late: 'none', lastAfterMillis: 0 });
  for (const late of ['blocking_hook', 'final_batch'] as const) for (const lastAfterMillis of [1, 22, 50]) rows.push({ capture, late, lastAfterMillis });
}

const load = (capture: string) => {
  const scenario = JSON.parse(readFileSync(join(SCENARIOS, `${capture}.json`), 'utf8')) as Scenario;
  const file = join(FIXTURES, `${capture}.otlp.jsonl`);
  return { scenario, records: parseTelemetryText(readFileSync(file, 'utf8'), file) };
};
const input = (capture: string, late: Late | 'none', lastAfterMillis: number) => {
  const { scenario, records } = load(capture);
  return { scenario, records: late === 'none' ? records : reordered(records, late, lastAfterMillis), expected: scenario.expectedDecisions.map((d) => ({ mode: scenario.mode, ...d })) };
};

describe('claude-code: records of a prompt logged just after its interaction span ended still belong to it', () => {
  it('the grace covers the 1-50 ms the rows move records by, and is short', () => {
    expect(CLAUDE_CODE_PROMPT_END_GRACE_MILLIS).toBeGreaterThan(50);
    expect(CLAUDE_CODE_PROMPT_END_GRACE_MILLIS).toBeLessThanOrEqual(2_000);
  });

  it.each(rows)('$capture, $late late by up to $lastAfterMillis ms: replay gives the design\'s decisions', async ({ capture, late, lastAfterMillis }) => {
    const { scenario, records, expected } = input(capture, late, lastAfterMillis);
    const r = await replayRecords(records, { mode: scenario.mode, profile: 'claude-code' });
    expect(numbered(records, r.decisions)).toEqual(expected);
    expect(r.lateRecords).toBe(0);
  });

  it.each(rows)('$capture, $late late by up to $lastAfterMillis ms: serve gives the design\'s decisions', async ({ capture, late, lastAfterMillis }) => {
    const { scenario, records, expected } = input(capture, late, lastAfterMillis);
    // A grace longer than the test: every record is held until close and released in event order.
    const server = await startGuardServer({ port: 0, graceMillis: 60_000, mode: scenario.mode, profile: 'claude-code', print: () => undefined, metricExportIntervalMillis: 60_000 });
    try {
      server.ingest(records);
    } finally {
      await server.close();
    }
    expect(numbered(records, server.decisions)).toEqual(expected);
  });

  it.each(rows)(
    '$capture, $late late by up to $lastAfterMillis ms: in process, the design\'s decisions once two sweeps passed (no flush)',
    async ({ capture, late, lastAfterMillis }) => {
      const { scenario, records, expected } = input(capture, late, lastAfterMillis);
      const guard = createRepeatedToolFailureGuard({ mode: scenario.mode, profile: 'claude-code', sweepIntervalMillis: 0, controlHookRequired: false });
      const decisions: BatchDecision[] = [];
      guard.addListener({ onDecision: (d) => decisions.push(d) });
      try {
        feedInEventOrder(guard, records);
        // Nothing follows the prompt: its end waits for the grace until the sweeps end it.
        guard.sweep();
        guard.sweep();
        expect(guard.engine.openPromptCount).toBe(0);
        expect(numbered(records, decisions)).toEqual(expected);
      } finally {
        await guard.shutdown();
      }
    },
  );
});

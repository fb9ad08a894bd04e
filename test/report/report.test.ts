import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadChartRenderer, ReportDependencyError } from '../../src/report/charts.js';
import type { ChartRenderer } from '../../src/report/charts.js';
import { renderReport } from '../../src/report/report.js';
import { replayRecords } from '../../src/replay/replay.js';
import { parseTelemetryText } from '../../src/otlp/telemetry-file.js';
import { loadFixture } from '../helpers/recorded.js';
import { failingBatches, promptIdOf, scenarioOtlpJsonLines } from '../helpers/report-scenario.js';
import type { ScenarioPrompt } from '../helpers/report-scenario.js';

/** A stand-in renderer: the charts' content is checked in the browser test. */
const stubCharts: ChartRenderer = (_option, width, height) => `<svg width="${width}" height="${height}"></svg>`;

const SESSION = '0b6f3c1e-4d8a-4f3e-9a55-2c1d7e8f9a01';
const tokens = (i: number) => [1000 * (i + 1), 100 * (i + 1)] as const;

/** 7 failing batches of 2 `read_file` calls: would_warn at batch 4 (8 failures, 4 batches), would_stop at batch 5. */
const loop: ScenarioPrompt = { sessionId: SESSION, turn: 1, batches: failingBatches(7), tokens, startMillis: 1_796_000_000_000 };
/** Two failing batches, then the same tool succeeds: a reset, never a reminder. */
const recovered: ScenarioPrompt = {
  sessionId: SESSION,
  turn: 2,
  batches: [...failingBatches(2), [{ tool: 'read_file', ok: true, args: { file_path: '/workspace/a.txt' } }]],
  tokens,
  startMillis: 1_796_000_010_000,
};

async function report(text: string, charts: ChartRenderer = stubCharts) {
  const records = parseTelemetryText(text, 'scenario.jsonl');
  const result = await replayRecords(records, { mode: 'shadow' });
  return { records, result, ...(await renderReport(records, result, { charts })) };
}

describe('what enforce would have saved', () => {
  it('sums the requests, tokens and wall time after the reminder and after the stop point', async () => {
    const { data } = await report(scenarioOtlpJsonLines([loop, recovered], { 'service.version': '0.24.4', 'deployment.environment': 'staging' }));
    // The loop makes 8 requests (0..7). Request k closes batch k. The reminder goes with request 4
    // (it closes batch 4, the would_warn); enforce stops after batch 5, so requests 5, 6, 7 are never sent.
    expect(data.savings.prompts).toHaveLength(1);
    const row = data.savings.prompts[0];
    expect(row?.promptId).toBe(promptIdOf(loop));
    expect([row?.warnBatch, row?.stopBatch]).toEqual([4, 5]);
    expect(row?.afterReminder).toMatchObject({ requests: 4, inputTokens: 5000 + 6000 + 7000 + 8000, outputTokens: 500 + 600 + 700 + 800 });
    expect(row?.afterStop).toMatchObject({ requests: 3, inputTokens: 6000 + 7000 + 8000, outputTokens: 600 + 700 + 800 });
    // Batch k's last call is logged at +10 + 100(k-1) + 45 ms (the stop point: the batch has
    // settled); the last response ends at +10 + 700 + 30 ms.
    expect(row?.afterStop.wallMillis).toBe(740 - 455);
    expect(row?.afterReminder.wallMillis).toBe(740 - 355);
    expect(data.savings.totalAfterStop).toEqual(row?.afterStop);
    expect(data.savings.usageSource).toBe('qwen-code.api_response');
  });

  it('real capture acp-shadow-drain: enforce would not have sent the 6th and 7th requests', async () => {
    const records = loadFixture('acp-shadow-drain');
    const result = await replayRecords(records);
    const { data } = await renderReport(records, result, { charts: stubCharts });
    // The fixture's fake provider answers every request with 10 input and 5 output tokens; the
    // prompt made 7 requests (6 tool rounds, then the answer); would_stop is at batch 5.
    expect(data.savings.prompts.map((p) => [p.warnBatch, p.stopBatch, p.afterReminder.requests, p.afterStop.requests])).toEqual([[4, 5, 3, 2]]);
    expect(data.savings.totalAfterStop).toMatchObject({ requests: 2, inputTokens: 20, outputTokens: 10 });
  });
});

describe('summary', () => {
  it('counts sessions, prompts, batches, decisions, reset reasons and groups by the Resource', async () => {
    const { data } = await report(scenarioOtlpJsonLines([loop, recovered], { 'service.version': '0.24.4', 'deployment.environment': 'staging' }));
    const s = data.summary;
    expect([s.sessions, s.prompts, s.batches]).toEqual([1, 2, 10]);
    expect(s.decisions).toEqual({ tracked: 5, would_warn: 1, would_stop: 1, none: 2, reset: 1 });
    expect(s.resetReasons).toEqual({ success: 1 });
    expect(s.byDeployment).toEqual([{ group: 'staging', serviceVersion: '0.24.4', prompts: 2, batches: 10, wouldWarn: 1, wouldStop: 1 }]);
    expect(s.byProfile).toEqual([{ group: 'qwen-code', serviceVersion: '-', prompts: 2, batches: 10, wouldWarn: 1, wouldStop: 1 }]);
    expect(s.invariants.every((i) => i.held)).toBe(true);
  });

  it('an unset deployment.environment is shown as (unset), a free-form one as (other)', async () => {
    const unset = await report(scenarioOtlpJsonLines([loop]));
    expect(unset.data.summary.byDeployment.map((r) => [r.group, r.serviceVersion])).toEqual([['(unset)', '0.24.4']]);
    const odd = await report(scenarioOtlpJsonLines([loop], { 'deployment.environment': 'prod /home/alice', 'service.version': '0.24.4' }));
    expect(odd.data.summary.byDeployment.map((r) => r.group)).toEqual(['(other)']);
    expect(odd.html).not.toContain('alice');
  });
});

describe('timelines', () => {
  it('bands follow the phases; failures are counted per key without the tool name', async () => {
    const { data, html } = await report(scenarioOtlpJsonLines([loop]));
    const t = data.timelines[0];
    expect(t?.bands.map((b) => b.phase)).toEqual(['idle', 'tracking', 'warned', 'latched']);
    expect(t?.keys).toEqual([{ executionErrorType: 'file_not_found', toolType: 'native' }]);
    expect(t?.batches.map((b) => b.failuresByKey)).toEqual(Array.from({ length: 7 }, () => [{ key: 0, count: 2 }]));
    expect(t?.requests).toHaveLength(8);
    expect(html).not.toContain('read_file');
  });
});

describe('the HTML page', () => {
  it('is self-contained: no script, no external resource, a restrictive CSP', async () => {
    const { html } = await report(scenarioOtlpJsonLines([loop, recovered]), await loadChartRenderer());
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(\s*['"]?https?:/i);
    expect(html.match(/(?:src|href)="(?!#)[^"]*"/g) ?? []).toEqual([]);
    expect(html).toContain("default-src 'none'");
    expect(html).toMatch(/<svg[^>]*>/);
    for (const id of ['summary', 'savings', 'timelines', 'what-if', 'privacy']) expect(html).toContain(`<section id="${id}">`);
    expect(html).toMatch(/id="saved-input-tokens">21,000</);
    expect(html).toMatch(/id="would-stop">1</);
  });

  it('without echarts installed, --report says what to install', async () => {
    await expect(loadChartRenderer('echarts-is-not-installed-here')).rejects.toThrow(ReportDependencyError);
    await expect(loadChartRenderer('echarts-is-not-installed-here')).rejects.toThrow(/npm install echarts/);
  });
});

describe('turn-2 cases render', () => {
  it.each(['t2-06-poll-identical-success', 't2-16-parallel-identical-in-one-batch'])('%s', async (name) => {
    const text = readFileSync(new URL(`../../fixtures/cases/turn2/${name}.otlp.jsonl`, import.meta.url), 'utf8');
    const { data } = await report(text);
    expect(data.summary.repetition.would_abort).toBe(1);
  });
});

describe('what the telemetry cannot show (real Claude Code 2.1.328 capture, logs only)', () => {
  it('lists the blind spots and prints the invariants it cannot check as not checkable, and passes the privacy audit', async () => {
    const text = readFileSync('fixtures/claude-code-2.1.328/interrupt-bash-shadow.otlp.jsonl', 'utf8');
    const logsOnly = text
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('{"resourceSpans"'))
      .join('\n');
    const records = parseTelemetryText(logsOnly, 'interrupt-bash-shadow.logs-only.jsonl');
    const result = await replayRecords(records, { mode: 'shadow' });
    const { data, html } = await renderReport(records, result, { charts: stubCharts, profile: result.profile });
    expect(data.profile).toBe('claude-code');
    expect(data.blindSpots.some((b) => b.includes('claude-code-hook path sees every call'))).toBe(true);
    const unchecked = data.summary.invariants.filter((i) => i.notCheckable !== undefined).map((i) => i.id);
    expect(unchecked.sort()).toEqual(['no_enforcement_after_unreliable_drain', 'no_incomplete_decisions', 'no_ineligible_counted']);
    expect(html).toContain('<span class="unchecked">not checkable</span>');
    expect(html).toContain('What this telemetry cannot show');
  });
});

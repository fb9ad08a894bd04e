/**
 * Savings and cost for every agent (issue 35, part 1): each profile's reader takes usage from its
 * agent's own telemetry, and the report sums it per prompt, per agent, per deployment.environment
 * and in total. Expected figures are read from the captures' raw records here, independently of the
 * readers (the real clients wrote them).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChartRenderer } from '../../src/report/charts.js';
import { renderReportFromParts } from '../../src/report/report.js';
import { parsePriceTable, PriceTableError, requestCost } from '../../src/report/prices.js';
import { parseReplayInput } from '../../src/replay/replay-input.js';
import type { TelemetrySource } from '../../src/replay/replay-input.js';
import { replayRecords } from '../../src/replay/replay.js';
import { GeminiCliReportInputsCollector } from '../../src/profiles/gemini-cli/report-inputs.js';
import { GenAiReportInputsCollector } from '../../src/profiles/genai/report-inputs.js';

const stubCharts: ChartRenderer = (_o, w, h) => `<svg width="${w}" height="${h}"></svg>`;
const FIXTURES = new URL('../../fixtures/', import.meta.url);
const QWEN = 'qwen-code-0.24.4/acp-shadow-drain.outfile.json';
const CLAUDE = 'claude-code-2.1.328/bash-git-loop-shadow.otlp.jsonl';
const GENAI = 'genai/pydantic-ai-2.68.0/failure-loop.v2.otlp.jsonl';

const source = (rel: string): TelemetrySource => ({ text: readFileSync(new URL(rel, FIXTURES)), file: rel });

/** Every OTLP attribute list in an OTLP JSON lines file whose `event.name` is `name`, as plain objects. */
function otlpEvents(rel: string, name: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const value = (v: Record<string, unknown>): unknown => v.stringValue ?? (v.intValue === undefined ? v.doubleValue : Number(v.intValue));
  const walk = (o: unknown): void => {
    if (Array.isArray(o)) o.forEach(walk);
    else if (o !== null && typeof o === 'object') {
      const attrs = (o as { attributes?: unknown }).attributes;
      if (Array.isArray(attrs) && (o as { timeUnixNano?: unknown }).timeUnixNano !== undefined) {
        const a = Object.fromEntries(attrs.map((x: { key: string; value: Record<string, unknown> }) => [x.key, value(x.value)]));
        if (a['event.name'] === name) out.push(a);
      }
      Object.values(o).forEach(walk);
    }
  };
  for (const line of readFileSync(new URL(rel, FIXTURES), 'utf8').split('\n')) if (line.trim() !== '') walk(JSON.parse(line));
  return out;
}

async function mixedReport(files: readonly string[], prices?: unknown) {
  const sources = files.map(source);
  const records = parseReplayInput(sources, { reportInputs: true });
  const result = await replayRecords(records);
  return renderReportFromParts(result, records.whole.reportInputs!, records.whole.identifiers, { charts: stubCharts, ...(prices === undefined ? {} : { prices: parsePriceTable(prices) }) });
}

describe('usage from each agent’s own telemetry', () => {
  it('Claude Code: api_request tokens, cache tokens and the stated cost_usd, every request of the prompt', async () => {
    const { data } = await mixedReport([CLAUDE]);
    const requests = otlpEvents(CLAUDE, 'api_request');
    expect(requests.length).toBeGreaterThan(2);
    const row = data.savings.byAgent.find((r) => r.group === 'claude-code');
    expect(row?.stopped).toBe(1);
    // After the reminder: the requests that ended after the would_warn batch settled, read from the raw capture.
    const after = row!.afterReminder;
    expect(after.requests).toBeGreaterThan(0);
    expect(after.uncostedRequests).toBe(0);
    expect(after.pricedRequests).toBe(0);
    const lastN = requests.slice(-after.requests);
    expect(after.inputTokens).toBe(lastN.reduce((s, a) => s + (a.input_tokens as number), 0));
    expect(after.outputTokens).toBe(lastN.reduce((s, a) => s + (a.output_tokens as number), 0));
    expect(after.costUsd).toBeCloseTo(lastN.reduce((s, a) => s + (a.cost_usd as number), 0), 9);
    expect(row!.afterStop.costUsd).toBeGreaterThan(0);
    expect(data.savings.usageSources).toEqual([{ agent: 'claude-code', source: 'claude_code.api_request' }]);
  });

  it('a mixed qwen-code + Claude Code + GenAI input shows savings for each agent, and their sum as the total', async () => {
    const { data, html } = await mixedReport([QWEN, CLAUDE, GENAI]);
    const agents = data.savings.byAgent.map((r) => r.group);
    expect(agents).toEqual(['claude-code', 'genai', 'qwen-code']);
    for (const r of data.savings.byAgent) {
      expect(r.stopped, r.group).toBeGreaterThan(0);
      expect(r.afterStop.requests, r.group).toBeGreaterThan(0);
      expect(r.afterStop.inputTokens + r.afterStop.outputTokens, r.group).toBeGreaterThan(0);
    }
    const sum = (k: 'requests' | 'inputTokens' | 'outputTokens') => data.savings.byAgent.reduce((s, r) => s + r.afterStop[k], 0);
    expect(data.savings.totalAfterStop.requests).toBe(sum('requests'));
    expect(data.savings.totalAfterStop.inputTokens).toBe(sum('inputTokens'));
    expect(data.savings.totalAfterStop.outputTokens).toBe(sum('outputTokens'));
    // Money only where stated: Claude Code's is known, the others' are not (no price table).
    const claude = data.savings.byAgent.find((r) => r.group === 'claude-code')!;
    const qwen = data.savings.byAgent.find((r) => r.group === 'qwen-code')!;
    expect(claude.afterStop.uncostedRequests).toBe(0);
    expect(qwen.afterStop.uncostedRequests).toBe(qwen.afterStop.requests);
    expect(qwen.afterStop.costUsd).toBe(0);
    expect(html).toContain('id="savings-by-agent"');
    expect(data.savings.agentsWithoutUsage).toEqual([]);
  });

  it('money from a user-passed price table, only for the models it names; stated costs win', async () => {
    const prices = { models: { 'fake-model': { input: 2, output: 10 }, 'claude-sonnet-4-5': { input: 1000, output: 1000 } } };
    const { data } = await mixedReport([QWEN, CLAUDE, GENAI], prices);
    const qwen = data.savings.byAgent.find((r) => r.group === 'qwen-code')!.afterStop;
    expect(qwen.pricedRequests).toBe(qwen.requests);
    expect(qwen.costUsd).toBeCloseTo((qwen.inputTokens * 2 + qwen.outputTokens * 10) / 1e6, 12);
    const claude = data.savings.byAgent.find((r) => r.group === 'claude-code')!.afterStop;
    expect(claude.pricedRequests).toBe(0);
    expect(claude.costUsd).toBeLessThan(0.01);
    // pydantic-ai's model is not in the table: not known.
    const genai = data.savings.byAgent.find((r) => r.group === 'genai')!.afterStop;
    expect(genai.uncostedRequests).toBe(genai.requests);
  });

  it.each([
    ['not an object', [], /JSON object/],
    ['no models', {}, /"models"/],
    ['missing output', { models: { m: { input: 1 } } }, /"output"/],
    ['negative', { models: { m: { input: -1, output: 1 } } }, /"input"/],
    ['unknown field', { models: { m: { input: 1, output: 1, perCall: 3 } } }, /unknown price field/],
  ])('a price table that is %s is refused', (_name, value, message) => {
    expect(() => parsePriceTable(value)).toThrow(PriceTableError);
    expect(() => parsePriceTable(value)).toThrow(message);
  });

  it('cached input tokens are priced once at the cache price (included in qwen-code’s input count, not in Claude Code’s)', () => {
    const table = parsePriceTable({ models: { m: { input: 10, output: 0, cacheRead: 1 } } });
    const u = { promptId: 'p', startMillis: 0, endMillis: 1, inputTokens: 1000, outputTokens: 0, costUsd: undefined, cacheReadTokens: 400, model: 'm' };
    expect(requestCost(u, 'qwen-code', table)?.usd).toBeCloseTo((600 * 10 + 400 * 1) / 1e6, 12);
    expect(requestCost(u, 'claude-code', table)?.usd).toBeCloseTo((1000 * 10 + 400 * 1) / 1e6, 12);
    expect(requestCost({ ...u, model: 'other' }, 'qwen-code', table)).toBeUndefined();
    expect(requestCost({ ...u, costUsd: 0.5 }, 'qwen-code', table)).toEqual({ usd: 0.5, source: 'stated' });
  });

  it('gemini-cli: gemini_cli.api_response token counts, prompts named as the profile names them', () => {
    const c = new GeminiCliReportInputsCollector();
    const log = (t: number, a: Record<string, unknown>) => c.addLog({ hrTime: [t, 0], attributes: a });
    log(10, { 'event.name': 'gemini_cli.user_prompt', prompt_id: 'p1', 'session.id': 's' });
    log(12, { 'event.name': 'gemini_cli.api_response', prompt_id: 'p1', input_token_count: 100, output_token_count: '7', cached_content_token_count: 30, duration_ms: 1000, model: 'gemini-2.5-pro' });
    // The same prompt_id again: the profile's second prompt `p1/2`.
    log(20, { 'event.name': 'gemini_cli.user_prompt', prompt_id: 'p1', 'session.id': 's' });
    log(21, { 'event.name': 'gemini_cli.api_response', prompt_id: 'p1', input_token_count: 5, output_token_count: 1, duration_ms: 0 });
    const inputs = c.finish();
    expect(inputs.usageSource).toBe('gemini_cli.api_response');
    expect(inputs.usage.map((u) => [u.promptId, u.startMillis, u.inputTokens, u.outputTokens, u.cacheReadTokens])).toEqual([
      ['p1', 11_000, 100, 7, 30],
      ['p1/2', 21_000, 5, 1, undefined],
    ]);
    expect(inputs.prompts.map((p) => p.promptId)).toEqual(['p1', 'p1/2']);
  });

  it('GenAI: model-call spans’ gen_ai.usage.* go to the top-level invoke_agent run of their trace', () => {
    const c = new GenAiReportInputsCollector();
    const span = (name: string, spanId: string, parent: string | undefined, t0: number, t1: number, attributes: Record<string, unknown>) =>
      c.addSpan({ name, attributes, startTime: [t0, 0], endTime: [t1, 0], spanContext: () => ({ traceId: 't1', spanId }), parentSpanContext: parent === undefined ? undefined : { spanId: parent } });
    span('chat m', 'c1', 'a1', 2, 3, { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': '56', 'gen_ai.usage.output_tokens': 9, 'gen_ai.usage.cache_read.input_tokens': 4 });
    span('invoke_agent sub', 'a2', 't', 4, 5, { 'gen_ai.operation.name': 'invoke_agent' });
    span('chat m', 'c2', 'a2', 4, 5, { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 1 });
    span('invoke_agent a', 'a1', 'root', 1, 9, { 'gen_ai.operation.name': 'invoke_agent' });
    span('request', 'root', undefined, 0, 10, {});
    const inputs = c.finish();
    expect(inputs.usage.map((u) => [u.promptId, u.inputTokens, u.outputTokens, u.cacheReadTokens])).toEqual([
      ['t1:a1', 56, 9, 4],
      ['t1:a1', 10, 1, undefined],
    ]);
    expect(inputs.prompts.map((p) => p.promptId)).toEqual(['t1:a1']);
  });
});

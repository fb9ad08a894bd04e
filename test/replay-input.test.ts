/**
 * The CLI's reading of telemetry (`parseReplayInput`: records projected to what the profile reads)
 * against the whole records (`parseTelemetryText`): every real capture must replay to the same
 * result, with the same facts of the whole input, for every profile.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RecordedSpan } from '../src/otlp/records.js';
import type { RecordBatch } from '../src/otlp/records.js';
import { parseTelemetryText, TelemetryParseError } from '../src/otlp/telemetry-file.js';
import { WIRE_PROFILES } from '../src/profiles/registry.js';
import type { WireProfileDefinition, WireProfileName } from '../src/profiles/registry.js';
import { mergeReportInputs, readReportInputs } from '../src/profiles/report-inputs.js';
import { hrTimeToMillis } from '../src/profiles/wire-profile.js';
import { inputIdentifiers } from '../src/replay/audit.js';
import { parseReplayInput } from '../src/replay/replay-input.js';
import type { ReplayInputOptions, TelemetrySource } from '../src/replay/replay-input.js';
import { replayRecords } from '../src/replay/replay.js';
import type { ReplayOptions } from '../src/replay/replay.js';
import { captures, loadFixture, toOtlpJsonLines } from './helpers/recorded.js';

const PROFILES = Object.keys(WIRE_PROFILES) as WireProfileName[];

function whole(sources: readonly TelemetrySource[]): RecordBatch {
  const records: RecordBatch = { spans: [], logs: [], metricCount: 0, ignoredCount: 0 };
  for (const s of sources) parseTelemetryText(s.text, s.file, records);
  return records;
}

/** Replay both ways and expect the same result and the same whole-input facts. */
async function expectSameReplay(sources: readonly TelemetrySource[], options: ReplayInputOptions & ReplayOptions = {}): Promise<void> {
  const all = whole(sources);
  const projected = parseReplayInput(sources, { ...options, reportInputs: true });
  const expected = await replayRecords(all, options);
  const actual = await replayRecords(projected, options);
  expect(actual).toEqual(expected);
  expect(projected.whole.profile).toBe(expected.profile);
  expect(projected.whole.identifiers).toEqual(inputIdentifiers(all));
  // Every agent's report inputs, each prompt tagged with its agent (one producer per capture).
  const readers = (expected.profiles.length === 0 ? [expected.profile] : expected.profiles).flatMap((p) => {
    const reader = (WIRE_PROFILES as Readonly<Record<string, WireProfileDefinition>>)[p]?.readReportInputs;
    return reader === undefined ? [] : [{ agent: p, inputs: readReportInputs(reader, all) }];
  });
  expect(projected.whole.reportInputs).toEqual(mergeReportInputs(readers));
  expect(projected.metricCount).toBe(all.metricCount);
  expect(projected.ignoredCount).toBe(all.ignoredCount);
  // What is kept is never more than the input.
  expect(projected.spans.length).toBeLessThanOrEqual(all.spans.length);
  expect(projected.logs.length).toBeLessThanOrEqual(all.logs.length);
}

describe('parseReplayInput: every real capture replays as its whole records do', () => {
  const files = captures();

  it('finds the captures', () => {
    expect(files.filter((f) => f.name.endsWith('.outfile.json')).length).toBeGreaterThanOrEqual(4);
    expect(files.filter((f) => f.name.includes('claude-code')).length).toBeGreaterThanOrEqual(10);
    expect(files.filter((f) => f.name.includes('genai')).length).toBeGreaterThanOrEqual(10);
  });

  it.each(files.map((f) => [f.name, f.path] as const))('%s, profile auto and each profile, each mode source', async (_name, path) => {
    const sources = [{ text: readFileSync(path, 'utf8'), file: path }];
    await expectSameReplay(sources);
    await expectSameReplay(sources, { mode: 'shadow' });
    for (const profile of PROFILES) await expectSameReplay(sources, { profile });
  });

  it('the qwen-code captures keep much less than they hold, and the decisions and in-tree events are there', async () => {
    const sources = [{ text: readFileSync(new URL('../fixtures/qwen-code-0.24.4/acp-shadow-drain.outfile.json', import.meta.url), 'utf8'), file: 'f' }];
    const projected = parseReplayInput(sources);
    const all = whole(sources);
    expect(projected.whole.profile).toBe('qwen-code');
    expect(projected.whole.spanCount).toBe(all.spans.length);
    expect(projected.whole.logCount).toBe(all.logs.length);
    // No POST spans, no request text, no log bodies.
    expect(projected.spans.some((s) => s.name === 'POST')).toBe(false);
    expect(projected.logs.some((l) => 'request_text' in l.attributes || l.body !== undefined)).toBe(false);
    expect(projected.spans.length + projected.logs.length).toBeLessThan(all.spans.length + all.logs.length);
    const r = await replayRecords(projected);
    expect(r.decisions.map((d) => d.outcome.decision)).toEqual(['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop', 'none']);
    expect(r.inTree.length).toBeGreaterThan(0);
  });

  it('several files replay as one input', async () => {
    const read = (n: string) => ({ text: readFileSync(new URL(`../fixtures/qwen-code-0.24.4/${n}.outfile.json`, import.meta.url), 'utf8'), file: n });
    await expectSameReplay([read('acp-enforce'), read('acp-shadow-drain'), read('headless-yolo')]);
  });
});

describe('parseReplayInput: exactness where the projection could differ', () => {
  it('a record the profile does not read still advances the clock: an idle prompt is evicted at its time', async () => {
    const records = loadFixture('acp-shadow-drain');
    const exec = records.spans.find((s) => s.name === 'qwen-code.tool.execution' && s.attributes['tool.call_id'] === 'call_r3_0');
    const cut = hrTimeToMillis(exec?.endTime);
    const truncated: RecordBatch = {
      spans: records.spans.filter((s) => hrTimeToMillis(s.endTime) <= cut),
      logs: records.logs.filter((l) => hrTimeToMillis(l.hrTime) <= cut),
      metricCount: 0,
      ignoredCount: 0,
    };
    // 3 hours later (idle limit 2 h): an HTTP span, which no profile reads.
    const later: [number, number] = [Math.floor(cut / 1000) + 3 * 3600, 0];
    truncated.spans.push(
      new RecordedSpan({
        name: 'POST',
        attributes: { 'http.request.method': 'POST' },
        spanContext: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 },
        parentSpanContext: undefined,
        startTime: later,
        endTime: later,
        scopeName: '@opentelemetry/instrumentation-undici',
      }),
    );
    const sources = [{ text: toOtlpJsonLines(truncated), file: 'lines' }];
    const projected = parseReplayInput(sources);
    expect(projected.spans.some((s) => s.name === 'POST')).toBe(false);
    expect(projected.whole.clockTicks).toContain(hrTimeToMillis(later));
    const r = await replayRecords(projected);
    expect(r.evictions.map((e) => e.reason)).toContain('idle');
    await expectSameReplay(sources);
  });

  it('records that first look like qwen-code but as a whole like batch-span are read again for batch-span', async () => {
    const text = readFileSync(new URL('../fixtures/qwen-code-0.24.4/acp-shadow-drain.outfile.json', import.meta.url), 'utf8');
    const t = Number(/"_hrTime": \[\s+(\d+)/.exec(text)?.[1]);
    const batchSpan = JSON.stringify(
      {
        name: 'runToolCalls',
        _spanContext: { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1 },
        attributes: { 'qwen-code.prompt_id': 'p1' },
        startTime: [t, 0],
        endTime: [t, 5],
        instrumentationScope: { name: 'qwen-code' },
        // The same producer as the capture's records (routing is per Resource).
        resource: { _rawAttributes: [['service.name', 'qwen-code'], ['service.version', '0.24.4']] },
      },
      null,
      2,
    );
    const sources = [{ text: `${text}${batchSpan}\n`, file: 'mixed' }];
    const projected = parseReplayInput(sources);
    expect(projected.whole.profile).toBe('batch-span');
    expect(projected.whole.detectedProfiles[0]).toBe('batch-span');
    await expectSameReplay(sources);
  });

  it('replayRecords refuses records projected for another profile', async () => {
    const sources = [{ text: readFileSync(new URL('../fixtures/qwen-code-0.24.4/acp-enforce.outfile.json', import.meta.url), 'utf8'), file: 'f' }];
    const projected = parseReplayInput(sources, { profile: 'qwen-code' });
    await expect(replayRecords(projected, { profile: 'claude-code' })).rejects.toThrow(/projected for profile qwen-code/);
    const forClaude = parseReplayInput(sources, { profile: 'claude-code' });
    await expect(replayRecords(forClaude)).rejects.toThrow(/projected for profile claude-code, not qwen-code/);
  });

  it('malformed JSON is reported with the same position and message as parseTelemetryText', () => {
    const text = readFileSync(new URL('../fixtures/qwen-code-0.24.4/acp-enforce.outfile.json', import.meta.url), 'utf8');
    const at = text.indexOf('"_spanProcessor"', text.length / 2);
    const cases = [
      `${text.slice(0, at)}"_spanProcessor": {,${text.slice(at + '"_spanProcessor": {'.length)}`, // inside a member replay never reads
      `${text}\n{\n  "name": "x",\n  "attributes": {"a": tru}\n}\n`,
      `${text}\nnot json\n`,
      `${text}\n{\n  "name": "x"\n`,
      '',
      '{"resourceSpans": [}\n',
    ];
    for (const bad of cases) {
      let expected: unknown;
      try {
        parseTelemetryText(bad, 'bad.json');
      } catch (err) {
        expected = err;
      }
      expect(expected).toBeInstanceOf(TelemetryParseError);
      expect(() => parseReplayInput([{ text: bad, file: 'bad.json' }])).toThrow((expected as Error).message);
      expect((expected as Error).message).toMatch(/^bad\.json:\d+:\d+: /);
    }
  });

  it.each([
    ['a Claude Code hook input log', 'claude-code-2.1.328/bash-git-loop-shadow.hooks.jsonl'],
    ['a Codex session transcript', 'codex-0.169.0/identical-call-breaker-enforce-hooks.transcript.jsonl'],
  ])('%s (JSON, but no telemetry) is refused with the formats replay reads', (_name, fixture) => {
    const text = readFileSync(new URL(`../fixtures/${fixture}`, import.meta.url), 'utf8');
    expect(() => parseTelemetryText(text, 'input.jsonl')).toThrow(TelemetryParseError);
    expect(() => parseTelemetryText(text, 'input.jsonl')).toThrow(
      /^input\.jsonl:1:1: no spans, log records or OTLP requests found \(expected OTLP JSON lines, as a Collector's file exporter writes them, or a qwen-code or gemini-cli telemetry outfile\)$/,
    );
  });
});

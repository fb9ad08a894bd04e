import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { replayRecords } from '../../src/replay/replay.js';
import { parseTelemetryText } from '../../src/otlp/telemetry-file.js';
import { renderReport } from '../../src/report/report.js';
import type { ReportData } from '../../src/report/report-data.js';
import { failingBatches, scenarioOtlpJsonLines } from '../helpers/report-scenario.js';
import type { ScenarioCall, ScenarioPrompt } from '../helpers/report-scenario.js';

const SESSION = '5e0c4a7d-1b2c-4d3e-8f90-a1b2c3d4e5f6';
const tokens = (i: number) => [1000 * (i + 1), 100 * (i + 1)] as const;
const prompt = (turn: number, batches: ScenarioCall[][]): ScenarioPrompt => ({ sessionId: SESSION, turn, batches, tokens, startMillis: 1_796_000_000_000 + turn * 10_000 });
const ok = (tool: string): ScenarioCall => ({ tool, ok: true, args: { n: Math.random() } });

async function dataOf(text: string): Promise<ReportData> {
  const records = parseTelemetryText(text, 'x.jsonl');
  const result = await replayRecords(records, { mode: 'shadow' });
  return (await renderReport(records, result, { charts: () => '<svg></svg>' })).data;
}

const row = (d: ReportData, id: string) => {
  const r = [...d.whatIf.failure, ...d.whatIf.breaker].find((x) => x.id === id);
  if (r === undefined) throw new Error(`no row ${id}`);
  return r;
};

describe('failure guard what-if (2 failing read_file calls per batch, 7 batches)', () => {
  const loop = prompt(1, failingBatches(7));

  it('the grid covers thresholds 4-16 x 1-3 batches; the default row is the design and matches the replay', async () => {
    const d = await dataOf(scenarioOtlpJsonLines([loop]));
    const grid = d.whatIf.failure.filter((r) => r.variant === undefined);
    expect(grid.map((r) => r.id)).toEqual([4, 6, 8, 10, 12, 16].flatMap((f) => [1, 2, 3].map((b) => `threshold-${f}x${b}`)));
    expect(grid.filter((r) => r.isDefault).map((r) => r.id)).toEqual(['threshold-8x2']);
    const def = row(d, 'threshold-8x2');
    expect([def.reminded, def.stopped]).toEqual([d.summary.decisions.would_warn, d.summary.decisions.would_stop]);
    // Stop after batch 5: requests 5, 6, 7 are saved.
    expect(def.saved).toMatchObject({ requests: 3, inputTokens: 21_000, outputTokens: 2_100 });
  });

  it.each([
    // [failures, batches] -> reminder batch, stop batch (2 failures a batch): warn when both thresholds are met.
    { f: 4, b: 1, stopBatch: 3 },
    { f: 4, b: 3, stopBatch: 4 },
    { f: 6, b: 2, stopBatch: 4 },
    { f: 12, b: 2, stopBatch: 7 },
    { f: 16, b: 1, stopBatch: undefined },
  ])('threshold $f x $b stops at batch $stopBatch', async ({ f, b, stopBatch }) => {
    const d = await dataOf(scenarioOtlpJsonLines([loop]));
    const r = row(d, `threshold-${f}x${b}`);
    expect(r.stopped).toBe(stopBatch === undefined ? 0 : 1);
    // Requests stopBatch..7 would not be sent.
    const saved = stopBatch === undefined ? 0 : 8 - stopBatch;
    expect(r.saved.requests).toBe(saved);
  });

  it('false-positive proxy: the candidate tool succeeds later in the prompt', async () => {
    const d = await dataOf(scenarioOtlpJsonLines([prompt(2, [...failingBatches(5), [ok('read_file')]])]));
    expect(row(d, 'threshold-8x2')).toMatchObject({ reminded: 1, stopped: 1, recoveredAfterReminder: 1 });
    expect(row(d, 'threshold-16x2')).toMatchObject({ reminded: 0, recoveredAfterReminder: 0 });
  });

  it('variant: a file-changing success of another tool resets the candidate', async () => {
    const f = failingBatches(6);
    const d = await dataOf(scenarioOtlpJsonLines([prompt(3, [f[0]!, f[1]!, [ok('edit')], f[2]!, f[3]!, f[4]!, f[5]!])]));
    // Default: the edit success (another tool) neither advances nor resets: warn at batch 5, stop at 6.
    expect(row(d, 'threshold-8x2')).toMatchObject({ reminded: 1, stopped: 1 });
    // Variant: the edit resets; batches 4..7 make a new streak: warn at batch 7, no stop.
    expect(row(d, 'file_change_resets')).toMatchObject({ reminded: 1, stopped: 0 });
    // A read-only success of another tool does not reset under the variant.
    const d2 = await dataOf(scenarioOtlpJsonLines([prompt(4, [f[0]!, f[1]!, [ok('list_directory')], f[2]!, f[3]!, f[4]!, f[5]!])]));
    expect(row(d2, 'file_change_resets')).toMatchObject({ reminded: 1, stopped: 1 });
  });
});

const TURN2 = new URL('../../fixtures/cases/turn2/', import.meta.url);
const turn2 = (name: string): string => readFileSync(new URL(`${name}.otlp.jsonl`, TURN2), 'utf8');

/** t2-06 with each poll's result recorded on its `qwen-code.tool` span (as with sensitive span attributes on). */
function withPollResults(text: string): string {
  let k = 0;
  return text
    .split('\n')
    .map((line) => {
      if (!line.includes('resourceSpans')) return line;
      const o = JSON.parse(line) as { resourceSpans: { scopeSpans: { spans: { name: string; attributes: { key: string; value: unknown }[] }[] }[] }[] };
      for (const rs of o.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) if (s.name === 'qwen-code.tool') s.attributes.push({ key: 'gen_ai.tool.call.result', value: { stringValue: `build progress ${k++ * 10}%` } });
      return JSON.stringify(o);
    })
    .join('\n');
}

describe('identical-call breaker what-if on the labelled turn-2 cases', () => {
  it('t2-16 (5 identical calls in one model response): warned and aborted by default; counted once, nothing', async () => {
    const d = await dataOf(turn2('t2-16-parallel-identical-in-one-batch'));
    expect(row(d, 'breaker-3x5')).toMatchObject({ reminded: 1, stopped: 1, isDefault: true });
    expect(row(d, 'batch_counts_once')).toMatchObject({ reminded: 0, stopped: 0 });
    // The model moved on (3 different queries) after the identical run: the proxy flags it.
    expect(row(d, 'breaker-3x5')).toMatchObject({ movedOnAfterWarn: 1 });
  });

  it('t2-06 (8 identical successful polls): aborted by default; the polling variant needs recorded results', async () => {
    const plain = await dataOf(turn2('t2-06-poll-identical-success'));
    expect(row(plain, 'breaker-3x5')).toMatchObject({ reminded: 1, stopped: 1 });
    expect(row(plain, 'breaker-3x10')).toMatchObject({ reminded: 1, stopped: 0 });
    // The capture records no result (only a constant content_length): the variant cannot tell a poll.
    expect(row(plain, 'polling_ignored')).toMatchObject({ reminded: 1, stopped: 1 });
    const withResults = await dataOf(withPollResults(turn2('t2-06-poll-identical-success')));
    expect(row(withResults, 'polling_ignored')).toMatchObject({ reminded: 0, stopped: 0 });
    expect(row(withResults, 'breaker-3x5')).toMatchObject({ reminded: 1, stopped: 1 });
  });
});

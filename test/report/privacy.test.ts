import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { inputIdentifiers, sensitiveInputStrings } from '../../src/replay/audit.js';
import { emptyRecordBatch } from '../../src/otlp/records.js';
import { replayRecords } from '../../src/replay/replay.js';
import { parseTelemetryText } from '../../src/otlp/telemetry-file.js';
import { auditReportData } from '../../src/report/audit.js';
import { loadChartRenderer } from '../../src/report/charts.js';
import { renderReport } from '../../src/report/report.js';
import type { ReportData } from '../../src/report/report-data.js';
import { failingBatches, scenarioOtlpJsonLines } from '../helpers/report-scenario.js';

/** Planted in arguments, paths and error texts of the turn-2 cases (their README). */
const CANARY = 'do-not-leak-4412';
const TURN2 = new URL('../../fixtures/cases/turn2/', import.meta.url);

function turn2Records() {
  const records = emptyRecordBatch();
  for (const name of ['t2-02-mcp-identical-85', 't2-06-poll-identical-success', 't2-16-parallel-identical-in-one-batch', 't2-19-otel-ms-start-ns-end-tight-gap']) {
    parseTelemetryText(readFileSync(new URL(`${name}.otlp.jsonl`, TURN2), 'utf8'), name, records);
  }
  // A loop whose arguments, paths and error texts carry the canary too.
  const scenario = scenarioOtlpJsonLines([{ sessionId: 'a1b2c3d4-0000-4000-8000-000000000001', turn: 1, batches: failingBatches(6, 2, `${CANARY}/`), tokens: () => [100, 10], startMillis: 1_796_100_000_000 }]);
  return parseTelemetryText(scenario, 'scenario', records);
}

describe('the report holds only what guard telemetry may hold', () => {
  it('no canary, argument, path or error text from the input reaches the page', async () => {
    const records = turn2Records();
    expect(JSON.stringify(records.logs)).toContain(CANARY);
    const result = await replayRecords(records, { mode: 'shadow' });
    const { html, data } = await renderReport(records, result, { charts: await loadChartRenderer() });
    expect(data.summary.decisions.would_stop).toBeGreaterThan(0);
    expect(html).not.toContain(CANARY);
    // ACP execution spans put a fixed label in `error` (tool_error, tool_timeout, ...), which is a
    // substring of error types such as mcp_tool_error: only free text counts as a secret here.
    const secrets = [...sensitiveInputStrings(records)].filter((s) => !/^[a-z][a-z0-9_]*$/.test(s));
    expect(secrets.length).toBeGreaterThan(10);
    expect(secrets.filter((s) => html.includes(s))).toEqual([]);
    // Tool names are not guard telemetry either (the failure key stays private).
    for (const tool of ['read_file', 'run_shell_command', 'mcp__prom__execute_promql']) expect(html).not.toContain(tool);
  });

  it('the structural audit passes on real data and catches a planted value', async () => {
    const records = turn2Records();
    const result = await replayRecords(records, { mode: 'shadow' });
    const { data } = await renderReport(records, result, { charts: () => '<svg></svg>' });
    const ids = inputIdentifiers(records);
    const descriptions = new Set(data.summary.invariants.map((i) => i.description));
    expect(auditReportData(data, ids, descriptions)).toEqual([]);

    const t0 = data.timelines[0];
    if (t0 === undefined) throw new Error('no timeline');
    const planted: ReportData[] = [
      { ...data, timelines: [{ ...t0, promptId: `/workspace/${CANARY}` }] },
      { ...data, timelines: [{ ...t0, keys: [{ executionErrorType: `File not found: ${CANARY}`, toolType: 'native' }] }] },
      { ...data, summary: { ...data.summary, resetReasons: { [CANARY]: 1 } } },
      { ...data, extra: CANARY } as ReportData,
    ];
    for (const p of planted) {
      const problems = auditReportData(p, ids, descriptions);
      expect(problems.length).toBeGreaterThan(0);
      expect(problems.join('\n')).not.toContain(CANARY);
    }
  });
});

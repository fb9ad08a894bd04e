import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditInvariants, inputIdentifiers, sensitiveInputStrings } from '../src/replay/audit.js';
import { replayRecords } from '../src/replay/replay.js';
import { emptyRecordBatch } from '../src/otlp/records.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { byPrompt } from './helpers/expected-decisions.js';
import type { ExpectedPrompt } from './helpers/expected-decisions.js';
import { startGuardServer } from '../src/serve/guard-server.js';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { loadFixture, toReadableLog, toReadableSpan } from './helpers/recorded.js';

function exportAll<T>(exporter: { export(items: T[], cb: (r: ExportResult) => void): void }, items: T[]): Promise<void> {
  return new Promise((resolve, reject) => {
    exporter.export(items, (r) => (r.code === ExportResultCode.SUCCESS ? resolve() : reject(r.error ?? new Error('export failed'))));
  });
}

/**
 * Replays the captures recorded from the real pydantic-ai and Strands Agents runs
 * (conformance/genai, fixtures/genai/<framework>-<version>/<scenario>.<generation>.otlp.jsonl) and
 * checks the decisions the design requires (conformance/genai/expected.json, the same table the
 * live conformance run checks).
 */
const expected = JSON.parse(readFileSync(join('conformance', 'genai', 'expected.json'), 'utf8')) as Record<string, { prompts: ExpectedPrompt[]; untyped?: { prompts: ExpectedPrompt[] } }>;

/**
 * Frameworks whose failed tool calls carry no type (conformance/genai/frameworks.mjs `failures:
 * 'untyped'`): Google ADK 2.13.0's retried failures (`adk.experimental.response.source=
 * on_tool_error_callback`, no status, no type) follow expected.json's `untyped` variants.
 */
const UNTYPED_FRAMEWORKS = new Set(['google-adk-2.13.0']);

const root = join('fixtures', 'genai');
const captures = readdirSync(root).flatMap((dir) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.otlp.jsonl'))
    .map((file) => ({ framework: dir, file, scenario: file.split('.')[0] as string, path: join(root, dir, file) })),
);

describe('replay of the recorded GenAI captures (pydantic-ai 2.68.0, Strands Agents 1.62.0, Google ADK 2.13.0)', () => {
  it('holds every framework, both semantic-convention generations of pydantic-ai and Strands, every scenario', () => {
    expect(new Set(captures.map((c) => c.framework))).toEqual(new Set(['pydantic-ai-2.68.0', 'strands-agents-1.62.0', 'google-adk-2.13.0']));
    expect(captures.filter((c) => c.framework.startsWith('pydantic-ai')).map((c) => c.file.split('.')[1])).toContain('v2');
    expect(captures.filter((c) => c.framework.startsWith('strands')).map((c) => c.file.split('.')[1])).toContain('latest');
    expect(captures.length).toBe(18 + 7);
  });

  it.each(captures)('$framework $file: auto-detected as genai, the design\'s decisions, invariants held', async ({ framework, scenario, path }) => {
    const records = parseTelemetryText(readFileSync(path, 'utf8'), path, emptyRecordBatch());
    const r = await replayRecords(records);
    expect(r.profile).toBe('genai');
    const want = (UNTYPED_FRAMEWORKS.has(framework) ? expected[scenario]?.untyped?.prompts : undefined) ?? expected[scenario]?.prompts;
    expect(want).toBeDefined();
    const got = byPrompt(r.decisions);
    expect(got.map((p) => ({ batches: p.batches, decisions: p.decisions }))).toEqual(want?.map((p) => ({ batches: p.batches, decisions: p.decisions })));
    want?.forEach((p, i) => {
      if (p.calls !== undefined) expect(got[i]?.calls).toEqual(p.calls);
    });
    expect(r.decisions.every((d) => d.route === 'agent_run')).toBe(true);
    const invariants = auditInvariants(r.decisions, r.emitted, inputIdentifiers(records), r.namespace);
    expect(invariants.filter((i) => !i.held)).toEqual([]);
    // No tool argument, path or error text from the capture reaches what the guard emitted.
    const emitted = JSON.stringify(r.emitted);
    for (const s of sensitiveInputStrings(records)) expect(emitted).not.toContain(s);
    for (const s of ['/missing/', 'No such file', 'FileNotFoundError', 'ToolRetryError', 'read_file']) expect(emitted).not.toContain(s);
  });

  it('a qwen-code capture is not taken for a GenAI one', async () => {
    const path = join('fixtures', 'qwen-code-0.24.4', 'acp-shadow-drain.outfile.json');
    const r = await replayRecords(parseTelemetryText(readFileSync(path, 'utf8'), path, emptyRecordBatch()));
    expect(r.profile).toBe('qwen-code');
    expect(r.namespace).toBe('qwen-code');
    expect(r.decisions.map((d) => d.outcome.decision)).toEqual(['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop', 'none']);
  });

  it('serve (profile auto): a qwen-code agent and a GenAI agent on one server, each trace read by its own profile', async () => {
    const qwen = loadFixture('acp-shadow-drain');
    const server = await startGuardServer({ port: 0, profile: 'auto', graceMillis: 5_000, print: () => undefined, metricExportIntervalMillis: 60_000 });
    try {
      const traces = new OTLPTraceExporter({ url: `${server.url}/v1/traces` });
      const logs = new OTLPLogExporter({ url: `${server.url}/v1/logs` });
      await exportAll(logs, qwen.logs.map(toReadableLog));
      await exportAll(traces, qwen.spans.map(toReadableSpan));
      await traces.shutdown();
      await logs.shutdown();
      const capture = readFileSync(join(root, 'strands-agents-1.62.0', 'parallel-batch.latest.otlp.jsonl'), 'utf8');
      for (const line of capture.split('\n').filter((l) => l !== '')) {
        const res = await fetch(`${server.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: line });
        expect(res.status).toBe(200);
      }
      server.drain();
      const alone = await replayRecords(qwen, { mode: 'shadow' });
      const of = (route: string) => server.decisions.filter((d) => d.route === route).map((d) => d.outcome.decision);
      expect(of('agent_run')).toEqual(['tracked', 'tracked', 'would_warn', 'would_stop']);
      expect(of('acp_foreground')).toEqual(alone.decisions.map((d) => d.outcome.decision));
    } finally {
      await server.close();
    }
  });

  it('the CLI: `replay --format json` on a capture, no --profile, prints the design\'s decisions', () => {
    const main = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;
    const file = join('fixtures', 'genai', 'pydantic-ai-2.68.0', 'parallel-batch.v5.otlp.jsonl');
    const r = spawnSync(process.execPath, [main, 'replay', '--format', 'json', file], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { batch: number; decision: string; phaseAfter: string });
    expect(lines.map((l) => `${l.batch}:${l.decision}:${l.phaseAfter}`)).toEqual(['1:tracked:tracking', '2:tracked:tracking', '3:would_warn:warned', '4:would_stop:latched']);
    expect(r.stderr).toContain('held');
    expect(r.stderr).not.toContain('VIOLATED');
  });

  it('the CLI: `replay --report` on a GenAI capture writes the shadow report (route agent_run), no raw data in it', () => {
    const main = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;
    const out = join(mkdtempSync(join(tmpdir(), 'rtfg-genai-report-')), 'report.html');
    const file = join('fixtures', 'genai', 'strands-agents-1.62.0', 'success-reset.latest.otlp.jsonl');
    const r = spawnSync(process.execPath, [main, 'replay', '--report', out, file], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('agent_run');
    for (const s of ['/missing/', 'No such file', 'FileNotFoundError', 'read_file']) expect(html).not.toContain(s);
  });
});

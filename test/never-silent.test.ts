/**
 * Never silent (issue 30 item 2): telemetry no profile reads (here a web service's HTTP server
 * spans: no agent's names, no `gen_ai.*`) is named, by its producer's
 * `service.name` and instrumentation scope names (never an attribute value), with the supported
 * agents from the registry. `replay` exits 3; `serve` says it on stderr, rate-limited, and counts
 * it; in process, one OpenTelemetry diagnostic. "detected" is printed only when something was, and
 * the summaries and the report give what each agent's profile judged.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diag, DiagLogLevel, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { createRepeatedToolFailureGuard } from '../src/index.js';
import { flushGuardDiagnostics } from '../src/otel/diagnostics.js';
import { RecordedSpan } from '../src/otlp/records.js';
import { WIRE_PROFILES } from '../src/profiles/registry.js';
import { parseReplayInput } from '../src/replay/replay-input.js';
import { replayRecords } from '../src/replay/replay.js';
import { renderReportFromParts } from '../src/report/report.js';
import type { ChartRenderer } from '../src/report/charts.js';
import { inputIdentifiers } from '../src/replay/audit.js';
import { emptyReportInputs } from '../src/profiles/report-inputs.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { startGuardServer } from '../src/serve/guard-server.js';

// `npm test` builds first (pretest): the CLI is tested as users run it.
const MAIN = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;
const QWEN = new URL('../fixtures/qwen-code-0.24.4/', import.meta.url).pathname;
const QWEN_CAPTURES = ['acp-enforce', 'acp-shadow-drain', 'acp-shadow-nodrain', 'headless-yolo'].map((n) => `${QWEN}${n}.outfile.json`);
const CLAUDE = new URL('../fixtures/claude-code-2.1.328/read-missing-loop-shadow.otlp.jsonl', import.meta.url).pathname;

/** Values the producer carries that must never be printed (only names may be). */
const SECRETS = ['/cart/secret-order-7b', 'secret-token-q', 'sk-not-a-key', 'host-secret-42'];
const WEB_SERVICE = 'checkout-web';
const WEB_SCOPE = '@opentelemetry/instrumentation-http';

/** A web service's HTTP server spans (no agent's names, no `gen_ai.*`) as OTLP JSON. */
function webSpans(spans: number, traceSeed = 'ab'): string {
  const out = [];
  for (let i = 1; i <= spans; i++) {
    const attrs: Record<string, string> = { 'http.request.method': 'GET', 'url.path': SECRETS[0] ?? '', 'url.query': SECRETS[1] ?? '', 'user_agent.original': SECRETS[2] ?? '' };
    out.push({
      traceId: traceSeed.repeat(16),
      spanId: i.toString(16).padStart(16, '0'),
      name: 'GET',
      kind: 2,
      startTimeUnixNano: String(1_796_187_370_000_000_000n + BigInt(i) * 1_000_000n),
      endTimeUnixNano: String(1_796_187_370_000_000_000n + BigInt(i) * 1_000_000n + 500_000n),
      attributes: Object.entries(attrs).map(([key, v]) => ({ key, value: { stringValue: v } })),
      status: {},
    });
  }
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: WEB_SERVICE } }, { key: 'host.name', value: { stringValue: SECRETS[3] } }] },
        scopeSpans: [{ scope: { name: WEB_SCOPE }, spans: out }],
      },
    ],
  });
}

function webFile(spans = 3): string {
  const path = join(mkdtempSync(join(tmpdir(), 'rtfg-unread-')), 'web.otlp.json');
  writeFileSync(path, `${webSpans(spans)}\n`);
  return path;
}

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `summary: N prompt(s), M batch(es)` of a replay alone. */
function summaryOf(stdout: string): { prompts: number; batches: number } {
  const m = /^summary: (\d+) prompt\(s\), (\d+) batch\(es\)/m.exec(stdout);
  expect(m, stdout).not.toBeNull();
  return { prompts: Number(m?.[1]), batches: Number(m?.[2]) };
}

const expectNamedNeverValued = (text: string): void => {
  expect(text).toContain(`service.name ${WEB_SERVICE}`);
  expect(text).toContain(WEB_SCOPE);
  // The supported agents, from the registry.
  expect(text).toContain(`Supported agents: ${Object.keys(WIRE_PROFILES).join(', ')}`);
  for (const s of SECRETS) expect(text).not.toContain(s);
};

describe('replay: telemetry no profile reads', () => {
  it('only unread telemetry: named on stderr, "none detected", exit 3', () => {
    const r = cli('replay', webFile());
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('profile: none detected');
    expect(r.stdout).not.toContain('(detected)');
    expect(r.stderr).toContain('records no profile read (not judged), by producer:');
    expect(r.stderr).toContain(`3 record(s) from service.name ${WEB_SERVICE}`);
    expectNamedNeverValued(r.stderr);
    for (const s of SECRETS) expect(r.stdout).not.toContain(s);
  });

  it('beside an agent that is read: that agent judged as alone, the rest named, exit 3', () => {
    const alone = summaryOf(cli('replay', ...QWEN_CAPTURES).stdout);
    // The count: the qwen-code fixtures hold 4 prompts.
    expect(alone.prompts).toBe(4);
    const r = cli('replay', ...QWEN_CAPTURES, webFile());
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('profiles: qwen-code (detected per producer)');
    expect(r.stdout).toContain(`  qwen-code: 4 prompt(s), ${alone.batches} batch(es) judged`);
    expectNamedNeverValued(r.stderr);
  });

  it('one agent alone: "detected", exit 0, nothing said about unread telemetry', () => {
    const r = cli('replay', ...QWEN_CAPTURES);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('profile: qwen-code (detected)');
    expect(r.stderr).not.toContain('no profile read');
  });

  it('several agents: prompts and batches judged per agent, each as alone, exit 0', () => {
    const q = summaryOf(cli('replay', ...QWEN_CAPTURES).stdout);
    const c = summaryOf(cli('replay', CLAUDE).stdout);
    const r = cli('replay', ...QWEN_CAPTURES, CLAUDE);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('profiles: qwen-code, claude-code (detected per producer)');
    expect(r.stdout).toContain(`  qwen-code: ${q.prompts} prompt(s), ${q.batches} batch(es) judged`);
    expect(r.stdout).toContain(`  claude-code: ${c.prompts} prompt(s), ${c.batches} batch(es) judged`);
  });

  it('--profile forces one reader: nothing is unread, nothing detected', () => {
    const r = cli('replay', '--profile', 'qwen-code', ...QWEN_CAPTURES, webFile());
    expect(r.stdout).not.toContain('detected');
    expect(r.stderr).not.toContain('no profile read');
  });
});

describe('the report: per agent, and records no profile read per producer', () => {
  const stubCharts: ChartRenderer = (_option, width, height) => `<svg width="${width}" height="${height}"></svg>`;

  it('names the unread producer (names only) and tallies each agent', async () => {
    const sources = [...QWEN_CAPTURES, CLAUDE].map((f) => ({ text: readFileSync(f), file: f }));
    sources.push({ text: Buffer.from(webSpans(5)), file: 'web.json' });
    const records = parseReplayInput(sources, { reportInputs: true });
    const result = await replayRecords(records);
    expect(result.agents.map((a) => a.profile)).toEqual(['qwen-code', 'claude-code']);
    expect(result.unread).toEqual([{ serviceName: WEB_SERVICE, scopeName: undefined, scopeNames: [WEB_SCOPE], records: 5, spans: 5 }]);
    const { html, data } = await renderReportFromParts(result, records.whole.reportInputs ?? emptyReportInputs(), records.whole.identifiers ?? inputIdentifiers(records), { charts: stubCharts, profile: result.profile });
    const rows = (xs: (string | number)[][]) => xs.sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    expect(rows(data.summary.byProfile.map((r) => [r.group, r.prompts, r.batches]))).toEqual(rows(result.agents.map((a) => [a.profile, a.prompts, a.batches])));
    expect(data.summary.unread).toEqual([{ serviceName: WEB_SERVICE, scopeNames: [WEB_SCOPE], records: 5 }]);
    expect(html).toContain('Records no profile read, per producer');
    for (const s of SECRETS) expect(html).not.toContain(s);
  });
});

describe('serve: telemetry no profile reads', () => {
  it('said on stderr at most once per interval (and once more at close), counted by signal, named in the summary', async () => {
    const notes: string[] = [];
    const lines: string[] = [];
    const server = await startGuardServer({ port: 0, graceMillis: 50, tickMillis: 10, print: (l) => lines.push(l), log: (l) => notes.push(l), metricExportIntervalMillis: 600_000 });
    try {
      const post = (body: string) => fetch(`${server.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect((await post(webSpans(4, 'ab'))).status).toBe(200);
      const deadline = Date.now() + 5_000;
      while (!notes.some((n) => n.includes('no profile reads')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect((await post(webSpans(6, 'cd'))).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      // Rate-limited: the second request within the interval is not named again yet.
      expect(notes.filter((n) => n.includes('no profile reads'))).toHaveLength(1);
      expect(server.unreadProducers()).toEqual([{ serviceName: WEB_SERVICE, scopeName: WEB_SCOPE, scopeNames: [WEB_SCOPE], records: 10, spans: 10 }]);
      expect(server.agents()).toEqual([]);
    } finally {
      await server.close();
    }
    const said = notes.filter((n) => n.includes('no profile reads'));
    expect(said).toHaveLength(2);
    expect(said[0]).toContain(`serve: 4 record(s) no profile reads (not judged), by producer: 4 record(s) from service.name ${WEB_SERVICE}, scopes ${WEB_SCOPE}.`);
    expect(said[1]).toMatch(/^serve: 6 record\(s\) no profile reads/);
    for (const n of said) expectNamedNeverValued(n);
    // Counted: a metric whose only attribute is the signal (a closed vocabulary).
    const metric = lines
      .map((l) => JSON.parse(l) as { signal: string; name?: string; attributes: Record<string, unknown>; value?: number })
      .filter((p) => p.signal === 'metric' && p.name?.endsWith('.repeated_tool_failure_guard.unread_records') === true);
    expect(metric.map((m) => [m.name, m.attributes, m.value])).toEqual([['qwen-code.repeated_tool_failure_guard.unread_records', { signal: 'traces' }, 10]]);
  });
});

describe('serve --report: per agent, and records no profile read per producer', () => {
  it('the report parts name the unread producer and tally each agent as replay does', async () => {
    const stubCharts: ChartRenderer = (_option, width, height) => `<svg width="${width}" height="${height}"></svg>`;
    const server = await startGuardServer({ port: 0, graceMillis: 50, report: true, print: () => undefined, log: () => undefined, metricExportIntervalMillis: 600_000 });
    try {
      for (const f of [...QWEN_CAPTURES, CLAUDE]) server.ingest(parseTelemetryText(readFileSync(f, 'utf8'), f));
      server.ingest(parseTelemetryText(webSpans(5), 'web.json'));
      server.drain();
    } finally {
      await server.close();
    }
    const parts = await server.reportParts();
    expect(parts).toBeDefined();
    if (parts === undefined) return;
    const replayed = await replayRecords(parseReplayInput([...QWEN_CAPTURES, CLAUDE].map((f) => ({ text: readFileSync(f), file: f }))), { mode: 'shadow' });
    expect(parts.result.agents.map((a) => [a.profile, a.prompts, a.batches])).toEqual(replayed.agents.map((a) => [a.profile, a.prompts, a.batches]));
    expect(parts.result.unread).toEqual([{ serviceName: WEB_SERVICE, scopeName: WEB_SCOPE, scopeNames: [WEB_SCOPE], records: 5, spans: 5 }]);
    const { data } = await renderReportFromParts(parts.result, parts.inputs, parts.ids, { charts: stubCharts, profile: parts.result.profile });
    expect(data.summary.unread).toEqual([{ serviceName: WEB_SERVICE, scopeNames: [WEB_SCOPE], records: 5 }]);
  });
});

describe('in process: one OpenTelemetry diagnostic', () => {
  const seen: string[] = [];
  afterEach(() => {
    flushGuardDiagnostics();
    diag.disable();
  });

  const spans = (n: number, seed: number): RecordedSpan[] =>
    Array.from(
      { length: n },
      (_, i) =>
        new RecordedSpan({
          name: 'GET',
          attributes: { 'http.request.method': 'GET', 'url.path': SECRETS[0] },
          spanContext: { traceId: seed.toString(16).padStart(32, '0'), spanId: (i + 1).toString(16).padStart(16, '0'), traceFlags: 1 },
          parentSpanContext: undefined,
          startTime: [1_800_000_000, i],
          endTime: [1_800_000_000, i + 1],
          scopeName: WEB_SCOPE,
          resource: { attributes: { 'service.name': WEB_SERVICE, 'host.name': SECRETS[3] } },
        }),
    );

  it.each([
    { desc: 'many records: said once, while running', records: 200, beforeShutdown: 1 },
    { desc: 'a few records: said once, at shutdown', records: 3, beforeShutdown: 0 },
  ])('$desc', async ({ records, beforeShutdown }) => {
    seen.length = 0;
    diag.setLogger({ error: (m) => void seen.push(m), warn: (m) => void seen.push(m), info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
    const guard = createRepeatedToolFailureGuard({ mode: 'shadow' });
    for (const s of spans(records, 7)) {
      guard.spanProcessor.onStart(s as unknown as Span as never, ROOT_CONTEXT);
      guard.spanProcessor.onEnd(s as unknown as ReadableSpan);
    }
    const about = () => seen.filter((m) => m.includes('no profile reads'));
    expect(about()).toHaveLength(beforeShutdown);
    await guard.shutdown();
    expect(about()).toHaveLength(1);
    expect(about()[0]).toMatch(new RegExp(`${records < 64 ? records : 64} record\\(s\\) from service\\.name ${WEB_SERVICE}`));
    expectNamedNeverValued(about()[0] ?? '');
  });

  it('many unread producers: the one diagnostic names five and counts the rest (its length is bounded)', async () => {
    seen.length = 0;
    diag.setLogger({ error: (m) => void seen.push(m), warn: (m) => void seen.push(m), info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
    const guard = createRepeatedToolFailureGuard({ mode: 'shadow' });
    for (let p = 0; p < 12; p++) {
      for (const s of spans(2, 100 + p)) {
        const own = new RecordedSpan({ ...s, resource: { attributes: { 'service.name': `web-${p}` } } } as never);
        guard.spanProcessor.onStart(own as unknown as Span as never, ROOT_CONTEXT);
        guard.spanProcessor.onEnd(own as unknown as ReadableSpan);
      }
    }
    await guard.shutdown();
    const about = seen.filter((m) => m.includes('no profile reads'));
    expect(about).toHaveLength(1);
    expect(about[0]?.match(/service\.name web-\d+/g)).toHaveLength(5);
    expect(about[0]).toMatch(/ and 7 more producer\(s\)\. Supported agents: /);
  });

  it('without a diag logger: one Node process warning, coded as unread telemetry', async () => {
    const warnings: { name: string; code?: string; message: string }[] = [];
    const onWarning = (w: Error & { code?: string }): void => void warnings.push({ name: w.name, code: w.code, message: w.message });
    process.on('warning', onWarning);
    try {
      const guard = createRepeatedToolFailureGuard({ mode: 'shadow' });
      for (const s of spans(3, 9)) {
        guard.spanProcessor.onStart(s as unknown as Span as never, ROOT_CONTEXT);
        guard.spanProcessor.onEnd(s as unknown as ReadableSpan);
      }
      await guard.shutdown();
      await new Promise((r) => setImmediate(r));
    } finally {
      process.removeListener('warning', onWarning);
    }
    const about = warnings.filter((w) => w.message.includes('no profile reads'));
    expect(about.map((w) => [w.name, w.code])).toEqual([['RepeatedToolFailureGuardWarning', 'RTFG_UNREAD_TELEMETRY']]);
    expectNamedNeverValued(about[0]?.message ?? '');
  });
});

/**
 * `serve` as a replica: OTLP/gRPC in from the SDK's real OTLP/gRPC exporters, `--new-prompts-only`,
 * and its own telemetry exported under its `service.instance.id` to an OTLP/HTTP sink on 127.0.0.1.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordBatch } from '../src/otlp/records.js';
import { startGuardServer } from '../src/serve/guard-server.js';
import type { GuardServer } from '../src/serve/guard-server.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { replayRecords } from '../src/replay/replay.js';
import { loadFixture, toReadableLog, toReadableLogAsProduced, toReadableSpan, toReadableSpanAsProduced } from './helpers/recorded.js';
import { firstMillis, shifted } from './scale-out/player.js';

const GRACE_MILLIS = 200;
const GUARD_EVENT = 'qwen-code.repeated_tool_failure_guard';
const GUARD_METRIC = 'qwen-code.repeated_tool_failure_guard.count';

interface Posted {
  readonly path: string;
  readonly body: Record<string, unknown>;
}

let sink: Server;
const posted: Posted[] = [];
let server: GuardServer;

beforeAll(async () => {
  sink = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posted.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((done) => sink.listen(0, '127.0.0.1', () => done()));
  server = await startGuardServer({
    port: 0,
    grpcPort: 0,
    graceMillis: GRACE_MILLIS,
    exportEndpoint: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
    instanceId: 'replica-a',
    newPromptsOnly: true,
  });
});

afterAll(async () => {
  await server?.close();
  await new Promise<void>((done) => sink.close(() => done()));
});

/** Send `records` to the shared server; `asProduced`: each under its own Resource (else qwen-code's). */
async function sendOverGrpc(records: RecordBatch, asProduced = false): Promise<void> {
  const url = `http://${server.grpcAddress ?? ''}`;
  const traces = new OTLPTraceExporter({ url });
  const logs = new OTLPLogExporter({ url });
  const one = <T>(e: { export(items: T[], done: (r: ExportResult) => void): void }, items: T[]) =>
    new Promise<ExportResult>((done) => e.export(items, done));
  try {
    const results = await Promise.all([
      one(traces, records.spans.map(asProduced ? toReadableSpanAsProduced : toReadableSpan)),
      one(logs, records.logs.map(asProduced ? toReadableLogAsProduced : toReadableLog)),
    ]);
    expect(results.map((r) => r.code)).toEqual([ExportResultCode.SUCCESS, ExportResultCode.SUCCESS]);
  } finally {
    await Promise.all([traces.shutdown(), logs.shutdown()]);
  }
}

const judged = (promptPrefix: string): string[] =>
  server.decisions.filter((d) => d.promptId.startsWith(promptPrefix) && d.outcome.decision !== 'none').map((d) => d.outcome.decision);

async function waitFor(condition: () => boolean, millis: number): Promise<void> {
  const deadline = Date.now() + millis;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

describe('serve --grpc-port --new-prompts-only --instance-id (127.0.0.1)', () => {
  it('listens for OTLP/gRPC next to OTLP/HTTP', () => {
    expect(server.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.instanceId).toBe('replica-a');
  });

  it('a real capture sent now over OTLP/gRPC is judged as the in-tree guard judged it', async () => {
    const capture = loadFixture('acp-enforce');
    const now = shifted(capture, Date.now() - firstMillis(capture));
    const session = String(capture.logs.find((l) => l.attributes['event.name'] === 'qwen-code.user_prompt')?.attributes['prompt_id']).split('#')[0] ?? '';
    await sendOverGrpc(now);
    await waitFor(() => judged(session).length >= 5, 20 * GRACE_MILLIS);
    // the fixture's in-tree enforce run, in shadow: tracked (1-2, 1), (3-4, 2), (5-7, 3+), warned, stopped
    expect(judged(session)).toEqual(['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop']);
  });

  it('a Claude Code prompt started after serve is judged too: its user_prompt is its start record', async () => {
    const path = new URL('../fixtures/claude-code-2.1.328/read-missing-loop-shadow.otlp.jsonl', import.meta.url).pathname;
    const capture = parseTelemetryText(readFileSync(path, 'utf8'), path);
    const alone = await replayRecords(capture, { mode: 'shadow' });
    const promptId = alone.decisions[0]?.promptId ?? '';
    expect(alone.decisions.length).toBeGreaterThan(0);
    await sendOverGrpc(shifted(capture, Date.now() - firstMillis(capture)), true);
    await waitFor(() => server.decisions.filter((d) => d.promptId === promptId).length >= alone.decisions.length, 20 * GRACE_MILLIS);
    const decisions = (ds: readonly { promptId: string; batch: number; outcome: { decision: string } }[]) =>
      ds.filter((d) => d.promptId === promptId).map((d) => `${d.batch} ${d.outcome.decision}`);
    expect(decisions(server.decisions)).toEqual(decisions(alone.decisions));
  });

  it('a prompt that started before serve did is not judged (counted as not admitted)', async () => {
    const capture = loadFixture('acp-shadow-drain');
    const session = String(capture.logs.find((l) => l.attributes['event.name'] === 'qwen-code.user_prompt')?.attributes['prompt_id']).split('#')[0] ?? '';
    // a replica that comes up while the prompt runs: the prompt started 5 s before it
    const replica = await startGuardServer({ port: 0, grpcPort: 0, graceMillis: GRACE_MILLIS, newPromptsOnly: true, print: () => undefined });
    const started = Date.now();
    try {
      const url = `http://${replica.grpcAddress ?? ''}`;
      const traces = new OTLPTraceExporter({ url });
      const logs = new OTLPLogExporter({ url });
      const early = shifted(capture, started - 5_000 - firstMillis(capture));
      try {
        await Promise.all([
          new Promise((done) => traces.export(early.spans.map(toReadableSpan), done)),
          new Promise((done) => logs.export(early.logs.map(toReadableLog), done)),
        ]);
      } finally {
        await Promise.all([traces.shutdown(), logs.shutdown()]);
      }
      await waitFor(() => replica.unadmittedBatches() >= 6, 20 * GRACE_MILLIS);
      expect(replica.lateRecords()).toBe(0);
      expect(replica.unadmittedBatches()).toBe(6);
      expect(replica.decisions.filter((d) => d.promptId.startsWith(session))).toEqual([]);
    } finally {
      await replica.close();
    }
  });

  it('its diagnostic logs and counters carry its service.instance.id', async () => {
    await server.close();
    const resources = (key: 'resourceLogs' | 'resourceMetrics') =>
      posted.flatMap((p) => ((p.body[key] as Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> } }> | undefined) ?? []).map((r) => Object.fromEntries(r.resource.attributes.map((a) => [a.key, a.value.stringValue]))));
    const logResources = resources('resourceLogs');
    const metricResources = resources('resourceMetrics');
    expect(logResources.length).toBeGreaterThan(0);
    expect(metricResources.length).toBeGreaterThan(0);
    for (const r of [...logResources, ...metricResources]) {
      expect(r['service.instance.id']).toBe('replica-a');
      expect(r['service.name']).toBe('repeated-tool-failure-guard');
    }
    const text = JSON.stringify(posted.map((p) => p.body));
    expect(text).toContain(GUARD_EVENT);
    expect(text).toContain(GUARD_METRIC);
  });
});

describe('@grpc/grpc-js is loaded only for --grpc-port', () => {
  it('guard-server imports the gRPC receiver dynamically, and nothing else in src/ imports it', () => {
    const src = new URL('../src/', import.meta.url);
    const server = readFileSync(new URL('serve/guard-server.ts', src), 'utf8');
    expect(server).toContain("await import('./otlp-grpc-receiver.js')");
    expect(server).not.toMatch(/^import \{[^}]*\} from '\.\/otlp-grpc-receiver\.js';$/m);
    const importers = readdirSync(fileURLToPath(src), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => /from '@grpc\/grpc-js'/.test(readFileSync(new URL(f, src), 'utf8')));
    expect(importers).toEqual(['serve/otlp-grpc-receiver.ts']);
  });
});

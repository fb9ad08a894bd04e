/**
 * serve's reordering across streams and producers: the span and log streams of one agent arrive
 * apart (and one may lag the other by more than the grace), and one client's clock must not make
 * another client's records late. Expected decisions are replay's on the same capture.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RecordBatch } from '../src/otlp/records.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { replayRecords } from '../src/replay/replay.js';
import { startGuardServer } from '../src/serve/guard-server.js';
import { outfileObjects, recaptureObject } from './helpers/generators.js';
import { fixturePath } from './helpers/recorded.js';

const CAPTURE = readFileSync(fixturePath('acp-shadow-drain'), 'utf8');
const GRACE = 300;

/** Copy `k` of the real capture (its own session, prompt and trace ids), starting `offsetSeconds` from now. */
function client(k: number, offsetSeconds: number): RecordBatch {
  const objects = outfileObjects(CAPTURE);
  const first = Math.min(...[...CAPTURE.matchAll(/\[\s+(1[0-9]{9}),/g)].map((m) => Number(m[1])));
  const shift = Math.floor(Date.now() / 1000) - first + offsetSeconds;
  return parseTelemetryText(objects.map((o) => recaptureObject(o, k, shift)).join('\n'), `client-${k}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const summary = (ds: readonly { promptId: string; batch: number; outcome: { decision: string } }[]) => ds.map((d) => `${d.promptId}/${d.batch}:${d.outcome.decision}`);

describe('serve: one capture whose logs stream lags its spans stream by more than the grace (issue 30.5)', () => {
  it('nothing is late, every batch is judged, and the decisions are replay’s', async () => {
    const records = client(1, 0);
    const expected = await replayRecords(records, { mode: 'shadow' });
    const lines: string[] = [];
    const server = await startGuardServer({ port: 0, graceMillis: GRACE, print: () => undefined, log: (l) => lines.push(l), metricExportIntervalMillis: 60_000 });
    try {
      const half = Math.ceil(records.logs.length / 2);
      // The first half of the logs and every span now; the rest of the logs a retry later.
      server.ingest({ spans: [], logs: records.logs.slice(0, half), metricCount: 0, ignoredCount: 0 });
      server.ingest({ spans: records.spans, logs: [], metricCount: 0, ignoredCount: 0 });
      await sleep(GRACE + 300);
      server.ingest({ spans: [], logs: records.logs.slice(half), metricCount: 0, ignoredCount: 0 });
      // Released by serve's own timer once the logs caught up (no drain).
      await sleep(4 * GRACE);
      expect(server.ingestStats().held).toBe(0);
      expect(server.lateRecords()).toBe(0);
      expect(server.unjudgedBatches()).toEqual({});
      expect(summary(server.decisions)).toEqual(summary(expected.decisions));
    } finally {
      await server.close();
    }
    expect(lines.filter((l) => l.includes('not judged'))).toEqual([]);
  });
});

describe('serve: one client’s clock, ahead or behind, does not make another client’s records late (issue 34.3)', () => {
  it.each([
    { desc: 'a client stamped a day ahead (refused as clock skew)', aheadSeconds: 86_400, refused: true },
    { desc: 'a client honestly 15 s ahead (judged on its own timeline)', aheadSeconds: 15, refused: false },
    // Behind is not refused: a capture posted later (or a clock days behind) is judged on its own timeline.
    { desc: 'a client stamped two days behind (judged on its own timeline)', aheadSeconds: -172_800, refused: false },
  ])('$desc', async ({ aheadSeconds, refused }) => {
    const ahead = client(2, aheadSeconds);
    const victim = client(3, 0);
    const expectedVictim = await replayRecords(victim, { mode: 'shadow' });
    const expectedAhead = await replayRecords(ahead, { mode: 'shadow' });
    const server = await startGuardServer({ port: 0, graceMillis: GRACE, print: () => undefined, log: () => undefined, metricExportIntervalMillis: 60_000 });
    let aheadKept = 0;
    try {
      server.ingest(ahead);
      // The records the profile reads (the rest is dropped on arrival).
      aheadKept = server.ingestStats().spansKept + server.ingestStats().logsKept;
      // The client ahead is released (its watermark moves on) before the other client sends.
      await sleep(4 * GRACE);
      server.ingest(victim);
      await sleep(4 * GRACE);
      expect(server.ingestStats().held).toBe(0);
    } finally {
      await server.close();
    }
    const victimPrompts = new Set(expectedVictim.decisions.map((d) => d.promptId));
    expect(summary(server.decisions.filter((d) => victimPrompts.has(d.promptId)))).toEqual(summary(expectedVictim.decisions));
    expect(server.lateRecords()).toBe(0);
    if (refused) {
      expect(aheadKept).toBeGreaterThan(0);
      expect(server.clockSkewedRecords()).toBe(aheadKept);
    } else {
      expect(server.clockSkewedRecords()).toBe(0);
      const aheadPrompts = new Set(expectedAhead.decisions.map((d) => d.promptId));
      expect(summary(server.decisions.filter((d) => aheadPrompts.has(d.promptId)))).toEqual(summary(expectedAhead.decisions));
    }
  });
});

/**
 * Ids in output are bounded (issue 34 item 7): a prompt id is the producer's input, and a 4 MiB one
 * was echoed in every decision line. Up to 128 characters an id is written as it is; beyond, as its
 * first 64 characters, `…#` and a 64-bit FNV-1a digest of the whole id.
 */
import { describe, expect, it } from 'vitest';
import { startGuardServer } from '../src/serve/guard-server.js';
import { fnv1a64, MAX_OUTPUT_ID_LENGTH, outputId } from '../src/otel/output-id.js';
import { decisionLine } from '../src/report/text.js';
import { otlpLogsBatchRequest } from './helpers/generators.js';

describe('fnv1a64', () => {
  // Test vectors of the FNV reference (draft-eastlake-fnv, FNV-1a 64-bit).
  it.each([
    { text: '', hex: 'cbf29ce484222325' },
    { text: 'a', hex: 'af63dc4c8601ec8c' },
    { text: 'foobar', hex: '85944171f73967e8' },
  ])('"$text" → $hex', ({ text, hex }) => {
    expect(fnv1a64(text)).toBe(hex);
  });
});

describe('outputId', () => {
  it.each([
    { desc: 'a qwen-code prompt id', id: 'f3a1c2d4-0000-4000-8000-000000000001########7' },
    { desc: 'exactly the longest kept', id: 'p'.repeat(MAX_OUTPUT_ID_LENGTH) },
  ])('$desc is written as it is', ({ id }) => {
    expect(outputId(id)).toBe(id);
  });

  it('a 4 MiB id is written as 64 characters, …# and its digest; ids sharing the prefix stay apart', () => {
    const a = 'p'.repeat(4 * 1024 * 1024);
    const b = `${'p'.repeat(4 * 1024 * 1024 - 1)}q`;
    expect(outputId(a)).toBe(`${'p'.repeat(64)}…#${fnv1a64(a)}`);
    expect(outputId(a).length).toBe(64 + 2 + 16);
    expect(outputId(b)).not.toBe(outputId(a));
  });
});

describe('serve: a 1 MiB prompt id is not echoed', () => {
  it('every decision line and guard log record carries the bounded id', async () => {
    const printed: string[] = [];
    const server = await startGuardServer({ port: 0, graceMillis: 20, print: (l) => printed.push(l), log: () => undefined, metricExportIntervalMillis: 3_600_000 });
    const id = `${'x'.repeat(1024 * 1024)}########1`;
    try {
      const r = await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(otlpLogsBatchRequest(id, Date.now())) });
      expect(r.status).toBe(200);
      server.drain();
      expect(server.decisions.length).toBeGreaterThan(0);
      for (const d of server.decisions) expect(decisionLine(d).promptId).toBe(outputId(id));
    } finally {
      await server.close();
    }
    const guardLogs = printed.filter((l) => l.includes('"signal":"log"'));
    expect(guardLogs.length).toBeGreaterThan(0);
    for (const line of printed) expect(line.length).toBeLessThan(4096);
    expect(guardLogs.some((l) => l.includes(outputId(id)))).toBe(true);
  });
});

/**
 * Junk prompts do not evict live ones (issue 34 item 4): 10,500 made-up prompt ids of one record
 * each, at the default 10,000-prompt limit, used to evict all 20 live prompts (they lost their
 * reminder and stop). At capacity the guard now drops prompts that never opened a batch first.
 */
import { setGlobalErrorHandler } from '@opentelemetry/core';
import { afterEach, describe, expect, it } from 'vitest';
import { PromptRegistry } from '../src/engine/prompt-registry.js';
import { otlpRequestToRecords } from '../src/otlp/otlp.js';
import { startGuardServer } from '../src/serve/guard-server.js';
import { guardedSdk, modelRequest, otlpLogsBatchRequest, startInteraction, toolCall } from './helpers/generators.js';

const DRAIN_OK = { hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true };

describe('junk prompts are evicted before live ones', () => {
  afterEach(() => setGlobalErrorHandler(() => undefined));

  it('20 warned prompts, then 10,500 one-record junk prompts: every live prompt is still stopped on its next failing batch', async () => {
    const s = guardedSdk({ mode: 'enforce' }, false);
    const evicted = new Set<string>();
    s.guard.addListener({ onEviction: (id) => evicted.add(id) });
    let call = 0;
    const batch = (id: string, span: ReturnType<typeof startInteraction>) => {
      modelRequest(s.tracer, s.logger, span, id);
      toolCall(s.tracer, s.logger, span, id, { callId: `c${++call}` });
      toolCall(s.tracer, s.logger, span, id, { callId: `c${++call}` });
    };
    const live = Array.from({ length: 20 }, (_, i) => ({ id: `live-${i}`, span: startInteraction(s.tracer, `live-${i}`) }));
    const reminded: string[] = [];
    for (const p of live) {
      for (let b = 0; b < 4; b++) {
        batch(p.id, p.span);
        if (s.guard.control.afterToolBatch({ promptId: p.id, ...DRAIN_OK }).type === 'remind') reminded.push(p.id);
      }
    }
    expect(reminded).toEqual(live.map((p) => p.id));
    for (let i = 0; i < 10_500; i++) startInteraction(s.tracer, `junk-${i}`);
    expect(live.filter((p) => evicted.has(p.id))).toEqual([]);
    expect(evicted.size).toBeGreaterThan(500);
    for (const p of live) {
      batch(p.id, p.span);
      expect(s.guard.control.afterToolBatch({ promptId: p.id, ...DRAIN_OK }).type).toBe('stop');
    }
    // the evicted-prompt filter's estimated false-positive rate is exported as a gauge
    const rate = (await s.metricPoints()).filter((p) => p.name === 'qwen-code.repeated_tool_failure_guard.evicted_filter.false_positive_rate');
    expect(rate).toHaveLength(1);
    expect(Number(rate[0]?.value)).toBe(s.guard.engine.evictedFilterFalsePositiveRate);
    expect(Number(rate[0]?.value)).toBeLessThan(1e-3);
    await s.shutdown();
  });
});

describe('PromptRegistry disposable entries', () => {
  type Entry = { lastSeenMillis: number; live: boolean };
  // `entries`: whether each of k1…k8 is live (false: it never opened a batch)
  it.each([
    { desc: 'junk goes first, oldest first', entries: [true, false, false, true, false, false, false, false], dropped: ['k2', 'k3'] },
    { desc: 'not enough junk: then the oldest live', entries: [true, true, true, false, true, true, true, true], dropped: ['k4', 'k1'] },
  ])('$desc', ({ entries, dropped }) => {
    const r = new PromptRegistry<Entry>({ maxEntries: 8, now: () => 0, disposable: (e) => !e.live });
    entries.forEach((live, i) => r.admit(`k${i + 1}`, () => ({ lastSeenMillis: 0, live })));
    // at 8 held, each new entry trims one (an eighth of 8)
    const a = r.admit('n1', () => ({ lastSeenMillis: 0, live: true }));
    const b = r.admit('n2', () => ({ lastSeenMillis: 0, live: true }));
    expect([...a.trimmed, ...b.trimmed].map(([k]) => k)).toEqual(dropped);
  });
});

describe('serve: the prompt limit is an option (--max-prompts)', () => {
  it('maxOpenPrompts bounds the prompts serve tracks', async () => {
    const server = await startGuardServer({ port: 0, graceMillis: 10, maxOpenPrompts: 5, print: () => undefined, log: () => undefined, metricExportIntervalMillis: 3_600_000 });
    try {
      for (let i = 0; i < 12; i++) server.ingest(otlpRequestToRecords(otlpLogsBatchRequest(`limit-${i}########1`, Date.now() + i)));
      server.drain();
      expect(server.guard.engine.openPromptCount).toBeLessThanOrEqual(5);
      expect(server.guard.options.maxOpenPrompts).toBe(5);
    } finally {
      await server.close();
    }
  });
});

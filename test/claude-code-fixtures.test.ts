import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { auditInvariants, inputIdentifiers } from '../src/replay/audit.js';
import { replayRecords } from '../src/replay/replay.js';
import { detectWireProfiles } from '../src/profiles/registry.js';
import { sampleTelemetry } from '../src/profiles/detect.js';
import type { RecordBatch as Records } from '../src/otlp/records.js';

const detectWireProfile = (r: Records) => detectWireProfiles(sampleTelemetry(r.spans, r.logs))[0] ?? 'qwen-code';
import { decisionLine } from '../src/report/text.js';
import { startGuardServer } from '../src/serve/guard-server.js';
import type { GuardMode } from '../src/core/failure/types.js';

/**
 * The real Claude Code 2.1.328 captures recorded by the conformance run
 * (`node conformance/claude-code/run-all.mjs --record fixtures/claude-code-2.1.328`): replaying each
 * must give the decisions its scenario file states (written from the design), and, where the guard
 * hook ran live in Claude Code, exactly the decisions the hook made during that run.
 */
const FIXTURES = 'fixtures/claude-code-2.1.328';
const SCENARIOS = 'conformance/claude-code/scenarios';

interface Scenario {
  name: string;
  mode: GuardMode;
  hooks?: 'none' | 'guard';
  prompts: unknown[];
  expectedDecisions: Record<string, unknown>[];
}

const scenarios: Scenario[] = readdirSync(SCENARIOS)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(SCENARIOS, f), 'utf8')) as Scenario);

describe('replay of the real Claude Code 2.1.328 captures', () => {
  it('has a capture for every scenario', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(11);
    for (const s of scenarios) expect(existsSync(join(FIXTURES, `${s.name}.otlp.jsonl`)), s.name).toBe(true);
  });

  it.each(scenarios)('$name: the decisions the design gives, and those of the live hook', async (s) => {
    const file = join(FIXTURES, `${s.name}.otlp.jsonl`);
    const records = parseTelemetryText(readFileSync(file, 'utf8'), file);
    expect(detectWireProfile(records)).toBe('claude-code');
    const r = await replayRecords(records, { mode: s.mode });
    const promptOrder = [
      ...new Set(records.logs.filter((l) => l.attributes['event.name'] === 'user_prompt').map((l) => String(l.attributes['prompt.id']))),
    ];
    expect(promptOrder).toHaveLength(s.prompts.length);
    const lines = r.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => decisionLine(d));
    const ours = lines.map(({ promptId, guard: _guard, ...rest }) => ({ prompt: promptOrder.indexOf(promptId) + 1, ...rest }));
    expect(ours).toEqual(s.expectedDecisions.map((d) => ({ mode: s.mode, ...d })));
    expect(auditInvariants(r.decisions, r.emitted, inputIdentifiers(records), 'claude-code').every((i) => i.held)).toBe(true);
    // Logs alone suffice: the same decisions without any span.
    const logsOnly = await replayRecords({ ...records, spans: [] }, { mode: s.mode, profile: 'claude-code' });
    expect(logsOnly.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => decisionLine(d))).toEqual(lines);
    if (s.hooks === 'guard') {
      const live = readFileSync(join(FIXTURES, `${s.name}.hook-decisions.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown);
      expect(live).toEqual(lines);
      // The hook's own telemetry, exported live into the same capture.
      const exported = records.logs
        .filter((l) => l.instrumentationScope.name === 'repeated-tool-failure-guard' && l.attributes['event.name'] === 'claude-code.repeated_tool_failure_guard')
        .map((l) => [l.attributes.prompt_id, l.attributes.decision, l.attributes.failure_count_bucket, l.attributes.batch_count_bucket]);
      expect(exported).toEqual(lines.map((d) => [d.promptId, d.decision, d.failureCountBucket, d.batchCountBucket]));
    }
  });
});

describe('serve --profile claude-code on a real capture', () => {
  it('posting the captured OTLP/HTTP JSON requests gives the replay decisions', async () => {
    const name = 'bash-git-loop-shadow';
    const file = join(FIXTURES, `${name}.otlp.jsonl`);
    const server = await startGuardServer({ port: 0, graceMillis: 50, profile: 'claude-code', print: () => undefined, metricExportIntervalMillis: 60_000 });
    try {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const signal = line.startsWith('{"resourceSpans"') ? 'traces' : 'logs';
        const res = await fetch(`${server.url}/v1/${signal}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: line });
        expect(res.status).toBe(200);
      }
    } finally {
      await server.close();
    }
    const served = server.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => decisionLine(d).decision);
    expect(served).toEqual(['tracked', 'tracked', 'would_warn', 'would_stop']);
  });
});

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
  /** The design's decisions from the logs alone, where the spans carry more (default: `expectedDecisions`). */
  expectedDecisionsLogsOnly?: Record<string, unknown>[];
}

const scenarios: Scenario[] = readdirSync(SCENARIOS)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(SCENARIOS, f), 'utf8')) as Scenario);

describe('replay of the real Claude Code 2.1.328 captures', () => {
  it('has a capture for every scenario', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(17);
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
    const expected = s.expectedDecisions.map((d) => ({ mode: s.mode, ...d }));
    const numbered = <T extends { promptId: string; guard: string }>(list: readonly T[]) =>
      list.map(({ promptId, guard: _guard, ...rest }) => ({ prompt: promptOrder.indexOf(promptId) + 1, ...rest }));
    const replayed = r.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => decisionLine(d));
    expect(numbered(replayed)).toEqual(expected);
    expect(auditInvariants(r.decisions, r.emitted, inputIdentifiers(records), 'claude-code').every((i) => i.held)).toBe(true);
    // The capture with its spans stripped (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA unset): the logs
    // alone give the design's decisions too, the same ones unless the scenario says what only the
    // spans carry.
    const logsOnly = await replayRecords({ ...records, spans: [] }, { mode: s.mode, profile: 'claude-code' });
    const logsOnlyLines = logsOnly.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => decisionLine(d));
    expect(numbered(logsOnlyLines)).toEqual((s.expectedDecisionsLogsOnly ?? s.expectedDecisions).map((d) => ({ mode: s.mode, ...d })));
    if (s.expectedDecisionsLogsOnly === undefined) expect(logsOnlyLines).toEqual(replayed);
    if (s.hooks === 'guard') {
      const live = readFileSync(join(FIXTURES, `${s.name}.hook-decisions.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as ReturnType<typeof decisionLine>);
      expect(numbered(live)).toEqual(expected);
      expect(live).toEqual(replayed);
      // The hook's own telemetry, exported live into the same capture.
      const exported = records.logs
        .filter((l) => l.instrumentationScope.name === 'repeated-tool-failure-guard' && l.attributes['event.name'] === 'claude-code.repeated_tool_failure_guard')
        .map((l) => [l.attributes.prompt_id, l.attributes.decision, l.attributes.failure_count_bucket, l.attributes.batch_count_bucket]);
      expect(exported).toEqual(replayed.map((d) => [d.promptId, d.decision, d.failureCountBucket, d.batchCountBucket]));
    }
  });
});

describe('serve --profile claude-code on real captures', () => {
  it.each(['bash-git-loop-shadow', 'streamed-response-one-batch-shadow', 'unrecorded-calls-shadow', 'interrupt-bash-shadow'])(
    '%s: posting the captured OTLP/HTTP JSON requests gives the design\'s decisions',
    async (name) => {
      const scenario = scenarios.find((x) => x.name === name) as Scenario;
      const file = join(FIXTURES, `${name}.otlp.jsonl`);
      // A grace longer than the test: every record is held until close and released in event order
      // (with a grace shorter than the posting takes, the order would depend on timing: a call-level
      // record that arrives behind the watermark is dropped as late).
      const server = await startGuardServer({ port: 0, graceMillis: 60_000, profile: 'claude-code', print: () => undefined, metricExportIntervalMillis: 60_000 });
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
      const served = server.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => [d.batch, decisionLine(d).decision]);
      expect(served).toEqual(scenario.expectedDecisions.map((d) => [d.batch, d.decision]));
    },
  );
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GuardMode } from '../src/core/failure/types.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { sampleTelemetry } from '../src/profiles/detect.js';
import { detectWireProfiles } from '../src/profiles/registry.js';
import { auditInvariants, inputIdentifiers } from '../src/replay/audit.js';
import { replayRecords } from '../src/replay/replay.js';
import { decisionLine, renderSummary, summarise } from '../src/report/text.js';
import { startGuardServer } from '../src/serve/guard-server.js';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import type { ReadWriteLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace';
import type { BatchDecision } from '../src/engine/failure-types.js';
import { RepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';
import { hrTimeToMillis } from '../src/profiles/wire-profile.js';

/**
 * The real Codex CLI 0.169.0 captures recorded by the conformance run
 * (`node conformance/codex/run-all.mjs --record fixtures/codex-0.169.0`), privacy-cleaned there:
 * replaying each must give the decisions its scenario file states (written from the design and
 * the signals the CLI gives); where codex-hook ran, feeding it the recorded hook inputs with the
 * transcript as it stood at each hook must give the scenario's hook decisions and those the live
 * hook wrote.
 */
const FIXTURES = 'fixtures/codex-0.169.0';
const SCENARIOS = 'conformance/codex/scenarios';

interface Scenario {
  name: string;
  mode: GuardMode;
  hooks?: 'none' | 'guard';
  prompts: unknown[];
  expectedDecisions: Record<string, unknown>[] | null;
  expectedHookDecisions?: Record<string, unknown>[] | null;
}

const scenarios: Scenario[] = readdirSync(SCENARIOS)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(SCENARIOS, f), 'utf8')) as Scenario);

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
}

/** The trace ids of `codex.user_prompt` records: the prompt ids the profile gives, in order. */
function promptOrder(records: ReturnType<typeof parseTelemetryText>): string[] {
  return [...new Set(records.logs.filter((l) => l.attributes['event.name'] === 'codex.user_prompt').map((l) => String(l.spanContext?.traceId)))];
}

describe('replay of the real Codex 0.169.0 captures', () => {
  it('has a capture for every scenario (at least 10)', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(10);
    for (const s of scenarios) expect(existsSync(join(FIXTURES, `${s.name}.otlp.jsonl`)), s.name).toBe(true);
  });

  it('the captures hold no free text: no arguments, outputs, prompts, commands or error text', () => {
    for (const f of readdirSync(FIXTURES)) {
      const text = readFileSync(join(FIXTURES, f), 'utf8');
      for (const needle of ['"arguments"', '"output"', '"tool_input"', '"tool_response"', 'rtfg-missing', 'marker-', 'deploy failed', 'Deploy the service', 'Read-only file system', 'aggregated_output']) {
        expect(text.includes(needle), `${f}: ${needle}`).toBe(false);
      }
    }
  });

  it.each(scenarios.filter((s) => s.expectedDecisions !== null))('$name: the decisions the design gives', async (s) => {
    const file = join(FIXTURES, `${s.name}.otlp.jsonl`);
    const records = parseTelemetryText(readFileSync(file, 'utf8'), file);
    expect(detectWireProfiles(sampleTelemetry(records.spans, records.logs))[0]).toBe('codex');
    const r = await replayRecords(records, { mode: s.mode });
    const order = promptOrder(records);
    expect(order).toHaveLength(s.prompts.length);
    const ours = r.decisions
      .filter((d) => d.outcome.decision !== 'none')
      .map((d) => decisionLine(d))
      .map(({ promptId, guard: _guard, ...rest }) => ({ prompt: order.indexOf(promptId) + 1, ...rest }));
    expect(ours).toEqual((s.expectedDecisions ?? []).map((d) => ({ mode: s.mode, ...d })));
    expect(auditInvariants(r.decisions, r.emitted, inputIdentifiers(records), 'codex').every((i) => i.held)).toBe(true);
  });

  it('untyped failures are counted and shown: every rejected call of validation-errors-shadow, none toward a stop', async () => {
    const file = join(FIXTURES, 'validation-errors-shadow.otlp.jsonl');
    const records = parseTelemetryText(readFileSync(file, 'utf8'), file);
    const r = await replayRecords(records, { mode: 'shadow' });
    const s = summarise(r.decisions);
    const scenario = scenarios.find((x) => x.name === 'validation-errors-shadow') as Scenario & { expectedOutcome: { failedToolResults: number } };
    // Codex's own count of failed results (codex.tool_result success="false") in that run.
    expect(s.untypedFailures).toBe(scenario.expectedOutcome.failedToolResults);
    expect(s.untypedFailureBatches).toBe(3);
    expect(renderSummary(s, records.spans.length, records.logs.length).join('\n')).toContain(`untyped failures: ${s.untypedFailures} call(s) in 3 batch(es)`);
    expect(s.wouldWarn + s.wouldStop).toBe(0);
  });

  it('without the trace export an MCP failure is untyped: the loop resets once (unknown) and is never counted', async () => {
    const file = join(FIXTURES, 'mcp-error-loop-shadow.otlp.jsonl');
    const records = parseTelemetryText(readFileSync(file, 'utf8'), file);
    const r = await replayRecords({ ...records, spans: [] }, { mode: 'shadow', profile: 'codex' });
    expect(r.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => [d.outcome.decision, d.outcome.resetReason])).toEqual([['reset', 'unknown']]);
  });
});

describe('auto routing reads the real Codex captures with the codex profile', () => {
  const CASES = ['mcp-error-loop-shadow', 'parallel-mixed-outcomes-shadow'];

  it.each(CASES.flatMap((name) => (['codex', 'auto'] as const).map((profile) => ({ name, profile }))))(
    'serve --profile $profile, $name: posting the captured OTLP/HTTP JSON requests gives the replay decisions',
    async ({ name, profile }) => {
      const file = join(FIXTURES, `${name}.otlp.jsonl`);
      // Codex exports logs and spans on separate schedules: the grace window restores event order.
      const server = await startGuardServer({ port: 0, graceMillis: 2_000, profile, print: () => undefined, metricExportIntervalMillis: 60_000 });
      try {
        for (const line of lines(file)) {
          const signal = line.startsWith('{"resourceSpans"') ? 'traces' : 'logs';
          const res = await fetch(`${server.url}/v1/${signal}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: line });
          expect(res.status).toBe(200);
        }
      } finally {
        await server.close();
      }
      const scenario = scenarios.find((s) => s.name === name) as Scenario;
      const served = server.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => decisionLine(d).decision);
      expect(served).toEqual((scenario.expectedDecisions ?? []).map((d) => d.decision));
    },
  );

  it.each(CASES)('in process, no profile option (auto), %s: the guard\'s processors give the replay decisions', (name) => {
    const file = join(FIXTURES, `${name}.otlp.jsonl`);
    const records = parseTelemetryText(readFileSync(file, 'utf8'), file);
    let now = 0;
    const guard = new RepeatedToolFailureGuard({ mode: 'shadow', clock: () => now, controlHookRequired: false, sweepIntervalMillis: 0 });
    const decisions: BatchDecision[] = [];
    guard.addListener({ onDecision: (d) => decisions.push(d) });
    // In event order, as one process would see them: logs at their time, spans at their end.
    const events = [
      ...records.logs.map((log) => ({ t: hrTimeToMillis(log.hrTime), log })),
      ...records.spans.map((span) => ({ t: hrTimeToMillis(span.endTime), span })),
    ].sort((a, b) => a.t - b.t);
    for (const e of events) {
      now = e.t;
      if ('log' in e) guard.logRecordProcessor.onEmit(e.log as unknown as ReadWriteLogRecord);
      else {
        guard.spanProcessor.onStart(e.span as unknown as Span, ROOT_CONTEXT);
        guard.spanProcessor.onEnd(e.span as unknown as ReadableSpan);
      }
    }
    guard.finishAll();
    const scenario = scenarios.find((s) => s.name === name) as Scenario;
    expect(decisions.filter((d) => d.outcome.decision !== 'none').map((d) => decisionLine(d).decision)).toEqual((scenario.expectedDecisions ?? []).map((d) => d.decision));
  });
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { auditInvariants, inputIdentifiers } from '../src/replay/audit.js';
import { replayRecords } from '../src/replay/replay.js';
import { detectWireProfiles } from '../src/profiles/registry.js';
import { sampleTelemetry } from '../src/profiles/detect.js';
import { decisionLine } from '../src/report/text.js';
import type { GuardMode } from '../src/core/failure/types.js';

/**
 * The real gemini-cli 0.61.0 captures recorded by the conformance run
 * (`node conformance/gemini-cli/run-all.mjs --record fixtures/gemini-cli-0.61.0`), reduced to what
 * the profile reads: replaying each must give the decisions its scenario file states (written from
 * the design), from the logs alone as well.
 */
const FIXTURES = 'fixtures/gemini-cli-0.61.0';
const SCENARIOS = 'conformance/gemini-cli/scenarios';

interface Scenario {
  name: string;
  mode: GuardMode;
  prompts: unknown[];
  expectedDecisions: ({ prompt?: number } & Record<string, unknown>)[];
}

const scenarios: Scenario[] = readdirSync(SCENARIOS)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(SCENARIOS, f), 'utf8')) as Scenario)
  .filter((s) => existsSync(join(FIXTURES, `${s.name}.outfile.json`)));

/** 1-based prompt of a guard prompt id: `<id>` is the first, `<id>/<k>` the k-th under one id. */
function promptOf(promptId: string): number {
  const m = /\/(\d+)$/.exec(promptId);
  return m ? Number(m[1]) : 1;
}

describe('replay of the real gemini-cli 0.61.0 captures', () => {
  it('has captures for the scenarios', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(8);
  });

  it.each(scenarios)('$name: the decisions the design gives', async (s) => {
    const file = join(FIXTURES, `${s.name}.outfile.json`);
    const records = parseTelemetryText(readFileSync(file, 'utf8'), file);
    expect(detectWireProfiles(sampleTelemetry(records.spans, records.logs))[0]).toBe('gemini-cli');
    const r = await replayRecords(records, { mode: s.mode });
    const lines = r.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => decisionLine(d));
    const ours = lines.map(({ promptId, guard: _guard, ...rest }) => ({ prompt: promptOf(promptId), ...rest }));
    expect(ours).toEqual(s.expectedDecisions.map((d) => ({ prompt: 1, mode: s.mode, ...d })));
    expect(auditInvariants(r.decisions, r.emitted, inputIdentifiers(records), 'gemini-cli').every((i) => i.held)).toBe(true);
    // Logs alone suffice: the same decisions without any span.
    const logsOnly = await replayRecords({ ...records, spans: [] }, { mode: s.mode, profile: 'gemini-cli' });
    expect(logsOnly.decisions.filter((d) => d.outcome.decision !== 'none').map((d) => decisionLine(d))).toEqual(lines);
  });

  it('a fixture holds no prompt, argument, path or error text', () => {
    for (const f of readdirSync(FIXTURES)) {
      const text = readFileSync(join(FIXTURES, f), 'utf8');
      for (const needle of ['rtfg-prompt', '/tmp/', 'missing-', 'File not found', 'function_args', '"error"', 'request_text', 'command_args']) {
        expect(text.includes(needle), `${f}: ${needle}`).toBe(false);
      }
    }
  });
});

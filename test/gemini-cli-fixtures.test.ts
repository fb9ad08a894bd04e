import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGeminiCliHook } from '../src/cli/commands/gemini-cli-hook.js';
import { GEMINI_CLI_HOOK_EVENTS } from '../src/hooks/gemini-cli/hook-input.js';
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

type Expected = { prompt?: number } & Record<string, unknown>;

interface Scenario {
  name: string;
  mode: GuardMode;
  hooks?: 'none' | 'guard';
  prompts: unknown[];
  expectedDecisions: Expected[];
  /** Where the hook path sees less than telemetry (`hookDifference` says why). */
  expectedHookDecisions?: Expected[];
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
      const needles = ['rtfg-prompt', '/tmp/', 'missing-', 'File not found', 'function_args', 'request_text', 'command_args', 'llmContent', '"message"', '"prompt"', 'transcript_path', 'llm_request'];
      // Telemetry keeps no error text at all; a hook input keeps only `tool_response.error.type`.
      if (f.endsWith('.outfile.json')) needles.push('"error"');
      for (const needle of needles) expect(text.includes(needle), `${f}: ${needle}`).toBe(false);
    }
  });
});

/** The design's reminder, byte for byte. */
const REMINDER_TEXT =
  'System: the same tool execution has failed repeatedly for the same classified reason. Do not repeat the same approach. ' +
  'Inspect the returned result, change the approach or required preconditions, or explain the blocker.';

describe('the gemini-cli hook on the hook inputs gemini-cli 0.61.0 sent in the same runs', () => {
  const withHooks = scenarios.filter((s) => s.hooks === 'guard' && existsSync(join(FIXTURES, `${s.name}.hooks.jsonl`)));

  it('has hook inputs for the scenarios that ran the hook', () => {
    expect(withHooks.length).toBeGreaterThanOrEqual(8);
  });

  it.each(withHooks)('$name: the decisions the design gives on what the hook sees', async (s) => {
    const events: readonly string[] = GEMINI_CLI_HOOK_EVENTS;
    const inputs = readFileSync(join(FIXTURES, `${s.name}.hooks.jsonl`), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { hook_event_name: string; transcript?: unknown[] | null })
      .filter((i) => events.includes(i.hook_event_name));
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-gemini-hook-fixture-'));
    const outputs: Record<string, unknown>[] = [];
    const errors: string[] = [];
    try {
      const decisionsFile = join(dir, 'decisions.jsonl');
      for (const [i, { transcript, ...input }] of inputs.entries()) {
        // The session transcript as it was when gemini-cli sent this input (its turns with calls, reduced).
        let transcriptPath: string | undefined;
        if (Array.isArray(transcript)) writeFileSync((transcriptPath = join(dir, `transcript-${i}.jsonl`)), transcript.map((r) => `${JSON.stringify(r)}\n`).join(''));
        const sent = transcriptPath === undefined ? input : { ...input, transcript_path: transcriptPath };
        await runGeminiCliHook(JSON.stringify(sent), { mode: s.mode, stateDir: join(dir, 'state'), decisionsFile }, { out: (l) => outputs.push(JSON.parse(l) as Record<string, unknown>), err: (l) => errors.push(l) }, {});
      }
      // Every transcript was readable: no batch was judged incomplete for want of it.
      expect(errors).toEqual([]);
      const lines = existsSync(decisionsFile) ? readFileSync(decisionsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
      const ours = lines.map(({ promptId, guard: _guard, ...rest }) => ({ prompt: promptOf(String(promptId)), ...rest }));
      const expected = s.expectedHookDecisions ?? s.expectedDecisions;
      expect(ours).toEqual(expected.map((d) => ({ prompt: 1, mode: s.mode, ...d })));
      // Every invocation answered exactly one JSON object; the reminder went out once per warned candidate.
      expect(outputs).toHaveLength(inputs.length);
      const reminders = outputs.filter((o) => JSON.stringify(o).includes(REMINDER_TEXT)).length;
      expect(reminders).toBe(s.mode === 'shadow' ? 0 : expected.filter((d) => d.decision === 'warned').length);
      expect(outputs.filter((o) => o.continue === false)).toHaveLength(expected.filter((d) => d.decision === 'stopped').length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditInvariants, inputIdentifiers, sensitiveInputStrings } from '../src/replay/audit.js';
import { replayRecords } from '../src/replay/replay.js';
import { emptyRecordBatch } from '../src/otlp/records.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { byPrompt } from './helpers/expected-decisions.js';
import type { ExpectedPrompt } from './helpers/expected-decisions.js';

/**
 * Replays the captures recorded from real smolagents 1.26.0 and OpenAI Agents 0.24.0 runs
 * instrumented by OpenInference (conformance/genai, fixtures/openinference/<framework>-<version>/)
 * and checks the decisions the design requires (conformance/genai/expected.json, the table the
 * live conformance run checks).
 */
type Expected = Record<string, { prompts: ExpectedPrompt[]; untyped?: { prompts: ExpectedPrompt[] } }>;
const expected = JSON.parse(readFileSync(join('conformance', 'genai', 'expected.json'), 'utf8')) as Expected;

/**
 * How each framework's runs differ from the scripted rounds (conformance/genai/frameworks.mjs):
 * smolagents answers through its `final_answer` tool (one more successful batch per run); OpenAI
 * Agents' failed tool spans carry no error type (the `untyped` expectations).
 */
const FRAMEWORKS: Record<string, { finalBatch: boolean; untyped: boolean }> = {
  'smolagents-1.26.0': { finalBatch: true, untyped: false },
  'openai-agents-0.24.0': { finalBatch: false, untyped: true },
};

function wanted(framework: string, scenario: string): ExpectedPrompt[] | undefined {
  const f = FRAMEWORKS[framework];
  const e = expected[scenario];
  const prompts = (f?.untyped === true ? e?.untyped?.prompts : undefined) ?? e?.prompts;
  if (prompts === undefined || f?.finalBatch !== true) return prompts;
  return prompts.map((p) => ({ batches: p.batches + 1, calls: p.calls === undefined ? undefined : [...p.calls, 1], decisions: p.decisions }));
}

const root = join('fixtures', 'openinference');
const captures = readdirSync(root).flatMap((dir) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.otlp.jsonl'))
    .map((file) => ({ framework: dir, file, scenario: file.split('.')[0] as string, path: join(root, dir, file) })),
);

describe('replay of the recorded OpenInference captures (smolagents 1.26.0, OpenAI Agents 0.24.0)', () => {
  it('holds both frameworks, every scenario of scenarios.py', () => {
    expect(new Set(captures.map((c) => c.framework))).toEqual(new Set(Object.keys(FRAMEWORKS)));
    expect(captures.length).toBe(14);
  });

  it.each(captures)('$framework $file: auto-detected as openinference, the design\'s decisions, invariants held', async ({ framework, scenario, path }) => {
    const records = parseTelemetryText(readFileSync(path, 'utf8'), path, emptyRecordBatch());
    const r = await replayRecords(records);
    expect(r.profile).toBe('openinference');
    const want = wanted(framework, scenario);
    expect(want).toBeDefined();
    const got = byPrompt(r.decisions);
    expect(got.map((p) => ({ batches: p.batches, decisions: p.decisions }))).toEqual(want?.map((p) => ({ batches: p.batches, decisions: p.decisions })));
    want?.forEach((p, i) => {
      if (p.calls !== undefined) expect(got[i]?.calls).toEqual(p.calls);
    });
    expect(r.decisions.every((d) => d.route === 'agent_run')).toBe(true);
    const invariants = auditInvariants(r.decisions, r.emitted, inputIdentifiers(records), r.namespace);
    expect(invariants.filter((i) => !i.held)).toEqual([]);
    const emitted = JSON.stringify(r.emitted);
    for (const s of sensitiveInputStrings(records)) expect(emitted).not.toContain(s);
    for (const s of ['/missing/', '/locked/', 'No such file', 'FileNotFoundError', 'PermissionError', 'read_file']) expect(emitted).not.toContain(s);
  });
});

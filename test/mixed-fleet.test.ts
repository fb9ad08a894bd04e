/**
 * A mixed fleet in one pipeline (issue 30): every agent's captures under `fixtures/` (qwen-code,
 * Claude Code, gemini-cli, Codex, GenAI conventions, and each agent added since) together give, for every prompt, exactly the decisions each capture gives alone. The expected
 * values are each capture replayed alone, which the per-agent suites check against the design and
 * the in-tree guard (replay.test.ts, claude-code-fixtures.test.ts, genai-captures.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseReplayInput } from '../src/replay/replay-input.js';
import type { TelemetrySource } from '../src/replay/replay-input.js';
import { replayRecords } from '../src/replay/replay.js';
import type { ReplayResult } from '../src/replay/replay.js';

const FIXTURES = new URL('../fixtures/', import.meta.url);


/** Every telemetry capture in the repository, by agent folder. */
function captures(): { agent: string; path: string }[] {
  const out: { agent: string; path: string }[] = [];
  const walk = (dir: URL, agent: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(new URL(`${e.name}/`, dir), agent);
      else if ((e.name.endsWith('.outfile.json') || e.name.endsWith('.otlp.jsonl'))) out.push({ agent, path: new URL(e.name, dir).pathname });
    }
  };
  for (const e of readdirSync(FIXTURES, { withFileTypes: true })) if (e.isDirectory() && e.name !== 'cases') walk(new URL(`${e.name}/`, FIXTURES), e.name);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

const source = (path: string): TelemetrySource => ({ text: readFileSync(path), file: path });

/** Per prompt: its batch decisions, unjudged batches and repetition decisions, in order. */
function byPrompt(r: ReplayResult): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (id: string, line: string): void => {
    const list = out.get(id) ?? [];
    list.push(line);
    out.set(id, list);
  };
  for (const d of r.decisions) add(d.promptId, `batch ${d.batch} ${d.mode} ${d.outcome.decision} ${d.outcome.resetReason ?? ''} ${d.receipt.observations.length} call(s)`);
  for (const u of r.unjudgedBatches) add(u.promptId, `unjudged ${u.batch} ${u.reason}`);
  for (const x of r.repetition) add(x.promptId, `repetition ${x.sessionKey} ${x.outcome.decision}`);
  return out;
}

describe('mixed fleet: one replay input holding every agent', () => {
  it('every prompt gets exactly the decisions its capture gives alone', async () => {
    const all = captures();
    const agents = new Set(all.map((c) => c.agent));
    for (const a of ['qwen-code-0.24.4', 'claude-code-2.1.328', 'gemini-cli-0.61.0', 'codex-0.169.0', 'genai']) expect(agents).toContain(a);
    const expected = new Map<string, string[]>();
    const profilesAlone = new Set<string>();
    for (const c of all) {
      const alone = await replayRecords(parseReplayInput([source(c.path)]));
      profilesAlone.add(alone.profile);
      for (const [id, lines] of byPrompt(alone)) {
        // Captures do not share prompts: a prompt judged in two captures would merge when together.
        expect(expected.has(id), `${id} in two captures`).toBe(false);
        expected.set(id, lines);
      }
    }
    for (const p of ['qwen-code', 'claude-code', 'gemini-cli', 'codex', 'genai']) expect(profilesAlone).toContain(p);
    const together = await replayRecords(parseReplayInput(all.map((c) => source(c.path))));
    expect(new Set(together.profiles)).toEqual(profilesAlone);
    const got = byPrompt(together);
    expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
    // Captures recorded hours apart share one virtual clock: a prompt left open (its final batch
    // awaiting the next request) longer than promptIdleMillis (2 h) before a later capture's
    // records is evicted as idle, as it would be live, and the summary says so. It keeps every
    // decision it had before the eviction.
    const idle = new Set(together.evictions.filter((e) => e.reason === 'idle').map((e) => e.promptId));
    for (const [id, lines] of expected) {
      if (idle.has(id)) expect(lines.slice(0, got.get(id)?.length ?? 0), id).toEqual(got.get(id));
      else expect(got.get(id), id).toEqual(lines);
    }
  });
});

describe('many Claude Code sessions in one input, one profile forced', () => {
  // Claude Code's request_id and tool_use_id come from the model provider: the conformance fake
  // provider numbers them per session (every capture here has req_p1r1, toolu_p1r1_0, ...). The
  // profile keys them per session.id, so sessions never share a response or a call.
  it('each session gets exactly the decisions it gets alone (--profile claude-code)', async () => {
    const cc = captures().filter((c) => c.agent.startsWith('claude-code-'));
    expect(cc.length).toBeGreaterThanOrEqual(18);
    const expected = new Map<string, string[]>();
    for (const c of cc) for (const [id, lines] of byPrompt(await replayRecords(parseReplayInput([source(c.path)], { profile: 'claude-code' })))) expected.set(id, lines);
    const got = byPrompt(await replayRecords(parseReplayInput(cc.map((c) => source(c.path)), { profile: 'claude-code' })));
    expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [id, lines] of expected) expect(got.get(id), id).toEqual(lines);
  });
});

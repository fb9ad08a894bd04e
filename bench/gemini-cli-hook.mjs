#!/usr/bin/env node
/* global process, console */
// H1 for the gemini-cli hook: the wall time of one hook invocation per hook event, as the RATIO of
// its median to the median of `node -e 0` measured in the same run, in ABBA order (goal: ≤ 1.2x,
// issue #32's H1 for the Claude Code hook).
//
//   npm run bench:hook              (= npm run build --silent, then bench/hook.mjs and this file)
//   node bench/gemini-cli-hook.mjs [--runs 41]
//
// Each run spawns what `gemini-cli-hook --print-settings` registers, the hook's own entry
// `dist/bin/gemini-cli-hook.cjs --mode enforce`, with an input shaped as gemini-cli 0.61.0 sends
// it. BeforeAgent, BeforeModel and AfterAgent read the session transcript, here a real-shaped one
// of 40 model turns with their calls' arguments and results (about 0.2 MB), the latest turn last;
// the state directory is the session's own, so the state file is read and written as in a loop.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HOOK = join(ROOT, 'dist/bin/gemini-cli-hook.cjs');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '41' } } });
const RUNS = Math.max(5, Number(values.runs) | 0);
if (!existsSync(HOOK)) {
  console.error(`bench/gemini-cli-hook.mjs: ${HOOK} is missing; run npm run build first`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'rtfg-gemini-hook-bench-'));
const transcript = join(dir, 'session.jsonl');
{
  const lines = [JSON.stringify({ sessionId: 'bench-session', projectHash: 'f'.repeat(64), startTime: '2026-12-02T05:00:00.000Z', lastUpdated: '2026-12-02T05:00:00.000Z', kind: 'main' })];
  for (let t = 0; t < 40; t++) {
    const turn = { id: `5e2c0a3d-0000-4000-8000-${String(t).padStart(12, '0')}`, timestamp: '2026-12-02T05:00:02.000Z', type: 'gemini', content: '', thoughts: [], model: 'gemini-2.5-flash' };
    const toolCalls = [0, 1].map((i) => ({
      id: `read_file__call_${t}_${i}`,
      name: 'read_file',
      args: { file_path: `/home/u/work/src/missing-${t}-${i}.ts` },
      result: [{ functionResponse: { id: `read_file__call_${t}_${i}`, name: 'read_file', response: { error: `File not found: /home/u/work/src/missing-${t}-${i}.ts ${'x'.repeat(1500)}` } } }],
      status: 'error',
      timestamp: '2026-12-02T05:00:02.000Z',
      resultDisplay: 'File not found.',
      description: '',
      displayName: 'ReadFile',
      renderOutputAsMarkdown: false,
    }));
    lines.push(JSON.stringify(turn), JSON.stringify({ $set: { lastUpdated: '2026-12-02T05:00:02.000Z' } }), JSON.stringify({ ...turn, toolCalls }));
    lines.push(JSON.stringify({ id: `u-${t}`, type: 'user', content: toolCalls.map((c) => c.result[0]) }));
  }
  writeFileSync(transcript, `${lines.join('\n')}\n`);
}
const at = () => new Date().toISOString();
const base = (event) => ({ session_id: 'bench-session', transcript_path: transcript, cwd: '/home/u/work', hook_event_name: event, timestamp: at() });
const EVENTS = {
  BeforeAgent: () => ({ ...base('BeforeAgent'), prompt: 'fix it' }),
  BeforeTool: (i) => ({ ...base('BeforeTool'), tool_name: 'read_file', tool_input: { file_path: `/home/u/work/src/missing-${i}.ts` } }),
  AfterTool: (i) => ({
    ...base('AfterTool'),
    tool_name: 'read_file',
    tool_input: { file_path: `/home/u/work/src/missing-${i}.ts` },
    tool_response: { llmContent: 'x', returnDisplay: 'File not found.', error: { message: 'File not found', type: 'file_not_found' } },
  }),
  BeforeModel: () => ({ ...base('BeforeModel'), llm_request: { model: 'gemini-2.5-flash', messages: [] } }),
  AfterAgent: () => ({ ...base('AfterAgent'), prompt: 'fix it', prompt_response: 'done', stop_hook_active: false }),
};

/** Elapsed milliseconds of one child process, with `input` on its stdin. */
function timed(args, input) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { input, stdio: ['pipe', 'pipe', 'pipe'], encoding: 'utf8', timeout: 30_000 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  if (args[0] === HOOK && r.stderr !== '') throw new Error(`the hook said: ${r.stderr}`);
  return ms;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const hook = Object.fromEntries(Object.keys(EVENTS).map((e) => [e, []]));
const node = Object.fromEntries(Object.keys(EVENTS).map((e) => [e, []]));
const state = join(dir, 'state');
try {
  for (let i = 0; i < RUNS; i++) {
    for (const [event, make] of Object.entries(EVENTS)) {
      const input = JSON.stringify(make(i));
      // ABBA: a shared machine's drift lands on both sides.
      if (i % 2 === 0) {
        node[event].push(timed(['-e', '0'], ''));
        hook[event].push(timed([HOOK, '--mode', 'enforce', '--state-dir', state], input));
      } else {
        hook[event].push(timed([HOOK, '--mode', 'enforce', '--state-dir', state], input));
        node[event].push(timed(['-e', '0'], ''));
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`H1 gemini-cli-hook (dist/bin/gemini-cli-hook.cjs --mode enforce), median of ${RUNS} runs per event, ABBA with node -e 0 (${process.version})`);
for (const event of Object.keys(EVENTS)) {
  const ratio = median(hook[event]) / median(node[event]);
  console.log(`${event.padEnd(12)} hook ${median(hook[event]).toFixed(1).padStart(6)} ms  node -e 0 ${median(node[event]).toFixed(1).padStart(6)} ms  ratio ${ratio.toFixed(3)}x  ${ratio <= 1.2 ? 'PASS' : 'FAIL'} (goal <= 1.2x)`);
}

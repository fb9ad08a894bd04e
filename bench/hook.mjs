#!/usr/bin/env node
/* global process, console */
// H1: what one Claude Code hook event costs, against a bare Node start measured in the same run.
//
//   npm run bench:hook              (= npm run build --silent && node bench/hook.mjs)
//   node bench/hook.mjs --runs 61 --strict
//
// Claude Code starts the hook command once per PreToolUse, PostToolUse, PostToolUseFailure and
// PostToolBatch and waits for it, so the cost that matters is the elapsed time of that process.
// Each run spawns the hook entry the printed settings run (`dist/bin/claude-code-hook.cjs`, enforce
// mode, its own state directory) with a realistic hook input on stdin, and `node -e 0` right
// before or after it (ABBA order), `--runs` times each; the result is the ratio of the two medians.
// The events of one run form a real session: every PreToolUse has its own command (the identical-
// call breaker stays quiet), every call fails, and a PostToolBatch closes each batch of 3, so the
// state file grows and is read as it does in a loop. Rows without a goal are `info`.
//
// Goal (issue #32, "Speed"): H1, the command hook per event, median ≤ 1.2x `node -e 0`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HOOK = join(ROOT, 'dist/bin/claude-code-hook.cjs');
const CLI = join(ROOT, 'dist/bin/repeated-tool-failure-guard.js');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '41' }, strict: { type: 'boolean', default: false } } });
const RUNS = Math.max(5, Number(values.runs) | 0);
if (!existsSync(HOOK)) {
  console.error(`bench/hook.mjs: ${HOOK} is missing; run npm run build first`);
  process.exit(1);
}

const common = (i) => ({
  session_id: 'bench-session',
  transcript_path: '/home/u/.claude/projects/x/bench-session.jsonl',
  cwd: '/home/u/work',
  prompt_id: 'bench-prompt',
  permission_mode: 'default',
  tool_name: 'Bash',
  tool_input: { command: `git status -- p${i}`, description: 'Inspect the repository' },
  tool_use_id: `toolu_${i}`,
});
const EVENTS = {
  PreToolUse: (i) => ({ ...common(i), hook_event_name: 'PreToolUse' }),
  PostToolUseFailure: (i) => ({ ...common(i), hook_event_name: 'PostToolUseFailure', error: 'Exit code 128\nfatal: not a git repository', is_interrupt: false, duration_ms: 12 }),
  PostToolBatch: (i) => {
    const { tool_name, tool_input, tool_use_id, ...rest } = common(i);
    const calls = [0, 1, 2].map((k) => ({ tool_name, tool_input, tool_use_id: `${tool_use_id}_${k}`, tool_response: 'Exit code 128\nfatal: not a git repository' }));
    return { ...rest, hook_event_name: 'PostToolBatch', tool_calls: calls };
  },
};

/** Elapsed milliseconds of one child process, with `input` on its stdin. */
function timed(args, input) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { input, stdio: ['pipe', 'ignore', 'pipe'], encoding: 'utf8', timeout: 30_000 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  if (r.stderr) throw new Error(`${args.join(' ')} said on stderr: ${r.stderr}`);
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** `RUNS` interleaved pairs (ABBA) of the subject and `node -e 0`; the medians and their ratio. */
function compare(subjectArgs, inputOf) {
  const subject = [];
  const base = [];
  for (let i = 0; i < RUNS; i++) {
    const input = JSON.stringify(inputOf(i));
    if (i % 2 === 0) {
      base.push(timed(['-e', '0'], ''));
      subject.push(timed(subjectArgs, input));
    } else {
      subject.push(timed(subjectArgs, input));
      base.push(timed(['-e', '0'], ''));
    }
  }
  return { subject: median(subject), base: median(base), ratio: median(subject) / median(base) };
}

const state = mkdtempSync(join(tmpdir(), 'rtfg-bench-hook-'));
const rows = [];
try {
  // Warm the file cache for both sides.
  for (let i = 0; i < 3; i++) {
    timed(['-e', '0'], '');
    timed([HOOK, '--mode', 'enforce', '--state-dir', join(state, 'warm')], JSON.stringify(EVENTS.PreToolUse(i)));
  }
  const hook = (dir) => [HOOK, '--mode', 'enforce', '--state-dir', join(state, dir)];
  const h1 = compare(hook('h1'), EVENTS.PreToolUse);
  rows.push({ id: 'H1', what: 'hook entry, PreToolUse (the breaker reads and writes the state)', ...h1, goal: 1.2 });
  rows.push({ id: 'H1f', what: 'hook entry, PostToolUseFailure', ...compare(hook('h1f'), EVENTS.PostToolUseFailure) });
  rows.push({ id: 'H1b', what: 'hook entry, PostToolBatch of 3 failed calls (reduces the batch)', ...compare(hook('h1b'), EVENTS.PostToolBatch) });
  rows.push({ id: 'H1c', what: 'PreToolUse through `repeated-tool-failure-guard claude-code-hook` (the whole CLI)', ...compare([CLI, 'claude-code-hook', '--mode', 'enforce', '--state-dir', join(state, 'h1c')], EVENTS.PreToolUse) });
} finally {
  rmSync(state, { recursive: true, force: true });
}

console.log(`H1: one Claude Code hook event against \`node -e 0\`, elapsed time, median of ${RUNS} interleaved runs each (${process.version}, ${process.platform}-${process.arch})`);
for (const r of rows) {
  const verdict = r.goal === undefined ? 'info' : r.ratio <= r.goal ? 'PASS' : 'FAIL';
  r.pass = r.goal === undefined ? undefined : r.ratio <= r.goal;
  console.log(
    `${r.id.padEnd(4)} ${r.what.padEnd(82)} ${r.subject.toFixed(1).padStart(7)} ms vs ${r.base.toFixed(1).padStart(6)} ms = ${r.ratio.toFixed(3)}x  ${r.goal === undefined ? '' : `goal <= ${r.goal.toFixed(2)}x `}${verdict}`,
  );
}
const goals = rows.filter((r) => r.goal !== undefined);
console.log(`RESULT: ${goals.filter((r) => r.pass).length}/${goals.length} PASS`);
if (values.strict && goals.some((r) => !r.pass)) process.exitCode = 1;

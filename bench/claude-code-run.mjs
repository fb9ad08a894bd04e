#!/usr/bin/env node
/* global process, console */
// H3: what the guard's hooks add to a whole Claude Code run, on the real CLI (2.1.328, installed by
// `npm run conformance:install`) against the fake Anthropic API on loopback (it answers in
// milliseconds: the worst case; with a real model the ratio is smaller).
//
//   node bench/claude-code-run.mjs [--runs 3]      (npm run bench:hook runs it after H1 and H2)
//
// The run: one prompt whose model asks for one failing Bash call per response, 10 responses in a
// row, then answers (10 calls, 10 batches, 30 guard hook events: PreToolUse, PostToolUseFailure,
// PostToolBatch each). It is timed from the `claude -p` spawn to its exit, three ways side by side,
// `--runs` times each in rotating order:
//   - none: no hooks at all;
//   - command: the settings `claude-code-hook --print-settings --mode shadow` prints (the one-file
//     hook entry, by absolute paths);
//   - http: the settings `claude-code-hook --print-settings --http <url>` prints, answered by one
//     resident `serve --claude-code-hook-port` (shadow, a bearer token).
// No telemetry and no logging hook run in any of them. Shadow, so every variant runs all 10
// responses (an enforced stop would end the run early and flatter the hooks).
//
// Goals (issue #32, "Speed"): H3 command ≤ 2.0x none, H3 http ≤ 1.1x none (ratios of medians).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { reexecIsolated } from '../conformance/run-scenario.mjs';
import { CLAUDE_CLI, claudeVersion, missingClaudeCli, OUR_CLI, runClaudeScenario, startHookServe } from '../conformance/claude-code/run-scenario.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const RUNS = Math.max(1, Number(values.runs) | 0);

const missing = missingClaudeCli();
if (missing) {
  console.log(`H3   not measured: ${missing}`);
  process.exit(0);
}
if (!existsSync(OUR_CLI)) {
  console.log(`H3   not measured: ${OUR_CLI} is missing; run npm run build first`);
  process.exit(0);
}
const code = reexecIsolated(1_800_000);
if (code !== undefined) process.exit(code);

/** @param {'none' | 'guard'} hooks */
const scenario = (hooks) => ({
  name: `bench-h3-${hooks}`,
  mode: /** @type {const} */ ('shadow'),
  hooks,
  cwd: { git: false, files: { 'README.md': '# demo\n' } },
  prompts: [
    {
      text: 'Find the git remote of this project',
      rounds: Array.from({ length: 10 }, (_, i) => [{ name: 'Bash', args: { command: `git remote -v # ${i + 1}`, description: 'Inspect the repository' } }]),
    },
  ],
  expectedDecisions: [],
  expectedOutcome: { mainRequests: [11] },
});

const printed = spawnSync(process.execPath, [OUR_CLI, 'claude-code-hook', '--print-settings', '--mode', 'shadow'], { encoding: 'utf8', timeout: 30_000 });
const command = JSON.parse(printed.stdout).hooks.PreToolUse[0].hooks[0].command;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const dir = mkdtempSync(join(tmpdir(), 'rtfg-bench-h3-'));
/** @type {Record<'none' | 'command' | 'http', number[]>} */
const times = { none: [], command: [], http: [] };
const serve = await startHookServe({ mode: 'shadow', decisionsFile: join(dir, 'http-decisions.jsonl'), dir, log: () => undefined });
try {
  /** @type {('none' | 'command' | 'http')[]} */
  const order = ['none', 'command', 'http'];
  for (let run = -1; run < RUNS; run++) {
    // Run -1 warms the file cache and the CLI's first start; not counted.
    for (let k = 0; k < order.length; k++) {
      const variant = order[(k + Math.max(0, run)) % order.length];
      const r = await runClaudeScenario(scenario(variant === 'none' ? 'none' : 'guard'), {
        outdir: join(dir, `${variant}-${run}`),
        bare: true,
        hookTransport: variant === 'http' ? 'http' : 'command',
        guardCommand: command,
        hookServe: serve,
      });
      const p = r.prompts[0];
      const calls = r.requests.filter((q) => q.kind === 'main').length;
      if (p === undefined || p.exitCode !== 0 || calls !== 11) throw new Error(`${variant}: the run did not complete (exit ${p?.exitCode}, ${calls} main requests, expected 11)`);
      if (run >= 0) times[variant].push(p.elapsedMillis);
    }
  }
} finally {
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
}

const none = median(times.none);
console.log(`H3: the 10-call failing run on the real Claude Code ${claudeVersion()} (${CLAUDE_CLI.replace(`${ROOT}/`, '')}) with the fake API, elapsed time of claude -p, median of ${RUNS} rotating runs each (${process.version})`);
for (const [id, variant, goal, what] of /** @type {const} */ ([
  ['H3c', 'command', 2.0, 'command hook as --print-settings prints it, against no hooks'],
  ['H3h', 'http', 1.1, 'HTTP hook (serve --claude-code-hook-port), against no hooks'],
])) {
  const m = median(times[variant]);
  const ratio = m / none;
  console.log(`${id.padEnd(4)} ${what.padEnd(82)} ${m.toFixed(0).padStart(7)} ms vs ${none.toFixed(0).padStart(6)} ms = ${ratio.toFixed(3)}x  goal <= ${goal.toFixed(2)}x ${ratio <= goal ? 'PASS' : 'FAIL'}`);
}
console.log(`     runs (ms): none ${times.none.map((t) => t.toFixed(0)).join(' ')}; command ${times.command.map((t) => t.toFixed(0)).join(' ')}; http ${times.http.map((t) => t.toFixed(0)).join(' ')}`);

/* global process, console */
// H1 for a command hook: the wall time of one hook invocation per hook event, as the RATIO of its
// median to the median of `node -e 0` measured in the same run, interleaved (goal: <= 1.2x, issue
// #32's H1 for the Claude Code hook). Shared by bench/gemini-cli-hook.mjs and bench/codex-hook.mjs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Wall milliseconds of one child run. */
function time(args, input) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { input, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Time each event's hook invocation against `node -e 0`, interleaved, and print one line per event.
 *
 * @param {string} label the hook command, for the heading
 * @param {(stateDir: string) => string[]} argsOf the node arguments of one invocation with a fresh state directory
 * @param {Record<string, () => unknown>} events hook inputs by event name (made afresh for each run)
 * @param {number} runs runs per event
 */
export function benchHookEvents(label, argsOf, events, runs) {
  const rows = [];
  for (const [event, make] of Object.entries(events)) {
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-hook-bench-'));
    const hook = [];
    const node = [];
    try {
      for (let i = 0; i < runs; i++) {
        node.push(time(['-e', '0'], ''));
        hook.push(time(argsOf(join(dir, 'state')), JSON.stringify(make())));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const ratio = median(hook) / median(node);
    rows.push(`${event.padEnd(16)} hook ${median(hook).toFixed(1).padStart(6)} ms  node -e 0 ${median(node).toFixed(1).padStart(6)} ms  ratio ${ratio.toFixed(2)}x  ${ratio <= 1.2 ? 'PASS' : 'FAIL'} (goal <= 1.2x)`);
  }
  console.log(`H1 ${label}, median of ${runs} runs per event, interleaved with node -e 0 (${process.version})`);
  for (const r of rows) console.log(r);
  process.exitCode = 0; // the verdict is printed; it never fails a run (timings on a shared machine)
}

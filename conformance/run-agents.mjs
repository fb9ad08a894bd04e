// @ts-check
/* global process, console */
/**
 * `npm run test:conformance`: the conformance run of every agent, one after the other, each with
 * its own table and `N passed, M failed` line: qwen-code (`conformance/run-all.mjs`), then Claude
 * Code (`conformance/claude-code/run-all.mjs`), then gemini-cli (`conformance/gemini-cli/run-all.mjs`);
 * the last two need `npm run conformance:install` first.
 * Exits 0 only if every agent's run exited 0; prints one line per agent.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const agents = [
  ['qwen-code', join(here, 'run-all.mjs')],
  ['claude-code', join(here, 'claude-code', 'run-all.mjs')],
  ['gemini-cli', join(here, 'gemini-cli', 'run-all.mjs')],
];
/** @type {string[]} */
const lines = [];
let failed = 0;
for (const [name, script] of agents) {
  console.log(`\n== ${name}`);
  // Each run bounds itself (isolated re-execution killed after at most 330 s; Claude Code 720 s; gemini-cli 660 s).
  const r = spawnSync(process.execPath, [/** @type {string} */ (script)], { stdio: 'inherit', timeout: 780_000 });
  const ok = r.status === 0;
  if (!ok) failed++;
  lines.push(`${name}: ${ok ? 'passed' : `FAILED (exit ${r.status ?? r.signal})`}`);
}
console.log(`\nconformance per agent:\n  ${lines.join('\n  ')}`);
process.exit(failed === 0 ? 0 : 1);

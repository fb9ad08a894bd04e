// @ts-check
/* global process, console */
/**
 * Runs the selected scenarios one after another, prints PASS/FAIL with each problem, and exits 0
 * when every one passed, 1 otherwise (the in-process conformance runs: the AI SDK, pi).
 *
 * @template {{ name: string }} S
 * @param {string} title printed first
 * @param {S[]} scenarios all scenarios
 * @param {string[]} names the scenarios to run (empty: all)
 * @param {(s: S) => Promise<string[]>} run one scenario; resolves with its problems
 */
export async function runSelected(title, scenarios, names, run) {
  const selected = names.length === 0 ? scenarios : scenarios.filter((s) => names.includes(s.name));
  console.log(`${title}, ${selected.length} scenario(s)`);
  let failed = 0;
  for (const s of selected) {
    const problems = await run(s);
    console.log(`${problems.length === 0 ? 'PASS' : 'FAIL'}  ${s.name}`);
    for (const p of problems) console.log(`      ${p}`);
    if (problems.length > 0) failed += 1;
  }
  console.log(`${selected.length - failed}/${selected.length} passed`);
  process.exit(failed === 0 ? 0 : 1);
}

/* global process, console, Buffer */
// The in-process hook's answer time on hostile arguments (docs/reliability.md, "beforeToolCall
// answers within a bound"): beforeToolCall with each shape of issue 34 item 6, against a plain call
// measured in the same run; the shapes get no verdict (none), and the time is bounded by the work
// bound (fingerprint-bound.ts), not by the shape's size.
// Usage: npm run build && node bench/hook-bounds.mjs [runs]
// Goal: each shape answers within 250 ms (median), whatever its size.
const { createRepeatedToolFailureGuard } = await import('../dist/index.js');
const runs = Number(process.argv[2] ?? 5);
const MiB = 1024 * 1024;
const dag = (d) => {
  let node = { leaf: 'x' };
  for (let i = 0; i < d; i++) node = { left: node, right: node };
  return node;
};
const oneMiB = 'x'.repeat(MiB);
const SHAPES = [
  { name: 'a plain call (baseline)', args: (r) => ({ command: `git status ${r}`, description: 'Inspect the repository' }) },
  { name: 'one 1 MiB string, 3 references (within the bound)', args: (r) => ({ r, parts: Array.from({ length: 3 }, () => oneMiB) }) },
  { name: '4,000 references to one 1 MiB string', args: () => ({ parts: Array.from({ length: 4_000 }, () => oneMiB) }) },
  { name: 'a 50 MiB Buffer', args: () => ({ file: Buffer.alloc(50 * MiB) }) },
  { name: 'a toJSON returning a depth-22 DAG', args: () => ({ toJSON: () => dag(22) }) },
  { name: 'a depth-60 DAG', args: () => dag(60) },
];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let failed = false;
console.log(`beforeToolCall, median of ${runs} (node ${process.version})`);
for (const shape of SHAPES) {
  const guard = createRepeatedToolFailureGuard({ mode: 'enforce', sweepIntervalMillis: 0 });
  const times = [];
  let answer;
  for (let r = 0; r < runs; r++) {
    const args = shape.args(r);
    const t0 = process.hrtime.bigint();
    answer = guard.control.beforeToolCall({ sessionId: 's', promptId: 's########1', callId: `c${r}`, toolName: 'acp_status', arguments: args }).type;
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  await guard.shutdown();
  const m = median(times);
  const ok = m <= 250;
  failed ||= !ok;
  console.log(`${shape.name.padEnd(52)} ${m.toFixed(1).padStart(8)} ms  answer ${answer}  ${ok ? 'PASS' : 'FAIL'}`);
}
process.exitCode = failed ? 1 : 0;

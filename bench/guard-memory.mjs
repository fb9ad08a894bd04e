/* global process, console, gc */
// Worst-case memory of the in-process guard at its defaults: prompts that each hold a full batch
// of open calls (maxCallsPerBatch = 1,024), 10,000 of them (maxOpenPrompts). Prints the heap the
// guard holds after a full GC, and its own byte estimate.
//
//   npm run build && node --expose-gc bench/guard-memory.mjs [prompts] [callsPerPrompt] [maxHeldBytes]
import { createRepeatedToolFailureGuard } from '../dist/index.js';

const [prompts = 10_000, calls = 1_024, maxHeldBytes] = process.argv.slice(2).map(Number);
if (typeof gc !== 'function') throw new Error('run with node --expose-gc');
gc();
const before = process.memoryUsage().heapUsed;
const guard = createRepeatedToolFailureGuard({ mode: 'shadow', sweepIntervalMillis: 0, ...(maxHeldBytes ? { maxHeldBytes } : {}) });
let evictions = 0;
guard.addListener({ onEviction: () => (evictions += 1) });
const t0 = Date.now();
for (let p = 0; p < prompts; p++) {
  const promptId = `0b5e2a4c-5a1f-4c0e-9d7b-${String(p).padStart(12, '0')}########1`;
  guard.engine.observePrompt(promptId, { foreground: true, sessionId: promptId.slice(0, 36) });
  for (let c = 0; c < calls; c++) {
    guard.engine.updateCall({ promptId, callId: `call_${p}_${c}_4f9a2c`, opened: 'tool', timeMillis: t0, facts: { toolName: 'read_file' } });
  }
}
gc();
const held = process.memoryUsage().heapUsed - before;
const MiB = 1024 * 1024;
console.log(
  JSON.stringify({
    prompts,
    callsPerPrompt: calls,
    maxHeldBytes: guard.options.maxHeldBytes,
    openPrompts: guard.engine.openPromptCount,
    evictions,
    estimateMiB: +(guard.engine.heldBytes / MiB).toFixed(1),
    heapMiB: +(held / MiB).toFixed(1),
    seconds: (Date.now() - t0) / 1000,
  }),
);

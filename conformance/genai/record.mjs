// @ts-check
/* global process, console */
/**
 * Records every scenario of every framework and generation to fixtures/genai/<framework>-<version>/
 * as OTLP JSON lines (the collector `file` exporter shape). Needs install.sh first.
 *
 *   node conformance/genai/record.mjs [framework-id ...]
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { FRAMEWORKS, fixturePath, here, recordScenario, venvReady } from './frameworks.mjs';

const repoRoot = resolve(here, '..', '..');
if (!venvReady()) {
  console.error('genai conformance: run `npm run conformance:genai:install` first');
  process.exit(1);
}
const only = process.argv.slice(2);
let failed = 0;
for (const framework of FRAMEWORKS) {
  if (only.length > 0 && !only.includes(framework.id)) continue;
  for (const generation of framework.generations) {
    for (const scenario of framework.scenarios) {
      const out = join(repoRoot, fixturePath(framework, generation, scenario));
      mkdirSync(dirname(out), { recursive: true });
      const { code, stderr } = await recordScenario(framework, generation, scenario, out);
      console.log(`${code === 0 ? 'recorded' : 'FAILED'} ${fixturePath(framework, generation, scenario)}`);
      if (code !== 0) {
        failed += 1;
        console.error(stderr);
      }
    }
  }
}
process.exit(failed === 0 ? 0 : 1);

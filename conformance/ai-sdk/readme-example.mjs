// @ts-check
/* global process, console */
/**
 * Runs README's AI SDK example as written, with the real SDK of conformance/ai-sdk/<sdk>: the
 * example's `./model.js` is a mock model (`ai/test`) that keeps reading two missing files, two
 * calls a response. By the design the fourth batch warns and the fifth stops (enforce), so the
 * example prints `5 steps`.
 *
 * Usage: node conformance/ai-sdk/readme-example.mjs --sdk v6|v7
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readmeBlock } from '../readme-block.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values } = parseArgs({ options: { sdk: { type: 'string', default: 'v6' } } });
const dir = join(here, String(values.sdk), 'readme-example');
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'node_modules'), { recursive: true });
symlinkSync(root, join(dir, 'node_modules', 'repeated-tool-failure-guard'));
writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
writeFileSync(join(dir, 'example.js'), readmeBlock('ai-sdk'));
writeFileSync(
  join(dir, 'model.js'),
  `import { MockLanguageModelV3 } from 'ai/test';
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
let n = 0;
export const model = new MockLanguageModelV3({
  doGenerate: async () => {
    n += 1;
    const call = (i, path) => ({ type: 'tool-call', toolCallId: 'c' + n + '-' + i, toolName: 'read_file', input: JSON.stringify({ path }) });
    return { content: [call(1, 'notes.txt'), call(2, 'notes.md')], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] };
  },
});
`,
);
const run = spawnSync(process.execPath, ['example.js'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
rmSync(dir, { recursive: true, force: true });
const out = `${run.stdout}${run.stderr}`.trim();
const ok = run.status === 0 && run.stdout.trim() === '5 steps';
console.log(`${ok ? 'PASS' : 'FAIL'}  README example (ai-sdk) on Node ${process.versions.node}: ${JSON.stringify(out.slice(-300))}, expected "5 steps"`);
process.exit(ok ? 0 : 1);

// @ts-check
/* global process, console */
/**
 * Type-checks the spreads a TypeScript user writes against the real SDK's types: the guard's
 * settings spread into `generateText`, `streamText` and `new ToolLoopAgent`, with the caller's own
 * stop condition and `prepareStep`, using the repository's `tsc` and the built `dist/ai-sdk.d.ts`.
 *
 * Usage: node conformance/ai-sdk/typecheck.mjs --sdk v6|v7
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values } = parseArgs({ options: { sdk: { type: 'string', default: 'v6' } } });
const dir = join(here, String(values.sdk), 'typecheck');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
writeFileSync(
  join(dir, 'tsconfig.json'),
  JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true }, files: ['check.ts'] }),
);
writeFileSync(
  join(dir, 'check.ts'),
  `import { generateText, streamText, stepCountIs, tool, ToolLoopAgent } from 'ai';
import { z } from 'zod';
import { createAiSdkGuard } from '${join(root, 'dist', 'ai-sdk.js')}';
declare const model: Parameters<typeof generateText>[0]['model'];
const guard = createAiSdkGuard({ mode: 'enforce' });
const tools = { read_file: tool({ inputSchema: z.object({ path: z.string() }), execute: async ({ path }: { path: string }) => path }) };
export const a = generateText({ model, tools, prompt: 'x', ...guard.settings({ stopWhen: stepCountIs(20) }) });
export const b = streamText({ model, tools, prompt: 'x', ...guard.settings() });
export const c = new ToolLoopAgent({ model, tools, ...guard.settings({ stopWhen: [stepCountIs(20)], prepareStep: ({ stepNumber }: { stepNumber: number }) => (stepNumber > 3 ? { toolChoice: 'none' as const } : undefined) }) });
`,
);
const run = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', timeout: 120_000 });
rmSync(dir, { recursive: true, force: true });
const ok = run.status === 0;
console.log(`${ok ? 'PASS' : 'FAIL'}  TypeScript spreads against ${String(values.sdk)}'s types${ok ? '' : `:\n${run.stdout}${run.stderr}`}`);
process.exit(ok ? 0 : 1);

import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module without types
import { boundaries } from '../eslint.boundaries.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function violations(filePath: string, code: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...boundaries],
  });
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('import boundaries (eslint.boundaries.mjs)', () => {
  it.each([
    ['src/core/failure/reducer.ts', "import { FailureEngine } from '../../engine/failure-engine.js';"],
    ['src/core/mode.ts', "import { diag } from '@opentelemetry/api';"],
    ['src/core/buckets.ts', "import { readFileSync } from 'node:fs';"],
    ['src/engine/failure-engine.ts', "import { QwenCodeProfile } from '../profiles/qwen-code/qwen-code-profile.js';"],
    ['src/engine/failure-engine.ts', "import { diag } from '@opentelemetry/api';"],
    ['src/profiles/qwen-code/qwen-code-profile.ts', "import { GuardTelemetry } from '../../otel/guard-telemetry.js';"],
    ['src/profiles/wire-profile.ts', "import { replayRecords } from '../replay/replay.js';"],
    ['src/otel/repeated-tool-failure-guard.ts', "import { parseTelemetryText } from '../otlp/telemetry-file.js';"],
    ['src/otlp/otlp.ts', "import { replayRecords } from '../replay/replay.js';"],
    ['src/replay/replay.ts', "import { startGuardServer } from '../serve/guard-server.js';"],
    ['src/serve/guard-server.ts', "import { runServe } from '../cli/commands/serve.js';"],
    ['src/index.ts', "export { replayRecords } from './replay/replay.js';"],
    ['src/index.ts', "export { startGuardServer } from './serve.js';"],
    ['src/serve/guard-server.ts', "import { runHook } from '../hooks/hook-runtime.js';"],
    ['src/engine/batch-assembler.ts', "import type { HookEvent } from '../hooks/hook-event.js';"],
    ['src/hooks/hook-runtime.ts', "import { runServe } from '../cli/commands/serve.js';"],
  ])('%s: %s is refused', async (file, code) => {
    expect(await violations(file, code)).toHaveLength(1);
  });

  it.each([
    ['src/core/failure/reducer.ts', "import type { FailureState } from './types.js';"],
    ['src/core/failure/reducer.ts', "import type { GuardMode } from '../mode.js';"],
    ['src/engine/failure-engine.ts', "import { reduceFailure } from '../core/failure/reducer.js';"],
    ['src/profiles/qwen-code/qwen-code-profile.ts', "import type { FailureEngine } from '../../engine/failure-engine.js';"],
    ['src/otel/repeated-tool-failure-guard.ts', "import { WIRE_PROFILES } from '../profiles/registry.js';"],
    ['src/serve/guard-server.ts', "import { RepeatedToolFailureGuard } from '../otel/repeated-tool-failure-guard.js';"],
    ['src/cli/commands/replay.ts', "import { replayRecords } from '../../replay/replay.js';"],
    ['src/hooks/hook-session.ts', "import { sealBatch } from '../engine/batch-assembler.js';"],
    ['src/cli/commands/claude-code-hook.ts', "import { runHook } from '../../hooks/hook-runtime.js';"],
    ['src/index.ts', "export { GuardControl } from './otel/guard-control.js';"],
  ])('%s: %s is allowed', async (file, code) => {
    expect(await violations(file, code)).toEqual([]);
  });
});

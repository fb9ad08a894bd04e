import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAUDE_CODE_HOOK_ADAPTER } from '../src/hooks/claude-code/claude-code-adapter.js';
import { runHook } from '../src/hooks/hook-runtime.js';
import { claudeHookScenarios, recordedHookInputs } from './helpers/claude-code-wire.js';

/**
 * The hook inputs the real Claude Code 2.1.328 sent in each guard-hook conformance scenario
 * (`fixtures/claude-code-2.1.328/<scenario>.hooks.jsonl`, recorded by a logging hook registered for
 * every event), fed in their arrival order through the hook runtime with the Claude Code adapter:
 * the decisions must be the ones the scenario states from the design. This is the hook path on the
 * whole class of inputs the real CLI sends (successes, failures, denials, subagents, the breaker),
 * without the CLI.
 */
const hookScenarios = claudeHookScenarios();

describe('the hook runtime on the real Claude Code 2.1.328 hook inputs', () => {
  it('covers the guard-hook scenarios, the denial forms included', () => {
    expect(hookScenarios.map((s) => s.name)).toEqual(expect.arrayContaining(['bash-git-loop-enforce-hooks', 'denials-reset-enforce-hooks']));
  });

  it.each(hookScenarios)('$name: the design\'s decisions from the recorded inputs', async (s) => {
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-cc-captures-'));
    const decisionsFile = join(dir, 'decisions.jsonl');
    const inputs = recordedHookInputs(s.name);
    const outputs: string[] = [];
    const errors: string[] = [];
    for (const input of inputs) {
      await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(input), { mode: s.mode, stateDir: join(dir, 's'), decisionsFile }, { out: (l) => outputs.push(l), err: (l) => errors.push(l) }, {});
    }
    expect(errors).toEqual([]);
    const promptOrder = [...new Set(inputs.filter((i) => i.hook_event_name === 'UserPromptSubmit').map((i) => String(i.prompt_id)))];
    let lines: Record<string, unknown>[] = [];
    try {
      lines = readFileSync(decisionsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    } catch {
      lines = [];
    }
    const ours = lines.map(({ promptId, guard: _guard, ...rest }) => ({ prompt: promptOrder.indexOf(String(promptId)) + 1, ...rest }));
    expect(ours).toEqual(s.expectedDecisions.map((d) => ({ mode: s.mode, prompt: 1, ...d })));
    for (const o of outputs) expect(() => JSON.parse(o) as unknown).not.toThrow();
  });
});

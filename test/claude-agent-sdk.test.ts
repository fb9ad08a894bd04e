import { describe, expect, it } from 'vitest';
import { CLAUDE_AGENT_SDK_HOOK_EVENTS, claudeAgentSdkGuardHooks } from '../src/claude-agent-sdk.js';
import type { BatchDecision, ClaudeAgentSdkHookOutput, GuardMode } from '../src/claude-agent-sdk.js';
import { claudeHookScenarios, recordedHookInputs } from './helpers/claude-code-wire.js';
import type { ClaudeHookScenario } from './helpers/claude-code-wire.js';
import { REPEATED_TOOL_FAILURE_STOP_TEXT as STOP_TEXT } from '../src/core/failure/reducer.js';

/**
 * The guard as Claude Agent SDK hook callbacks, fed the hook inputs the real Claude Code 2.1.328
 * sent (the SDK runs the same CLI and hands callbacks the same inputs; the real SDK 0.3.328 is
 * driven by `npm run test:conformance:claude-agent-sdk`).
 */
const scenarios = claudeHookScenarios();
type Scenario = ClaudeHookScenario;

const signal = new AbortController().signal;

async function feed(s: Scenario, mode: GuardMode | undefined) {
  const decisions: BatchDecision[] = [];
  const diagnostics: string[] = [];
  const hooks = claudeAgentSdkGuardHooks({ ...(mode === undefined ? {} : { mode }), onDecision: (d) => decisions.push(d), onDiagnostic: (l) => diagnostics.push(l) });
  const outputs: { event: string; output: ClaudeAgentSdkHookOutput }[] = [];
  for (const input of recordedHookInputs(s.name)) {
    const event = String(input.hook_event_name);
    const matchers = (hooks as Record<string, { hooks: ((i: unknown, id: string | undefined, o: { signal: AbortSignal }) => Promise<ClaudeAgentSdkHookOutput>)[] }[] | undefined>)[event];
    for (const m of matchers ?? []) for (const h of m.hooks) outputs.push({ event, output: await h(input, input.tool_use_id as string | undefined, { signal }) });
  }
  return { decisions, diagnostics, outputs };
}

describe('claudeAgentSdkGuardHooks', () => {
  it('registers the events the SDK names, every tool matched', () => {
    const hooks = claudeAgentSdkGuardHooks({ mode: 'shadow' });
    expect(Object.keys(hooks)).toEqual([...CLAUDE_AGENT_SDK_HOOK_EVENTS]);
    expect(CLAUDE_AGENT_SDK_HOOK_EVENTS).toEqual(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch']);
    expect(hooks.PreToolUse[0]?.matcher).toBe('*');
    expect(hooks.PostToolBatch[0]?.matcher).toBeUndefined();
  });

  it.each(scenarios)('$name: the design\'s decisions from the real hook inputs, in memory', async (s) => {
    const { decisions, diagnostics } = await feed(s, s.mode);
    expect(diagnostics).toEqual([]);
    expect(decisions.map((d) => `${d.batch}:${d.outcome.decision}`)).toEqual(s.expectedDecisions.map((d) => `${d.batch}:${d.decision}`));
    expect(decisions.every((d) => d.route === 'headless')).toBe(true);
  });

  it('shadow by default: decisions, and nothing but {} for the host', async () => {
    const s = scenarios.find((x) => x.name === 'bash-git-loop-enforce-hooks') as Scenario;
    const saved = process.env.REPEATED_TOOL_FAILURE_GUARD_MODE;
    delete process.env.REPEATED_TOOL_FAILURE_GUARD_MODE;
    try {
      const { decisions, outputs } = await feed(s, undefined);
      expect(decisions.map((d) => d.outcome.decision)).toEqual(['tracked', 'tracked', 'would_warn', 'would_stop']);
      expect(outputs.every((o) => Object.keys(o.output).length === 0)).toBe(true);
    } finally {
      if (saved !== undefined) process.env.REPEATED_TOOL_FAILURE_GUARD_MODE = saved;
    }
  });

  it('enforce: the reminder as PostToolBatch additionalContext, then the stop as block + continue:false with the stop text', async () => {
    const s = scenarios.find((x) => x.name === 'bash-git-loop-enforce-hooks') as Scenario;
    const { outputs } = await feed(s, 'enforce');
    const said = outputs.filter((o) => Object.keys(o.output).length > 0);
    expect(said.map((o) => o.event)).toEqual(['PostToolBatch', 'PostToolBatch']);
    expect(said[0]?.output.hookSpecificOutput).toMatchObject({ hookEventName: 'PostToolBatch', additionalContext: expect.any(String) });
    expect(said[1]?.output).toEqual({ decision: 'block', reason: STOP_TEXT, systemMessage: STOP_TEXT, continue: false, stopReason: STOP_TEXT });
  });

  it('input it cannot judge: {} and no diagnostic beyond the guard\'s own line', async () => {
    const hooks = claudeAgentSdkGuardHooks({ mode: 'enforce', onDiagnostic: () => undefined });
    const cb = hooks.PreToolUse[0]?.hooks[0];
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(cb?.(cyclic, undefined, { signal })).resolves.toEqual({});
    await expect(cb?.({ hook_event_name: 'PreToolUse' }, undefined, { signal })).resolves.toEqual({});
  });
});

/**
 * `repeated-tool-failure-guard/claude-agent-sdk`: the guard inside a Claude Agent SDK
 * (`@anthropic-ai/claude-agent-sdk`) run as in-process hook callbacks for `query()`'s
 * `options.hooks`: the same runtime and decisions as the Claude Code command hook, the state in
 * memory. See docs/claude-agent-sdk.md.
 *
 * @packageDocumentation
 */
export { CLAUDE_AGENT_SDK_HOOK_EVENTS, claudeAgentSdkGuardHooks } from './hooks/claude-code/agent-sdk-hooks.js';
export type {
  ClaudeAgentSdkGuardOptions,
  ClaudeAgentSdkHookCallback,
  ClaudeAgentSdkHookEvent,
  ClaudeAgentSdkHookMatcher,
  ClaudeAgentSdkHookOutput,
  ClaudeAgentSdkHooks,
  ClaudeAgentSdkHookSpecificOutput,
} from './hooks/claude-code/agent-sdk-hooks.js';
export type { BatchDecision } from './engine/failure-types.js';
export type { GuardMode } from './core/failure/types.js';
export type { MemoryHookStateStoreOptions } from './hooks/memory-state-store.js';

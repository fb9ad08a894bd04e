/**
 * The guard as Claude Agent SDK hook callbacks (`@anthropic-ai/claude-agent-sdk` 0.3.328,
 * `options.hooks` of `query()`): the Claude Code CLI the SDK runs sends the same hook inputs to
 * in-process callbacks as to command hooks (`prompt_id` included), and acts on the same outputs.
 * So the callbacks are the shared hook runtime with the Claude Code adapter, the state in memory
 * (`MemoryHookStateStore`, no files), one state per `claudeAgentSdkGuardHooks()` call.
 *
 * What each output does on the real SDK (checked by `npm run test:conformance:claude-agent-sdk`):
 * - the reminder (warn, enforce): `PostToolBatch` `hookSpecificOutput.additionalContext`, read by
 *   the model with the batch's results;
 * - the stop (enforce): `PostToolBatch` `decision: "block"` with the stop text as `reason` and
 *   `systemMessage`, plus `continue: false` and `stopReason`: no further model request; the
 *   SDK's `result` message ends the turn and the stop text reaches the caller's stream;
 * - the identical-call breaker: `PreToolUse` `additionalContext` (warning) or
 *   `permissionDecision: "deny"` (block).
 *
 * A callback never throws and never blocks a tool by mistake: input it cannot judge gets `{}`.
 */
import type { GuardMode } from '../../core/failure/types.js';
import type { BatchDecision } from '../../engine/failure-types.js';
import { resolveGuardModeFromEnv } from '../../profiles/qwen-code/mode-sources.js';
import type { HookAction, HookAdapter, HookEvent } from '../hook-event.js';
import { runHook } from '../hook-runtime.js';
import { MemoryHookStateStore } from '../memory-state-store.js';
import type { MemoryHookStateStoreOptions } from '../memory-state-store.js';
import { CLAUDE_CODE_HOOK_ADAPTER, formatClaudeCodeHookOutput } from './claude-code-adapter.js';

/** The hook events the guard registers, as the SDK names them (its `HookEvent`). */
export const CLAUDE_AGENT_SDK_HOOK_EVENTS = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch'] as const;

/** One of {@link CLAUDE_AGENT_SDK_HOOK_EVENTS}. */
export type ClaudeAgentSdkHookEvent = (typeof CLAUDE_AGENT_SDK_HOOK_EVENTS)[number];

/** The `hookSpecificOutput` the guard's callbacks return (a subset of the SDK's). */
export type ClaudeAgentSdkHookSpecificOutput =
  | { hookEventName: 'PreToolUse'; additionalContext: string }
  | { hookEventName: 'PreToolUse'; permissionDecision: 'deny'; permissionDecisionReason: string }
  | { hookEventName: 'PostToolBatch'; additionalContext: string }
  | { hookEventName: 'PostToolUseFailure'; additionalContext: string };

/** What a callback resolves to: a subset of the SDK's `SyncHookJSONOutput`; `{}` for nothing. */
export interface ClaudeAgentSdkHookOutput {
  continue?: boolean;
  stopReason?: string;
  decision?: 'block';
  reason?: string;
  systemMessage?: string;
  hookSpecificOutput?: ClaudeAgentSdkHookSpecificOutput;
}

/** A hook callback, as the SDK's `HookCallback` calls it (input, tool use id, abort signal). */
export type ClaudeAgentSdkHookCallback = (input: unknown, toolUseID: string | undefined, options: { signal: AbortSignal }) => Promise<ClaudeAgentSdkHookOutput>;

/** The SDK's `HookCallbackMatcher` shape. */
export interface ClaudeAgentSdkHookMatcher {
  matcher?: string;
  hooks: ClaudeAgentSdkHookCallback[];
  /** Seconds the CLI waits for the callbacks. */
  timeout?: number;
}

/** The value for `options.hooks` of the SDK's `query()` (merge with your own hooks per event). */
export type ClaudeAgentSdkHooks = Record<ClaudeAgentSdkHookEvent, ClaudeAgentSdkHookMatcher[]>;

/** Options of {@link claudeAgentSdkGuardHooks}. */
export interface ClaudeAgentSdkGuardOptions {
  /**
   * `shadow` decides and reports only; `warn` adds the reminder; `enforce` also stops; `off`
   * answers nothing. @defaultValue `$REPEATED_TOOL_FAILURE_GUARD_MODE`, else `shadow`
   */
  readonly mode?: GuardMode;
  /** Called with each decision other than `none` (for your telemetry or logs). */
  readonly onDecision?: (decision: BatchDecision) => void;
  /** A file each decision is appended to as a JSON line (the `replay --format json` shape). @defaultValue none */
  readonly decisionsFile?: string;
  /**
   * Where a problem that keeps the guard from judging goes (one line, no tool input, error text or
   * path); the user also sees it as a `systemMessage` on the batch it concerns.
   * @defaultValue stderr
   */
  readonly onDiagnostic?: (line: string) => void;
  /** The route label of the decisions. @defaultValue `headless` (the SDK runs the CLI non-interactively) */
  readonly route?: BatchDecision['route'];
  /** Bounds of the in-memory session states (count, age, size). */
  readonly sessions?: MemoryHookStateStoreOptions;
}

/** The stop as the SDK acts on it: the command hook's block, and `continue: false` with the stop text as `stopReason`. */
function formatForSdk(event: HookEvent, action: HookAction): Record<string, unknown> | undefined {
  const out = formatClaudeCodeHookOutput(event, action);
  return action.type === 'stop' && out !== undefined ? { ...out, continue: false, stopReason: action.text } : out;
}

const SDK_ADAPTER: HookAdapter = { ...CLAUDE_CODE_HOOK_ADAPTER, command: 'claude-agent-sdk hooks', format: formatForSdk };

/**
 * The guard's hook callbacks for the Claude Agent SDK.
 *
 * @example
 * ```ts
 * import { query } from '@anthropic-ai/claude-agent-sdk';
 * import { claudeAgentSdkGuardHooks } from 'repeated-tool-failure-guard/claude-agent-sdk';
 *
 * for await (const message of query({ prompt, options: { hooks: claudeAgentSdkGuardHooks({ mode: 'warn' }) } })) { … }
 * ```
 *
 * @param options - mode (default shadow), decisions callback or file, diagnostics, bounds
 * @returns `options.hooks` for `query()`: UserPromptSubmit, PreToolUse, PostToolUse,
 *   PostToolUseFailure and PostToolBatch, each one matcher for every tool; one guard state for
 *   every session the callbacks see (keyed by `session_id`, in memory: at most 10000 sessions,
 *   each dropped after 24 h idle)
 */
export function claudeAgentSdkGuardHooks(options: ClaudeAgentSdkGuardOptions = {}): ClaudeAgentSdkHooks {
  const store = new MemoryHookStateStore(options.sessions);
  const mode = options.mode ?? resolveGuardModeFromEnv(process.env).mode;
  const diagnostic = options.onDiagnostic ?? ((line: string) => process.stderr.write(`${line}\n`));
  const callback: ClaudeAgentSdkHookCallback = async (input) => {
    let text: string;
    try {
      text = JSON.stringify(input);
    } catch {
      diagnostic('repeated-tool-failure-guard claude-agent-sdk hooks: a hook input that is not JSON; no decision');
      return {};
    }
    const out: string[] = [];
    await runHook(
      SDK_ADAPTER,
      text,
      { mode, store, decisionsFile: options.decisionsFile, onDecision: options.onDecision, route: options.route ?? 'headless' },
      { out: (line) => out.push(line), err: diagnostic },
      {},
    );
    return out[0] === undefined ? {} : (JSON.parse(out[0]) as ClaudeAgentSdkHookOutput);
  };
  const hooks = {} as ClaudeAgentSdkHooks;
  for (const event of CLAUDE_AGENT_SDK_HOOK_EVENTS) hooks[event] = [event === 'PreToolUse' || event.startsWith('PostToolUse') ? { matcher: '*', hooks: [callback] } : { hooks: [callback] }];
  return hooks;
}

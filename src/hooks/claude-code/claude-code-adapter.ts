/**
 * The Claude Code hook adapter: Claude Code 2.1.328 command-hook inputs in
 * ({@link parseClaudeCodeHookInput}), hook outputs out. Everything else is the shared runtime.
 *
 * Outputs, as Claude Code 2.1.328 acts on them (docs/claude-code.md, verified on the real CLI):
 * - `remind` → PostToolBatch `{"hookSpecificOutput":{"hookEventName":"PostToolBatch","additionalContext":…}}`:
 *   appended to the batch's last tool result, read by the model before its next request;
 * - `stop` → PostToolBatch `{"decision":"block","reason":…,"systemMessage":…}`: no further model
 *   request, `terminal_reason: "hook_stopped"`, and the stop text where the user sees it: the
 *   interactive UI shows `systemMessage`, stream-json prints it as a `system`/`informational`
 *   message ("PostToolBatch says: …"); the `reason` reaches neither the model nor the result;
 * - `warn_call` → PreToolUse `hookSpecificOutput.additionalContext`;
 * - `deny_call` → PreToolUse `hookSpecificOutput.permissionDecision: "deny"` with the reason.
 */
import { CLAUDE_CODE_FAILURE_CLASSES } from '../../profiles/claude-code/failure-class.js';
import type { HookAction, HookAdapter, HookEvent } from '../hook-event.js';
import { CLAUDE_CODE_HOOK_EVENTS, parseClaudeCodeHookInput } from './hook-input.js';

/** Claude Code's hook event name of an event (the adapter's own inputs only). */
function hookEventName(event: HookEvent): string {
  return event.type === 'batch_settled' ? 'PostToolBatch' : event.type === 'call_started' ? 'PreToolUse' : 'PostToolUseFailure';
}

/**
 * The hook output for an action.
 *
 * @param event - the event the action answers
 * @param action - the runtime's action
 * @returns the object to print, or `undefined` for none
 */
export function formatClaudeCodeHookOutput(event: HookEvent, action: HookAction): Record<string, unknown> | undefined {
  switch (action.type) {
    case 'none':
      return undefined;
    case 'stop':
      return { decision: 'block', reason: action.text, systemMessage: action.text };
    case 'remind':
    case 'warn_call':
      return { hookSpecificOutput: { hookEventName: hookEventName(event), additionalContext: action.text } };
    case 'deny_call':
      return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: action.text } };
  }
}

/** The Claude Code hook adapter. */
export const CLAUDE_CODE_HOOK_ADAPTER: HookAdapter = {
  profile: 'claude-code',
  command: 'claude-code-hook',
  vocabulary: CLAUDE_CODE_FAILURE_CLASSES,
  parse: parseClaudeCodeHookInput,
  format: formatClaudeCodeHookOutput,
  // Shown to the user in the interactive UI, and as a stream-json `system`/`informational` message.
  formatProblem: (text) => ({ systemMessage: text }),
};

/**
 * The settings.json fragment that registers the hook, for `claude-code-hook --print-settings`.
 *
 * @param command - the hook command line
 */
export function claudeCodeHookSettings(command: string): Record<string, unknown> {
  const hook = { type: 'command', command };
  const hooks: Record<string, unknown> = {};
  for (const event of CLAUDE_CODE_HOOK_EVENTS) hooks[event] = [event === 'PostToolBatch' ? { hooks: [hook] } : { matcher: '*', hooks: [hook] }];
  return { hooks };
}

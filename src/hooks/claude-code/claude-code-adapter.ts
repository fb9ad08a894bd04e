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
 * The route label of a hook's decisions from how Claude Code was started
 * (`CLAUDE_CODE_ENTRYPOINT`: `sdk-cli`, `sdk-ts`, … for `claude -p` and the Agent SDK, `cli`
 * interactive): `headless` or `acp_foreground`.
 *
 * @param entrypoint - the value of `CLAUDE_CODE_ENTRYPOINT`, or of the {@link CLAUDE_CODE_ENTRYPOINT_HEADER}
 */
export function claudeCodeRouteOf(entrypoint: string | string[] | undefined): 'headless' | 'acp_foreground' {
  return typeof entrypoint === 'string' && entrypoint.startsWith('sdk') ? 'headless' : 'acp_foreground';
}

/** The environment variable that holds the HTTP hook's bearer token (`--print-settings --http`). */
export const CLAUDE_CODE_HOOK_TOKEN_ENV = 'RTFG_CLAUDE_CODE_HOOK_TOKEN';

/** The header an HTTP hook carries `CLAUDE_CODE_ENTRYPOINT` in (Claude Code interpolates it; see {@link claudeCodeRouteOf}). */
export const CLAUDE_CODE_ENTRYPOINT_HEADER = 'x-claude-code-entrypoint';

/** Seconds Claude Code waits for the guard's HTTP hook before it goes on without it. */
export const CLAUDE_CODE_HTTP_HOOK_TIMEOUT_SECONDS = 10;

/**
 * The settings.json fragment that registers the guard's hooks, for `claude-code-hook
 * --print-settings`: a command hook (`command`), or an HTTP hook posted to `serve
 * --claude-code-hook-port` (`http`, its bearer token read from {@link CLAUDE_CODE_HOOK_TOKEN_ENV}
 * in Claude Code's environment through `allowedEnvVars`, never written into the file).
 *
 * @param hookOf - the hook command line (command form), or `{ url }` of the endpoint (HTTP form)
 */
export function claudeCodeHookSettings(hookOf: string | { readonly url: string }): Record<string, unknown> {
  const hook =
    typeof hookOf === 'string'
      ? { type: 'command', command: hookOf }
      : {
          type: 'http',
          url: hookOf.url,
          headers: { Authorization: `Bearer \${${CLAUDE_CODE_HOOK_TOKEN_ENV}}`, [CLAUDE_CODE_ENTRYPOINT_HEADER]: '${CLAUDE_CODE_ENTRYPOINT}' },
          allowedEnvVars: [CLAUDE_CODE_HOOK_TOKEN_ENV, 'CLAUDE_CODE_ENTRYPOINT'],
          timeout: CLAUDE_CODE_HTTP_HOOK_TIMEOUT_SECONDS,
        };
  const hooks: Record<string, unknown> = {};
  for (const event of CLAUDE_CODE_HOOK_EVENTS) hooks[event] = [event === 'PostToolBatch' ? { hooks: [hook] } : { matcher: '*', hooks: [hook] }];
  return { hooks };
}

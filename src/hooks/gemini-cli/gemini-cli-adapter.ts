/**
 * The gemini-cli hook adapter: gemini-cli 0.61.0 command-hook inputs in
 * ({@link parseGeminiCliHookInput}), hook outputs out, and each batch's calls as gemini-cli's
 * session transcript lists them ({@link readGeminiCliTranscript}): gemini-cli fires no hook for a
 * call it refuses before running it (invalid arguments, an unknown tool: no `BeforeTool`; a policy
 * or hook denial, a user's rejection: no `AfterTool`), so a batch is judged on every call the model
 * asked for, each one the hooks did not record as `not_started` (or `cancelled`), never as a batch
 * without it. Everything else is the shared runtime.
 *
 * Outputs, as gemini-cli 0.61.0 acts on them (docs/gemini-cli.md, verified on the real CLI):
 * - `remind`, on the `AfterTool` of the batch's last running call (the runtime previews the batch's
 *   decision there, {@link GEMINI_CLI_HOOK_ADAPTER}'s `remindOnLastCall`): for a call that
 *   succeeded, `hookSpecificOutput.additionalContext` (appended to its result as
 *   `<hook_context>…</hook_context>`); for a call that failed, `{"decision":"block","reason":…}`:
 *   gemini-cli sends a failed call's error *message* to the model, never its result text, so the
 *   reminder takes the place of that one call's message (gemini-cli then logs the call as
 *   `execution_failed`);
 * - `stop`, on `BeforeModel` (every call of the batch settled, the next model request not sent):
 *   `{"continue":false,"stopReason":…,"systemMessage":…}`: gemini-cli ends the turn before the
 *   request, keeps every settled result, and prints the system message (the design's stop text) to
 *   the user;
 * - `warn_call` (the identical-call breaker, on `BeforeTool`): `systemMessage` for the user (a
 *   `BeforeTool` output cannot reach the model without denying the call);
 * - `deny_call`: `BeforeTool` `{"decision":"deny","reason":…}`: the call does not run and the model
 *   reads the reason as its error.
 * Shadow prints `{}` (gemini-cli reads a hook's stdout as its answer).
 */
import { GEMINI_CLI_TOOL_ERROR_TYPES } from '../../profiles/gemini-cli/tool-error-types.js';
import type { HookAction, HookAdapter, HookEvent } from '../hook-event.js';
import { GEMINI_CLI_HOOK_EVENTS, parseGeminiCliHookInput } from './hook-input.js';
import { readGeminiCliTranscript } from './transcript.js';

/**
 * The hook output for an action.
 *
 * @param event - the event the action answers
 * @param action - the runtime's action
 * @returns the object to print (`{}` for none: gemini-cli reads an empty stdout as plain text)
 */
export function formatGeminiCliHookOutput(event: HookEvent, action: HookAction): Record<string, unknown> {
  switch (action.type) {
    case 'none':
      return {};
    case 'remind':
      if (event.type !== 'call_settled') return {};
      return event.outcome.kind === 'success'
        ? { hookSpecificOutput: { hookEventName: 'AfterTool', additionalContext: action.text } }
        : { decision: 'block', reason: action.text };
    case 'stop':
      return event.type === 'batch_settled' ? { continue: false, stopReason: action.text, systemMessage: action.text } : {};
    case 'warn_call':
      return { systemMessage: action.text };
    case 'deny_call':
      return { decision: 'deny', reason: action.text };
  }
}

/** The gemini-cli hook adapter. */
export const GEMINI_CLI_HOOK_ADAPTER: HookAdapter = {
  profile: 'gemini-cli',
  command: 'gemini-cli-hook',
  vocabulary: GEMINI_CLI_TOOL_ERROR_TYPES,
  parse: parseGeminiCliHookInput,
  format: formatGeminiCliHookOutput,
  remindOnLastCall: true,
  // gemini-cli fires no hook for a call it refuses before running it, and no hook input lists a
  // batch's calls: the session transcript does (transcript.ts).
  readListing: (input) => readGeminiCliTranscript(typeof input === 'object' && input !== null ? (input as Record<string, unknown>).transcript_path : undefined),
};

/**
 * The settings.json fragment that registers the hook, for `gemini-cli-hook --print-settings`.
 *
 * @param command - the hook command line
 */
export function geminiCliHookSettings(command: string): Record<string, unknown> {
  const hook = { type: 'command', command };
  const hooks: Record<string, unknown[]> = {};
  for (const event of GEMINI_CLI_HOOK_EVENTS) {
    hooks[event] = [event === 'BeforeTool' || event === 'AfterTool' ? { matcher: '*', hooks: [hook] } : { hooks: [hook] }];
  }
  return { hooks };
}

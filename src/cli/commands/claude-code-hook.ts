/**
 * `claude-code-hook`: the guard as a Claude Code command hook, for PreToolUse, PostToolUseFailure
 * and PostToolBatch (see `docs/claude-code.md`). It reads one hook input on stdin, advances the
 * session's guard state (a small file per session, see {@link HookStateStore}) and prints the hook
 * output Claude Code acts on:
 * - `remind` (warn, enforce) → PostToolBatch `hookSpecificOutput.additionalContext` = the design's
 *   fixed reminder, which Claude Code hands to the model with the batch's results;
 * - `stop` (enforce) → PostToolBatch `{"decision":"block","reason":<fixed stop text>}`: no further
 *   model request, `terminal_reason: "hook_stopped"`;
 * - shadow → nothing on stdout; decisions go only to the decisions file, when configured.
 *
 * It always exits 0 and never prints anything but a hook output object on stdout: Claude Code
 * treats exit code 2 as a blocking error, so a usage error of this command (commander's exit 2)
 * would block tool calls; any internal failure is one line on stderr and no decision (fail open).
 * Neither the tool input, the error text nor any tool result is stored or printed.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { GuardMode } from '../../core/failure/types.js';
import type { BatchDecision } from '../../engine/failure-types.js';
import { initialHookState, parseHookState, stepHook } from '../../profiles/claude-code/hook-guard.js';
import type { HookStep } from '../../profiles/claude-code/hook-guard.js';
import { parseClaudeCodeHookInput } from '../../profiles/claude-code/hook-input.js';
import { resolveGuardModeFromEnv } from '../../profiles/qwen-code/mode-sources.js';
import type { CommandIo } from '../io.js';
import { HookStateStore } from './claude-code-hook-state.js';

/** Environment variable naming the state directory. */
export const CLAUDE_CODE_HOOK_STATE_DIR_ENV = 'RTFG_CLAUDE_CODE_STATE_DIR';
/** Environment variable naming a file the hook appends its decisions to (JSON lines). */
export const CLAUDE_CODE_HOOK_DECISIONS_ENV = 'RTFG_CLAUDE_CODE_DECISIONS';

/** A session's guard state is dropped after this much silence (the design's prompt idle bound). */
export const HOOK_PROMPT_IDLE_MILLIS = 2 * 60 * 60 * 1000;

/** Options of {@link runClaudeCodeHook}. */
export interface ClaudeCodeHookOptions {
  /** Overrides the mode from `REPEATED_TOOL_FAILURE_GUARD_MODE` or `QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD` (missing or invalid: `shadow`). */
  readonly mode?: GuardMode;
  /** @defaultValue `$RTFG_CLAUDE_CODE_STATE_DIR`, else `$XDG_STATE_HOME/repeated-tool-failure-guard/claude-code`, else `~/.local/state/…` */
  readonly stateDir?: string;
  /** @defaultValue `$RTFG_CLAUDE_CODE_DECISIONS` */
  readonly decisionsFile?: string;
  /** Called with each decision other than `none`, as an engine {@link BatchDecision} (for the guard's telemetry). */
  readonly onDecision?: (decision: BatchDecision) => void;
}

/** Where the state lives by default. */
export function defaultStateDir(env: Readonly<Record<string, string | undefined>>): string {
  if (env[CLAUDE_CODE_HOOK_STATE_DIR_ENV]) return env[CLAUDE_CODE_HOOK_STATE_DIR_ENV] as string;
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'repeated-tool-failure-guard', 'claude-code');
}

/**
 * Handle one hook invocation. Never throws; resolves to the exit code (always 0).
 *
 * @param stdinText - the hook input as read from stdin
 * @param options - mode, state directory, decisions file
 * @param io - stdout gets at most one JSON line (the hook output), stderr a diagnostic on failure
 * @param env - the process environment (mode and directories)
 * @param now - wall clock
 */
export function runClaudeCodeHook(
  stdinText: string,
  options: ClaudeCodeHookOptions,
  io: CommandIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
  now: () => number = Date.now,
): number {
  try {
    const mode = options.mode ?? resolveGuardModeFromEnv(env).mode;
    if (mode === 'off') return 0;
    let value: unknown;
    try {
      value = JSON.parse(stdinText);
    } catch {
      io.err('repeated-tool-failure-guard claude-code-hook: stdin is not a JSON hook input; no decision');
      return 0;
    }
    const input = parseClaudeCodeHookInput(value);
    if (input === undefined || input.subagent) return 0;
    const store = new HookStateStore(options.stateDir ?? defaultStateDir(env), { now });
    const step = store.update<HookStep>(input.sessionId, (current) => {
      const t = now();
      const parsed = parseHookState(current);
      const state =
        parsed !== undefined && t - parsed.updatedMillis <= HOOK_PROMPT_IDLE_MILLIS
          ? parsed
          : initialHookState(randomBytes(16).toString('hex'), t);
      const result = stepHook(state, input, mode, t);
      return [result.state, result];
    });
    if (step === undefined) {
      io.err('repeated-tool-failure-guard claude-code-hook: state lock busy; no decision for this event');
      return 0;
    }
    const decisionsFile = options.decisionsFile ?? env[CLAUDE_CODE_HOOK_DECISIONS_ENV];
    if (decisionsFile && step.decisions.length > 0) {
      appendFileSync(decisionsFile, step.decisions.map((d) => `${JSON.stringify(d)}\n`).join(''));
    }
    if (step.output !== undefined) io.out(JSON.stringify(step.output));
    const r = step.reduced;
    if (r !== undefined && r.outcome.decision !== 'none' && options.onDecision !== undefined) {
      const t = now();
      options.onDecision({
        promptId: r.promptId,
        batch: r.batch,
        mode,
        // Claude Code tells hooks how it was started: `sdk-cli` for `claude -p`, `cli` interactive.
        route: env.CLAUDE_CODE_ENTRYPOINT?.startsWith('sdk') === true ? 'headless' : 'acp_foreground',
        sessionId: input.sessionId,
        receipt: r.receipt,
        drain: { hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true },
        drainSource: 'assumed',
        outcome: r.outcome,
        lastActivityMillis: t,
        decidedAtMillis: t,
      });
    }
    if (input.event === 'PostToolBatch' && step.state.batches === 1) store.sweep();
    return 0;
  } catch (err) {
    io.err(`repeated-tool-failure-guard claude-code-hook: internal error (${err instanceof Error ? err.name : 'unknown'}); no decision`);
    return 0;
  }
}

/**
 * The settings.json fragment that registers the hook, for `claude-code-hook --print-settings`.
 *
 * @param command - the hook command line (e.g. `npx repeated-tool-failure-guard claude-code-hook --mode warn`)
 */
export function claudeCodeHookSettings(command: string): Record<string, unknown> {
  const hook = { type: 'command', command };
  return {
    hooks: {
      PreToolUse: [{ matcher: '*', hooks: [hook] }],
      PostToolUseFailure: [{ matcher: '*', hooks: [hook] }],
      PostToolBatch: [{ hooks: [hook] }],
    },
  };
}

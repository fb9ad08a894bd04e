/**
 * The hook runtime: everything a command hook does that does not depend on its host agent. One
 * invocation reads one hook input, has the adapter translate it into a {@link HookEvent}, advances
 * the session's guard state under the state store's lock ({@link HookStateStore},
 * {@link stepHookSession}), appends the decisions to the decisions file, and has the adapter format
 * the action for stdout. The agent's part is its {@link HookAdapter}: an input parser and an
 * output formatter.
 *
 * It never fails the host: every path resolves to exit code 0, stdout gets at most one hook output
 * object, and anything that went wrong is one line on stderr naming what the guard could not do
 * (no tool input, error text or path). Shadow prints nothing.
 */
import { randomBytes } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { GuardMode } from '../core/failure/types.js';
import type { BatchDecision } from '../engine/failure-types.js';
import { resolveGuardModeFromEnv } from '../profiles/qwen-code/mode-sources.js';
import type { HookAdapter } from './hook-event.js';
import { initialHookState, parseHookState, stepHookSession } from './hook-session.js';
import type { HookStep } from './hook-session.js';
import { HookStateStore, UnsafeStateDirError } from './state-store.js';

/** Where a hook writes: stdout gets the hook output, stderr the diagnostics. */
export interface HookIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/** A session's guard state is dropped after this much silence (the design's prompt idle bound). */
export const HOOK_PROMPT_IDLE_MILLIS = 2 * 60 * 60 * 1000;

/** Options of {@link runHook}. */
export interface HookRunOptions {
  /** Overrides the mode from `REPEATED_TOOL_FAILURE_GUARD_MODE` or `QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD` (missing or invalid: `shadow`). */
  readonly mode?: GuardMode;
  /** @defaultValue {@link defaultHookStateDir} */
  readonly stateDir?: string;
  /** A file each decision is appended to as a JSON line. @defaultValue `$RTFG_<AGENT>_DECISIONS` */
  readonly decisionsFile?: string;
  /** Called with each decision other than `none`, as an engine {@link BatchDecision} (for the guard's telemetry). */
  readonly onDecision?: (decision: BatchDecision) => void;
  /** The host's route label of the prompt (`headless` for a non-interactive run). @defaultValue `acp_foreground` */
  readonly route?: BatchDecision['route'];
  /**
   * The invocation's own time limit, in milliseconds: past it the runtime gives up on the event
   * (one line on stderr, no decision) and resolves, even when the file system never answers (a
   * state directory under `/proc`). Well under a host's hook timeout (Claude Code: 60 s).
   * The caller should exit the process then: a stuck file-system call keeps it alive.
   * @defaultValue {@link HOOK_TIME_LIMIT_MILLIS}
   */
  readonly timeLimitMillis?: number;
  /** How long to wait for the session's lock before the event is lost. @defaultValue 2000 ms */
  readonly lockTimeoutMillis?: number;
}

/** The default time limit of one hook invocation, in milliseconds. */
export const HOOK_TIME_LIMIT_MILLIS = 5_000;

/** The environment variable prefix of an agent: `RTFG_CLAUDE_CODE_` for `claude-code`. */
export function hookEnvPrefix(adapter: Pick<HookAdapter, 'profile'>): string {
  return `RTFG_${adapter.profile.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_`;
}

/**
 * Where an agent's state lives by default: `$RTFG_<AGENT>_STATE_DIR`, else
 * `$XDG_STATE_HOME/repeated-tool-failure-guard/<agent>`, else `~/.local/state/…`.
 */
export function defaultHookStateDir(adapter: Pick<HookAdapter, 'profile'>, env: Readonly<Record<string, string | undefined>>): string {
  const own = env[`${hookEnvPrefix(adapter)}STATE_DIR`];
  if (own) return own;
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'repeated-tool-failure-guard', adapter.profile);
}

/**
 * Handle one hook invocation. Never rejects; resolves to the exit code (always 0).
 *
 * @param adapter - the host agent's parser and formatter
 * @param stdinText - the hook input as read from stdin
 * @param options - mode, state directory, decisions file, telemetry callback
 * @param io - stdout gets at most one JSON line (the hook output), stderr a diagnostic on failure
 * @param env - the process environment (mode and directories)
 * @param now - wall clock
 */
export async function runHook(
  adapter: HookAdapter,
  stdinText: string,
  options: HookRunOptions,
  io: HookIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
  now: () => number = Date.now,
): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const muted: HookIo = { out: (l) => done || io.out(l), err: (l) => done || io.err(l) };
  const limit = new Promise<number>((resolve) => {
    timer = setTimeout(() => {
      io.err(`repeated-tool-failure-guard ${adapter.command}: no answer within ${options.timeLimitMillis ?? HOOK_TIME_LIMIT_MILLIS} ms (state directory not responding?); no decision`);
      done = true;
      resolve(0);
    }, options.timeLimitMillis ?? HOOK_TIME_LIMIT_MILLIS);
    timer.unref();
  });
  try {
    return await Promise.race([runHookUnbounded(adapter, stdinText, options, muted, env, now), limit]);
  } finally {
    done = true;
    clearTimeout(timer);
  }
}

async function runHookUnbounded(
  adapter: HookAdapter,
  stdinText: string,
  options: HookRunOptions,
  io: HookIo,
  env: Readonly<Record<string, string | undefined>>,
  now: () => number,
): Promise<number> {
  const say = (what: string) => io.err(`repeated-tool-failure-guard ${adapter.command}: ${what}`);
  try {
    const mode = options.mode ?? resolveGuardModeFromEnv(env).mode;
    if (mode === 'off') return 0;
    let value: unknown;
    try {
      value = JSON.parse(stdinText);
    } catch {
      say('stdin is not a JSON hook input; no decision');
      return 0;
    }
    const event = adapter.parse(value);
    if (event === undefined) return 0;
    const store = new HookStateStore(options.stateDir ?? defaultHookStateDir(adapter, env), { now, lockTimeoutMillis: options.lockTimeoutMillis });
    const vocabulary = new Set(adapter.vocabulary);
    let discarded: string | undefined;
    const step = await store.update<HookStep>(event.sessionId, ({ current, discarded: why, lostRecords }) => {
      discarded = why;
      const t = now();
      const parsed = parseHookState(current);
      if (current !== undefined && parsed === undefined) discarded = 'unreadable';
      const state = parsed !== undefined && t - parsed.updatedMillis <= HOOK_PROMPT_IDLE_MILLIS ? parsed : initialHookState(randomBytes(16).toString('hex'), t);
      const result = stepHookSession(state, event, mode, t, { vocabulary, lostRecords, route: options.route });
      return [result.state, result];
    });
    if (discarded !== undefined) say(`the session's state file was ${discarded === 'too_large' ? 'too large' : 'unreadable'}; the guard starts this session afresh`);
    if (step === undefined) {
      say('state lock busy; this event is lost and its batch will not be judged');
      return 0;
    }
    const decisionsFile = options.decisionsFile ?? env[`${hookEnvPrefix(adapter)}DECISIONS`];
    if (decisionsFile && step.decisions.length > 0) {
      try {
        await appendFile(decisionsFile, step.decisions.map((d) => `${JSON.stringify(d)}\n`).join(''));
      } catch {
        say('cannot append to the decisions file');
      }
    }
    const output = adapter.format(event, step.action);
    if (output !== undefined) io.out(JSON.stringify(output));
    if (step.decision !== undefined) options.onDecision?.(step.decision);
    if (event.type === 'batch_settled' && step.state.batches === 1) await store.sweep();
    return 0;
  } catch (err) {
    if (err instanceof UnsafeStateDirError) say(`${err.message}; no decision`);
    else say(`internal error (${err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.name) : 'unknown'}); no decision`);
    return 0;
  }
}

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
import type { HookAction, HookAdapter, HookEvent } from './hook-event.js';
import { initialHookState, parseHookState, stepHookSession } from './hook-session.js';
import type { HookStep } from './hook-session.js';
import { HookStateStore, UnsafeStateDirError } from './state-store.js';
import type { HookSessionStore } from './state-store.js';

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
  /**
   * Where the session states live instead of `stateDir`'s files: a resident endpoint passes its
   * `MemoryHookStateStore`. @defaultValue a {@link HookStateStore} on `stateDir`
   */
  readonly store?: HookSessionStore;
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
  /**
   * OTLP/HTTP base URL for the guard's counters and diagnostic logs of this invocation's decision.
   * @defaultValue `$RTFG_<AGENT>_OTLP_ENDPOINT`
   */
  readonly otlpEndpoint?: string;
}

/** The default time limit of one hook invocation, in milliseconds. */
export const HOOK_TIME_LIMIT_MILLIS = 5_000;
/** The most the export of a decision's telemetry may add after the answer, in milliseconds. */
const TELEMETRY_LIMIT_MILLIS = 2_500;

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
  const limitMillis = options.timeLimitMillis ?? HOOK_TIME_LIMIT_MILLIS;
  const run: HookRun = { event: undefined, check: undefined, problems: [], output: undefined, printed: false };
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      run.problems.push(`no answer within ${limitMillis} ms (state directory not responding?); no decision`);
      resolve();
    }, limitMillis);
    timer.unref();
  });
  try {
    await Promise.race([runHookUnbounded(adapter, stdinText, options, run, env, now), limit]);
  } finally {
    clearTimeout(timer);
  }
  // Printed once, here: a run that outlives the limit prints nothing more.
  run.printed = true;
  const say = (what: string) => io.err(`repeated-tool-failure-guard ${adapter.command}: ${what}`);
  for (const p of run.problems) say(p);
  if (run.check !== undefined) say(`check ${run.check} ${run.problems.length === 0 ? `answered: mode ${run.mode ?? '?'}, state ${run.stateDir ?? '?'}` : 'failed'}`);
  let output = run.output;
  // What stops the guard from working is said where the user sees it, once a model batch.
  if (run.problems.length > 0 && run.event?.type === 'batch_settled' && adapter.formatProblem !== undefined) {
    output = { ...adapter.formatProblem(`repeated-tool-failure-guard: ${run.problems.join('; ')}; no tool is blocked by it`), ...output };
  }
  if (output !== undefined) io.out(JSON.stringify(output));
  // The export has its own 2 s timeouts; this bounds it as a whole, within the invocation's limit.
  if (run.telemetry !== undefined) await Promise.race([run.telemetry(), new Promise<void>((r) => setTimeout(r, TELEMETRY_LIMIT_MILLIS).unref())]);
  return 0;
}

function isEventList(v: HookEvent | readonly HookEvent[]): v is readonly HookEvent[] {
  return Array.isArray(v);
}

/** How strong an action is when one invocation's events give several: the strongest is printed. */
// A stop outranks a denial: a host that cannot end the turn denies the call with the stop text.
const ACTION_RANK: Readonly<Record<HookAction['type'], number>> = { none: 0, warn_call: 1, remind: 2, deny_call: 3, stop: 4 };

/** One invocation's steps as one. */
interface CombinedStep {
  readonly state: HookStep['state'];
  /** The strongest action of the steps. */
  readonly action: HookAction;
  readonly decisions: HookStep['decisions'];
  /** The engine decisions of the steps (for the guard's telemetry). */
  readonly engineDecisions: readonly BatchDecision[];
}

/** The steps of one invocation's events as one: the last state, every decision, the strongest action. */
function combineSteps(steps: readonly HookStep[]): CombinedStep {
  let action: HookAction = { type: 'none' };
  for (const s of steps) if (ACTION_RANK[s.action.type] > ACTION_RANK[action.type]) action = s.action;
  return {
    state: (steps[steps.length - 1] as HookStep).state,
    action,
    decisions: steps.flatMap((s) => s.decisions),
    engineDecisions: steps.flatMap((s) => (s.decision === undefined ? [] : [s.decision])),
  };
}

/** What one invocation found, shared by its bounded part and the printing. */
interface HookRun {
  event: HookEvent | undefined;
  /** The check nonce of a synthetic `--check` input. */
  check: string | undefined;
  mode?: GuardMode;
  stateDir?: string;
  /** What kept the guard from judging this event (closed texts, no input data). */
  problems: string[];
  output: Record<string, unknown> | undefined;
  printed: boolean;
  /** Export of the guard's telemetry, run after the output is printed. */
  telemetry?: () => Promise<void>;
}

/** The state store failed on the file system (its message names the error code only, never a path). */
class StateDirUnusable extends Error {}

/** The field a `--check` input carries its nonce in; Claude Code never sends it. */
export const HOOK_CHECK_FIELD = 'repeated_tool_failure_guard_check';

/** The response header an HTTP hook endpoint returns a `--check` input's answer in (the line a command hook writes on stderr). */
export const HOOK_CHECK_HEADER = 'x-repeated-tool-failure-guard-check';

async function runHookUnbounded(
  adapter: HookAdapter,
  stdinText: string,
  options: HookRunOptions,
  run: HookRun,
  env: Readonly<Record<string, string | undefined>>,
  now: () => number,
): Promise<void> {
  const problem = (what: string) => {
    if (!run.printed) run.problems.push(what);
  };
  try {
    let value: unknown;
    try {
      value = JSON.parse(stdinText);
    } catch {
      problem('stdin is not a JSON hook input; no decision');
      return;
    }
    const nonce = (value as Record<string, unknown> | null)?.[HOOK_CHECK_FIELD];
    if (typeof nonce === 'string' && /^[0-9a-f]{1,32}$/.test(nonce)) run.check = nonce;
    const mode = options.mode ?? resolveGuardModeFromEnv(env).mode;
    run.mode = mode;
    if (mode === 'off') return;
    const parsed = adapter.parse(adapter.load === undefined ? value : await adapter.load(value));
    let events: readonly HookEvent[] = parsed === undefined ? [] : isEventList(parsed) ? parsed : [parsed];
    if (adapter.readListing !== undefined && events.some((e) => e.type === 'prompt_started' || e.type === 'batch_settled')) {
      // Read before the lock is taken: the host's record is the host's, not the guard's state.
      const listing = await adapter.readListing(value);
      if (listing.kind === 'unreadable') problem(`the agent's record of the model's calls is unreadable (${listing.reason.replace(/_/g, ' ')}); its batches are judged incomplete`);
      events = events.map((e) => (e.type === 'prompt_started' || e.type === 'batch_settled' ? { ...e, listing } : e));
    }
    const event = events.at(-1);
    run.event = event;
    if (event === undefined) return;
    const stateDir = options.store !== undefined ? 'in memory' : (options.stateDir ?? defaultHookStateDir(adapter, env));
    run.stateDir = stateDir;
    const store = options.store ?? new HookStateStore(stateDir, { now, lockTimeoutMillis: options.lockTimeoutMillis });
    const vocabulary = new Set(adapter.vocabulary);
    let discarded: string | undefined;
    const step = await store.update<CombinedStep>(event.sessionId, ({ current, discarded: why, lostRecords }) => {
      discarded = why;
      const t = now();
      const read = parseHookState(current);
      if (current !== undefined && read === undefined) discarded = 'unreadable';
      let state = read !== undefined && t - read.updatedMillis <= HOOK_PROMPT_IDLE_MILLIS ? read : initialHookState(randomBytes(16).toString('hex'), t);
      const stepOptions = { vocabulary, route: options.route, remindOnLastCall: adapter.remindOnLastCall, denyAfterStop: adapter.denyAfterStop };
      const steps: HookStep[] = [];
      for (const [i, e] of events.entries()) {
        // A state dropped as unusable held the open batch's records: they are lost, so that batch is
        // not judged as complete (a new prompt opens no batch that could have held them).
        const dropped = discarded !== undefined && e.type !== 'prompt_started' ? 1 : 0;
        const result = stepHookSession(state, e, mode, t, { ...stepOptions, lostRecords: i === 0 ? lostRecords + dropped : 0 });
        steps.push(result);
        state = result.state;
      }
      const result = combineSteps(steps);
      return [result.state, result];
    }).catch((err: unknown) => {
      // The state directory cannot be created, read or written (not a directory, read-only, full).
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      if (err instanceof UnsafeStateDirError || code === undefined) throw err;
      throw new StateDirUnusable(`cannot use the state directory (${code})`);
    });
    if (discarded !== undefined) problem(`the session's state file was ${discarded === 'too_large' ? 'too large' : 'unreadable'}; the guard starts this session afresh`);
    if (step === undefined) {
      problem('state lock busy; this event is lost and its batch will not be judged');
      return;
    }
    const decisionsFile = options.decisionsFile ?? env[`${hookEnvPrefix(adapter)}DECISIONS`];
    if (decisionsFile && step.decisions.length > 0) {
      try {
        await appendFile(decisionsFile, step.decisions.map((d) => `${JSON.stringify(d)}\n`).join(''));
      } catch {
        problem('cannot append to the decisions file');
      }
    }
    if (!run.printed) run.output = adapter.format(event, step.action);
    const engineDecisions = step.engineDecisions;
    for (const d of engineDecisions) options.onDecision?.(d);
    const endpoint = options.otlpEndpoint ?? env[`${hookEnvPrefix(adapter)}OTLP_ENDPOINT`];
    // A check loads the exporters too, so --check finds an --otlp-endpoint that cannot work.
    if ((engineDecisions.length > 0 || run.check !== undefined) && endpoint) {
      try {
        const { prepareHookTelemetry } = await import('./hook-telemetry.js');
        const exportNow = await prepareHookTelemetry(endpoint, adapter.profile);
        if (engineDecisions.length > 0) run.telemetry = () => exportNow(engineDecisions);
      } catch (err) {
        problem(err instanceof Error && /npm install/.test(err.message) ? `--otlp-endpoint: ${err.message}` : 'the guard telemetry cannot be exported');
      }
    }
    if (events.some((e) => e.type === 'batch_settled') && step.state.batches === 1) await store.sweep();
  } catch (err) {
    if (err instanceof UnsafeStateDirError || err instanceof StateDirUnusable) problem(`${err.message}; no decision`);
    else problem(`internal error (${err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.name) : 'unknown'}); no decision`);
  }
}

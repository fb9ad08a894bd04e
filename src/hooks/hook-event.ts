/**
 * The agent-neutral hook vocabulary: what a hook adapter translates its host's hook input into
 * ({@link HookEvent}), and what the runtime hands back for the adapter to print ({@link HookAction}).
 *
 * An event carries ids, a tool name and a closed-vocabulary outcome; never the tool's arguments,
 * result, paths or error text. The one exception is {@link HookCallStarted.toolInput}, which the
 * runtime hashes in memory for the identical-call breaker and drops.
 */
import type { ToolType } from '../core/failure/types.js';
import type { WireProfileName } from '../profiles/registry.js';

/** Fields every event has. */
export interface HookEventCommon {
  /** The host's session id: one state file per session (hashed into its file name). */
  readonly sessionId: string;
  /**
   * The host's prompt (turn) id: a new value starts a fresh guard. `undefined` on events that
   * carry none; such events belong to the prompt in progress.
   */
  readonly promptId: string | undefined;
  /**
   * The host's hook event this event came from, for an adapter whose output depends on it when
   * one hook input gives several events (Codex). Absent: the adapter tells it by the event type.
   */
  readonly hookEventName?: string;
}

/**
 * How a settled call counts, in the design's two-axis terms:
 * - `failure`: ran and failed (`error`/`error`) with `errorType` from the adapter's closed
 *   vocabulary: an eligible failure;
 * - `success`: ran and succeeded;
 * - `not_started`: refused before it ran (a permission or policy denial, invalid input, an unknown
 *   tool): a reset, never a success;
 * - `cancelled`: interrupted by the user;
 * - `untyped_failure`: ran and failed, but the host gives no structured class (Codex: a call with
 *   only an output): the design's unclassified error, ineligible (it resets and downgrades), and
 *   counted as untyped where decisions are summarised;
 * - `unknown`: settled, but the host did not say how (ineligible: resets and downgrades).
 */
export type HookCallOutcome =
  | { readonly kind: 'failure'; readonly errorType: string }
  | { readonly kind: 'untyped_failure' }
  | { readonly kind: 'success' }
  | { readonly kind: 'not_started' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'unknown' };

/**
 * A new prompt began (e.g. Claude Code `UserPromptSubmit`, gemini-cli `BeforeAgent`). A host whose
 * hook inputs carry no prompt id leaves `promptId` undefined: the runtime then names the session's
 * prompts `<sessionId>`, `<sessionId>/2`, `<sessionId>/3`, … and later events without a prompt id
 * belong to the prompt in progress.
 */
export interface HookPromptStarted extends HookEventCommon {
  readonly type: 'prompt_started';
  /**
   * The host's own record as the prompt starts ({@link HookAdapter.readListing}): its turns so far
   * belong to earlier prompts and are never closed as this prompt's batches.
   */
  readonly listing?: HookBatchListing;
}

/**
 * A call as the host's own record lists it (gemini-cli: its session transcript), with the host's
 * status for it: `success`, `error` (it failed or was refused), `cancelled`, or `other` (anything
 * else, e.g. still running).
 */
export interface HookListedCall {
  readonly toolName: string;
  readonly status: 'success' | 'error' | 'cancelled' | 'other';
}

/**
 * What the host's own record says about the latest model turn that asked for calls, for a host
 * whose hooks never see some calls (gemini-cli fires no hook for a call it refuses before running
 * it, and none lists a batch's calls):
 * - `listed`: the record was read; `turn` names the latest model turn with calls (a digest of the
 *   host's id, or `undefined` when the record has none yet) and `calls` are that turn's calls;
 * - `unreadable`: the record could not be read (`reason`, a closed label): no batch can be shown
 *   complete, so every batch is judged incomplete (a reset, never a success).
 */
export type HookBatchListing =
  | { readonly kind: 'listed'; readonly turn: string | undefined; readonly calls: readonly HookListedCall[] }
  | { readonly kind: 'unreadable'; readonly reason: 'no_record' | 'not_a_file' | 'too_large' | 'malformed' | 'read_error' };

/** A call is about to run (e.g. Claude Code `PreToolUse`): feeds the identical-call breaker. */
export interface HookCallStarted extends HookEventCommon {
  readonly type: 'call_started';
  readonly callId: string;
  readonly toolName: string;
  /** The call's input, hashed in memory for the breaker; never stored or emitted. */
  readonly toolInput: unknown;
}

/** A call settled (e.g. Claude Code `PostToolUseFailure`): recorded in the open batch. */
export interface HookCallSettled extends HookEventCommon {
  readonly type: 'call_settled';
  readonly callId: string;
  readonly toolName: string;
  readonly toolType: ToolType;
  readonly outcome: HookCallOutcome;
}

/** One call a {@link HookBatchSettled} lists. */
export interface HookBatchCall {
  readonly callId: string;
  readonly toolName: string;
  readonly toolType: ToolType;
  /**
   * What the host's batch event itself says about the call, used when no {@link HookCallSettled}
   * recorded it (a recorded outcome wins): for Claude Code, `success` unless the result shows a
   * call refused before it ran. `undefined`: the host knows of no outcome yet; the batch is then
   * judged only when a {@link HookCallSettled} recorded the call, else the event changes nothing
   * (a later one lists the batch again).
   */
  readonly outcome: HookCallOutcome | undefined;
}

/**
 * Every call of one model batch settled (e.g. Claude Code `PostToolBatch`): the open batch is
 * closed, its receipt reduced, and the action returned on this event.
 */
export interface HookBatchSettled extends HookEventCommon {
  readonly type: 'batch_settled';
  /** The batch's calls as the host lists them. */
  readonly calls: readonly HookBatchCall[];
  /** False when the host's list was malformed or cut: the receipt is then `incomplete`. */
  readonly complete: boolean;
  /**
   * The batch's 1-based ordinal within the prompt, for a host whose every event lists the
   * prompt's batches again (Codex: read from the session transcript): a batch whose ordinal the
   * runtime has already reduced, or one listed before the batch ahead of it, changes nothing.
   * `undefined`: every such event closes a batch.
   */
  readonly ordinal?: number;
  /**
   * The host's own record of the batch ({@link HookAdapter.readListing}), for hosts whose hooks
   * miss calls: every listed call is matched, by tool name and status, with the calls the hooks
   * recorded. A listed call no hook recorded never ran to its `AfterTool`: refused (`error`) it is
   * `not_started`, `cancelled` it is `cancelled`, anything else leaves the batch incomplete; a
   * recorded call the listing lacks, or a listing that could not be read, leaves it incomplete too.
   * Absent: the hooks saw every call (Claude Code).
   */
  readonly listing?: HookBatchListing;
}

/** A parsed hook input the runtime acts on. */
export type HookEvent = HookPromptStarted | HookCallStarted | HookCallSettled | HookBatchSettled;

/**
 * What the guard asks the host to do, before the adapter formats it. Shadow mode never gets
 * anything but `none`.
 * - `remind` (warn, enforce): hand the design's fixed reminder to the model with the batch's results;
 * - `stop` (enforce): end the run after this batch, with the fixed stop text for the user;
 * - `warn_call`: the identical-call breaker's warning, with this call;
 * - `deny_call` (warn, enforce): refuse this call before it runs (the breaker's block); the batch
 *   it belongs to is then stopped.
 */
export type HookAction =
  | { readonly type: 'none' }
  | { readonly type: 'remind'; readonly text: string }
  | { readonly type: 'stop'; readonly text: string }
  | { readonly type: 'warn_call'; readonly text: string }
  | { readonly type: 'deny_call'; readonly text: string };

/**
 * A host agent's hook adapter: the only agent-specific part of a hook (see
 * docs/adding-an-agent.md, "Hook adapter").
 */
export interface HookAdapter {
  /** The wire profile of the agent (its telemetry namespace is the guard telemetry's). */
  readonly profile: WireProfileName;
  /** The command name in diagnostics, e.g. `claude-code-hook`. */
  readonly command: string;
  /**
   * The closed vocabulary of the execution error types its {@link HookCallOutcome}s carry (the
   * failure key's second half); the guard emits nothing outside it.
   */
  readonly vocabulary: readonly string[];
  /**
   * For a host whose batch event comes only with its next model request, too late to reach the
   * model with the batch's results (gemini-cli's `BeforeModel`): when the last running call of the
   * open batch settles (every {@link HookCallStarted} has its {@link HookCallSettled}), the runtime
   * previews the batch's decision and returns `remind` on that `call_settled`. The batch event then
   * gives only the stop. A warned candidate whose reminder never went out is never stopped (the
   * design: no stop without the reminder turn). @defaultValue false
   */
  readonly remindOnLastCall?: boolean;
  /**
   * For a host whose hooks never see some of a batch's calls: read the host's own record of the
   * latest model turn (gemini-cli: the session transcript named in the hook input) for a
   * `prompt_started` or `batch_settled` event, before the state is updated. Only tool names and
   * statuses are taken from it; nothing else of it is kept. Never rejects (an unreadable record is
   * a `listing` of kind `unreadable`). Absent: the hooks see every call.
   */
  readListing?(input: unknown): Promise<HookBatchListing>;
  /**
   * For a host that cannot end a turn from a hook (Codex 0.169.0: no hook output ends a turn once
   * it started): after a stop (the failure guard's or the breaker's) every later call of the
   * prompt gets `deny_call` with the stop text at its {@link HookCallStarted}, so no tool runs
   * after the stop. @defaultValue false
   */
  readonly denyAfterStop?: boolean;
  /**
   * Read what the host's input points to and the hook must see (Codex: the session transcript the
   * input names), before {@link HookAdapter.parse} gets the result. Runs within the invocation's
   * time limit; must not reject (a read that fails resolves to what parse can judge without it).
   * Absent: parse gets the stdin JSON value itself.
   */
  load?(input: unknown): Promise<unknown>;
  /**
   * Translate one parsed stdin JSON value (or what {@link HookAdapter.load} made of it).
   * `undefined`: an event the guard ignores (another event type, a subagent's call) or one
   * missing a field the guard needs. A list: the runtime steps each in order under one lock, and
   * formats the strongest action (`stop`, `deny_call`, `remind`, `warn_call`) for the list's last
   * event, which must be the host's own. Pure, never throws.
   */
  parse(input: unknown): HookEvent | readonly HookEvent[] | undefined;
  /**
   * The object to print on stdout for an action on an event, or `undefined` to print nothing.
   * Called for every event, `none` included (an adapter may always answer something). Pure.
   */
  format(event: HookEvent, action: HookAction): Record<string, unknown> | undefined;
  /**
   * The output that shows the user a problem that keeps the guard from working (an unsafe state
   * directory, a time limit, a missing package), merged under the action's output. Pure. Without
   * it, problems go to stderr only.
   */
  formatProblem?(text: string): Record<string, unknown>;
}

/**
 * The failure engine's public shapes: what it reports to listeners (decisions, unjudged batches,
 * evictions), its settings, and the defaults of its memory bounds.
 */
import type { BatchReceipt, DrainSignals, FailureOutcome, GuardMode } from '../core/failure/types.js';
import type { GuardRoute } from './call-facts.js';
import type { ExecutionErrorVocabulary } from './error-vocabulary.js';
import type { UntypedFailurePolicy } from '../core/failure/reducer.js';

/** One reduced batch, reported to every engine listener (including decision `none`). */
export interface BatchDecision {
  readonly promptId: string;
  /** 1-based index of the batch within its prompt. */
  readonly batch: number;
  readonly mode: GuardMode;
  readonly route: GuardRoute;
  readonly sessionId: string | undefined;
  /**
   * The producer's Resource `service.name` (which agent), when its profile reads it (`genai`,
   * `openinference`); used to count untyped failures per agent. Never a metric label.
   */
  readonly serviceName?: string;
  readonly receipt: BatchReceipt;
  readonly drain: DrainSignals;
  /** Where the drain signals came from: the control hook, or assumed by the engine. */
  readonly drainSource: 'control_hook' | 'assumed';
  readonly outcome: FailureOutcome;
  /** Time of the last telemetry record of the batch, in milliseconds since the epoch. */
  readonly lastActivityMillis: number;
  /** Time the batch was reduced, in milliseconds since the epoch (engine clock). */
  readonly decidedAtMillis: number;
}

/**
 * Why a batch was not judged on its outcomes.
 *
 * - `turn_cancelled`, `cancelled_call`, `other_loop_stop`: the prompt's final batch ended the turn
 *   before the Session would run the guard on it (the in-tree guard does not judge it either);
 * - `no_terminal_records`: no call of the batch has its terminal record (a qwen-code
 *   `tool_call` log…), so its outcomes are unknown. The batch is still reduced (as `incomplete`,
 *   which resets a candidate, as the design asks), but nothing about its failures could be judged:
 *   usually the logs signal is missing (a collector writing one file per signal, a log processor
 *   not registered).
 */
export type UnjudgedReason = 'turn_cancelled' | 'cancelled_call' | 'other_loop_stop' | 'no_terminal_records';

/** Why a prompt's state was dropped without finishing. */
export type EvictionReason = 'capacity' | 'idle';

/** Receives engine output. Listener errors are caught by the engine's error reporter. */
export interface FailureEngineListener {
  onDecision?(decision: BatchDecision): void;
  onEviction?(promptId: string, reason: EvictionReason): void;
  /**
   * The engine began holding a prompt (its first record, from a profile's call): the `auto` router
   * notes which profile it was handling, to tell each decision's agent.
   */
  onPromptOpened?(promptId: string): void;
  /** The prompt's state was dropped (it ended or was evicted); `traceId` is the trace it was seen on. */
  onPromptForgotten?(promptId: string, traceId: string | undefined): void;
  /**
   * A batch was not judged on its outcomes (see {@link UnjudgedReason}); `batch` is its 1-based
   * index in the prompt (for a final batch that was never reduced: the index it would have had).
   */
  onUnjudgedBatch?(promptId: string, reason: UnjudgedReason, batch: number): void;
}

/** Limits and policy of the engine. All fields but the opt-in `promptStartRequiredFromMillis` are required here; defaults live in `config.ts`. */
export interface FailureEngineSettings {
  readonly mode: GuardMode;
  /** `qwen-code.message_type` values whose prompts are forced `off` (design: cron is off). */
  readonly offMessageTypes: readonly string[];
  readonly maxOpenPrompts: number;
  readonly maxCallsPerBatch: number;
  readonly promptIdleMillis: number;
  /**
   * Bytes of the filter that remembers evicted prompt ids for good (see `PromptRegistry`).
   * @defaultValue `1048576`
   */
  readonly evictedPromptFilterBytes?: number;
  /**
   * Most bytes the prompts may hold, estimated ({@link PROMPT_ESTIMATE_BYTES} a prompt from its
   * first record, {@link CALL_ESTIMATE_BYTES} a call held in an open, closing or pending batch,
   * {@link CLOSED_CALL_ESTIMATE_BYTES} a judged call id remembered); the estimate is exact after
   * every engine call and checked at its end. Beyond it the oldest other prompts are evicted
   * (`capacity`).
   * @defaultValue `268435456` (256 MiB)
   */
  readonly maxHeldBytes?: number;
  /**
   * The profile's closed vocabulary of execution error types; other values key the reducer as
   * `other#<digest>` and are emitted as `other`. @defaultValue none: identifier-shaped values are
   * kept (the guard facade always passes its profile's vocabulary)
   */
  readonly executionErrorTypes?: ExecutionErrorVocabulary;
  /**
   * When false, `warn` and `enforce` decide at batch close with the assumed drain, like `shadow`
   * (replay and serve, where no Session calls the hook). In-process it is true.
   */
  readonly controlHookRequired: boolean;
  /**
   * What a failure with no type is (see `FailurePolicy.untypedFailures`): the design's `ineligible`,
   * or the opt-in `key-by-tool`. @defaultValue `'ineligible'`
   */
  readonly untypedFailures?: UntypedFailurePolicy;
  /**
   * When set, a prompt is judged only if {@link FailureEngine.startPrompt} reported its start with
   * an event time at or after this value (milliseconds since the epoch) before any of its calls
   * arrived: a process that starts (or restarts) mid-prompt never judges a prompt it saw only part
   * of. Absent or `undefined` judges every prompt (in-process, replay): the one opt-in field.
   */
  readonly promptStartRequiredFromMillis?: number | undefined;
  readonly now: () => number;
  readonly reportError: (err: unknown) => void;
}

/** Default size of the evicted-prompt filter: 1 MiB, about 1% false positives after 875,000 evictions. */
export const DEFAULT_EVICTED_PROMPT_FILTER_BYTES = 1_048_576;
/** Default byte bound of the prompts held: 256 MiB. */
export const DEFAULT_MAX_HELD_BYTES = 256 * 1024 * 1024;
/**
 * Estimated bytes of a prompt's state without calls (measured about 800 with one call on Node 20).
 * Its margin covers the unused call records, at most three (about 70 bytes each), of a batch the
 * engine reused (`batch-assembler.ts`, `releaseBatch`).
 */
export const PROMPT_ESTIMATE_BYTES = 1024;
/** Estimated bytes of one call held in an open, closing or pending batch (measured about 180 on Node 20). */
export const CALL_ESTIMATE_BYTES = 256;
/** Estimated bytes of one judged call id remembered to drop its late records. */
export const CLOSED_CALL_ESTIMATE_BYTES = 96;

declare const promptRefBrand: unique symbol;

/**
 * An opaque reference to a prompt the engine holds (`FailureEngine.promptRef`); it carries no data
 * a profile may read. A reference outlives its prompt harmlessly: `FailureEngine.resumePrompt`
 * answers `false` once the prompt is forgotten.
 */
export interface PromptRef {
  readonly [promptRefBrand]: true;
}

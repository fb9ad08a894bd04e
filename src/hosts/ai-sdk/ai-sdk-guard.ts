/**
 * The guard inside a Vercel AI SDK tool loop (`generateText`, `streamText`, `ToolLoopAgent`), AI
 * SDK 6 and 7, through the two settings the SDK gives every loop:
 *
 * - `stopWhen`: after each step whose tool calls all ran, the SDK asks its stop conditions. The
 *   guard's condition hands that step's calls to the engine as one settled batch (the failure
 *   guard) and to the identical-call breaker, and answers `true` when the action is to stop.
 * - `prepareStep`: before the next model call, the reminder (or the breaker's warning) is added
 *   once, as system context: to that call's messages (AI SDK 6), or to the instructions (AI SDK 7,
 *   which refuses system messages among the messages of `streamText`).
 *
 * One SDK call is one prompt: the SDK passes the same `steps` array to both settings for the
 * whole call, so the guard keys its run on it (a `ToolLoopAgent` reused across calls, or calls run
 * concurrently, each get their own prompt).
 *
 * The SDK has no veto before a tool runs, so the breaker judges each step's calls once they ran:
 * in `enforce` the fifth identical call runs, and the loop then stops before another model call.
 *
 * Sources: `ai` 6.0.326 and 7.0.173 `generate-text/generate-text.ts`, `stream-text.ts`,
 * `stop-condition.ts`, `prepare-step.ts`, `step-result.ts`.
 */
import { randomUUID } from 'node:crypto';
import type { RepeatedToolFailureGuardOptions } from '../../otel/config.js';
import { RepeatedToolFailureGuard } from '../../otel/repeated-tool-failure-guard.js';
import type { FailureEngineListener } from '../../engine/failure-types.js';
import type { RepetitionListener } from '../../engine/repetition-engine.js';
import { errorTypeKey } from '../../profiles/genai/error-types.js';
import { InProcessHost } from '../in-process-host.js';
import type { HostCall, HostCallOutcome } from '../in-process-host.js';

/** The part of an AI SDK step content part the guard reads (`tool-call`, `tool-result`, `tool-error`). */
export interface AiSdkContentPart {
  readonly type: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
  /** A `tool-call`'s input: hashed by the breaker and dropped. */
  readonly input?: unknown;
  /** A `tool-error`'s error: only its `code` or `name` is read, through a closed vocabulary. */
  readonly error?: unknown;
  readonly providerExecuted?: boolean;
}

/** The part of an AI SDK `StepResult` the guard reads. */
export interface AiSdkStep {
  readonly content: readonly AiSdkContentPart[];
}

/** An AI SDK `StopCondition` (`({ steps }) => boolean | PromiseLike<boolean>`). */
export type AiSdkStopCondition<STEP extends AiSdkStep = AiSdkStep> = (options: { steps: STEP[] }) => boolean | PromiseLike<boolean>;

/** The options an AI SDK `prepareStep` receives (the fields the guard reads). */
export interface AiSdkPrepareStepOptions<STEP extends AiSdkStep = AiSdkStep> {
  readonly steps: STEP[];
  readonly stepNumber: number;
  readonly messages: unknown[];
  /** AI SDK 7: the system instructions of the next step (a string, a system message or several). */
  readonly instructions?: unknown;
}

/** System messages (`{ role: 'system', content }`) from AI SDK 7 instructions. */
function systemMessages(instructions: unknown): unknown[] {
  if (instructions === undefined || instructions === null) return [];
  if (typeof instructions === 'string') return [{ role: 'system', content: instructions }];
  return Array.isArray(instructions) ? [...(instructions as unknown[])] : [instructions];
}

/** An AI SDK `prepareStep` function. */
export type AiSdkPrepareStep<OPTIONS, RESULT> = (options: OPTIONS) => RESULT | PromiseLike<RESULT>;

/** What {@link AiSdkGuard.settings} takes: the caller's own settings for the same slots, kept. */
export interface AiSdkGuardSettingsInput<STOP, PREPARE> {
  /**
   * The caller's own stop conditions (e.g. `stepCountIs(20)`), evaluated beside the guard's. Give
   * them here: a spread replaces the SDK's default (`generateText`: one step; `ToolLoopAgent`: 20).
   */
  readonly stopWhen?: STOP | readonly STOP[];
  /** The caller's own `prepareStep`; its result is kept, the guard only adds to its `messages`. */
  readonly prepareStep?: PREPARE;
  /** The session the identical-call breaker counts runs in (e.g. a chat id). @defaultValue one per SDK call */
  readonly sessionId?: string;
}

/**
 * The `prepareStep` the guard returns. It resolves to the caller's own result (typed by the SDK
 * per tool set, `PrepareStepResult<TOOLS>`) with the guard's text added to its `messages` or
 * `instructions`, or to `undefined`; its type leaves the SDK's own in force.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK's PrepareStepResult<TOOLS> is the caller's type
export type AiSdkGuardPrepareStep = (options: AiSdkPrepareStepOptions) => Promise<any>;

/** What {@link AiSdkGuard.settings} returns: spread it into `generateText`, `streamText` or `new ToolLoopAgent`. */
export interface AiSdkGuardSettings<STOP> {
  /** The caller's conditions, then the guard's. */
  readonly stopWhen: Array<STOP | AiSdkStopCondition>;
  readonly prepareStep: AiSdkGuardPrepareStep;
}

/** The guard's state for one SDK call. */
interface Run {
  readonly promptId: string;
  readonly sessionId: string;
  /** Steps already handed to the engine. */
  processed: number;
  /** Texts to add to the next model call's messages (each once). */
  pending: string[];
  /** The guard stopped the loop (enforce). */
  stopped: boolean;
}

/** The classified type of a `tool-error`: the error's `code` (a Node system error), else its `name`. */
function errorTypeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; name?: unknown };
  // As `Span.recordException` reads an Error: `code` when it is a string, else `name`.
  const raw = typeof e.code === 'string' ? e.code : typeof e.name === 'string' ? e.name : undefined;
  return errorTypeKey(raw);
}

const CANCELLATION_NAMES: ReadonlySet<string> = new Set(['AbortError']);

function outcomeOf(part: AiSdkContentPart | undefined): HostCallOutcome {
  if (part === undefined) return { kind: 'not_started' };
  if (part.type === 'tool-result') return { kind: 'success' };
  const name = typeof part.error === 'object' && part.error !== null ? (part.error as { name?: unknown }).name : undefined;
  if (typeof name === 'string' && CANCELLATION_NAMES.has(name)) return { kind: 'cancelled' };
  return { kind: 'error', errorType: errorTypeOf(part.error) };
}

/**
 * The guard for AI SDK loops. One instance serves every call; `settings()` returns the two slots.
 *
 * @example
 * ```ts
 * const guard = createAiSdkGuard({ mode: 'enforce' });
 * const result = await generateText({ model, tools, prompt, ...guard.settings({ stopWhen: stepCountIs(20) }) });
 * ```
 */
export class AiSdkGuard {
  /** The guard (its listeners, telemetry, options). Its processors need not be registered. */
  readonly guard: RepeatedToolFailureGuard;
  private readonly _host: InProcessHost;
  private readonly _runs = new WeakMap<object, Run>();
  private readonly _ended = new FinalizationRegistry<string>((promptId) => this._host.endPrompt(promptId));

  /**
   * @param options - the guard's options (`mode`: missing → the environment variable, else
   *   `shadow`). The profile is `ai-sdk` (its vocabulary of error types) unless given.
   */
  constructor(options?: RepeatedToolFailureGuardOptions) {
    this.guard = new RepeatedToolFailureGuard({ profile: 'ai-sdk', ...options });
    this._host = new InProcessHost(this.guard);
  }

  /**
   * The `stopWhen` and `prepareStep` settings for an AI SDK call or agent, with the caller's own
   * conditions and `prepareStep` kept. Neither ever throws into the SDK.
   */
  settings<STOP = AiSdkStopCondition, PREPARE extends AiSdkPrepareStep<never, unknown> = AiSdkPrepareStep<AiSdkPrepareStepOptions, unknown>>(
    input: AiSdkGuardSettingsInput<STOP, PREPARE> = {},
  ): AiSdkGuardSettings<STOP> {
    const own = input.stopWhen === undefined ? [] : Array.isArray(input.stopWhen) ? [...(input.stopWhen as readonly STOP[])] : [input.stopWhen as STOP];
    const ownPrepare = input.prepareStep as AiSdkPrepareStep<AiSdkPrepareStepOptions, unknown> | undefined;
    const sessionId = input.sessionId;
    const stop: AiSdkStopCondition = ({ steps }) => {
      const run = this._run(steps, sessionId);
      if (run === undefined) return false;
      this._catchUp(run, steps);
      return run.stopped;
    };
    const prepareStep = async (options: AiSdkPrepareStepOptions): Promise<unknown> => {
      const run = this._run(options.steps, sessionId);
      if (run !== undefined) this._catchUp(run, options.steps);
      const result = ownPrepare === undefined ? undefined : await ownPrepare(options);
      if (run === undefined || run.pending.length === 0) return result;
      const added = run.pending.map((content) => ({ role: 'system', content }));
      run.pending = [];
      // Fixed system context, not user input. AI SDK 7 takes system text only as instructions
      // (which stay for the rest of the call); AI SDK 6 takes it in this model call's messages.
      const own = result as { messages?: unknown[]; instructions?: unknown; system?: unknown } | undefined;
      if ('instructions' in options) {
        return { ...own, instructions: [...systemMessages(own?.instructions ?? own?.system ?? options.instructions), ...added] };
      }
      return { ...own, messages: [...(own?.messages ?? options.messages), ...added] };
    };
    return { stopWhen: [...own, stop], prepareStep };
  }

  /** Listen to every reduced batch and every breaker decision. */
  addListener(listener: FailureEngineListener & RepetitionListener): void {
    this.guard.addListener(listener);
  }

  /** Judge what is held and stop. Idempotent. */
  shutdown(): Promise<void> {
    return this.guard.shutdown();
  }

  /** The run of the SDK call that owns `steps` (created at its first sight). */
  private _run(steps: unknown, sessionId: string | undefined): Run | undefined {
    if (!Array.isArray(steps)) return undefined;
    let run = this._runs.get(steps);
    if (run === undefined) {
      const promptId = randomUUID();
      run = { promptId, sessionId: sessionId ?? promptId, processed: 0, pending: [], stopped: false };
      this._runs.set(steps, run);
      this._ended.register(steps, promptId);
      this._host.beginPrompt(promptId, run.sessionId);
    }
    return run;
  }

  /** Hand every step not yet seen to the engine and the breaker, in order. */
  private _catchUp(run: Run, steps: readonly AiSdkStep[]): void {
    while (run.processed < steps.length && !run.stopped) {
      const step = steps[run.processed];
      run.processed += 1;
      if (step !== undefined && Array.isArray(step.content)) this._step(run, step.content);
    }
  }

  private _step(run: Run, content: readonly AiSdkContentPart[]): void {
    const calls: AiSdkContentPart[] = [];
    const ends = new Map<string, AiSdkContentPart>();
    for (const part of content) {
      if (part === null || typeof part !== 'object' || typeof part.toolCallId !== 'string' || part.providerExecuted === true) continue;
      if (part.type === 'tool-call' && typeof part.toolName === 'string') calls.push(part);
      else if (part.type === 'tool-result' || part.type === 'tool-error') ends.set(part.toolCallId, part);
    }
    if (calls.length === 0) return;
    let blocked = false;
    for (const call of calls) {
      const action = this._host.checkCall({ sessionId: run.sessionId, promptId: run.promptId, callId: call.toolCallId as string, toolName: call.toolName as string, arguments: call.input });
      if (action.type === 'warn') run.pending.push(action.text);
      else if (action.type === 'block') {
        run.pending.push(action.text);
        blocked = true;
      }
    }
    const batch: HostCall[] = calls.map((c) => ({ callId: c.toolCallId as string, toolName: c.toolName as string, outcome: outcomeOf(ends.get(c.toolCallId as string)) }));
    const action = this._host.settleBatch(run.promptId, batch);
    if (action.type === 'remind') run.pending.push(action.text);
    if (action.type === 'stop' || blocked) {
      run.stopped = true;
      this._host.endPrompt(run.promptId);
    }
  }
}

/** Create the AI SDK guard: shorthand for `new AiSdkGuard(options)`. */
export function createAiSdkGuard(options?: RepeatedToolFailureGuardOptions): AiSdkGuard {
  return new AiSdkGuard(options);
}

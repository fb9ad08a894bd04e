import { globalErrorHandler } from '@opentelemetry/core';
import type { FailureEngine } from '../engine/failure-engine.js';
import type { RepetitionAction } from '../core/repetition/types.js';
import type { RepetitionEngine } from '../engine/repetition-engine.js';
import type { FailureAction, ToolType } from '../core/failure/types.js';

/** What the Session passes to {@link GuardControl.afterToolBatch} after a tool batch settled. */
export interface AfterToolBatchInput {
  /** The prompt id the Session also writes to telemetry (`qwen-code.prompt_id`). */
  readonly promptId: string;
  /** The mid-turn drain returned new external input. */
  readonly hasExternalInput: boolean;
  /** The drain reported a queued full prompt. */
  readonly hasQueuedPrompt: boolean;
  /** The drain answered reliably (a boolean `hasQueuedPrompt`, in time). `false` disables enforcement for the prompt. */
  readonly inputReliable: boolean;
  /** A channel-bridge prompt: forced `off`. @defaultValue `false` */
  readonly channelPrompt?: boolean;
}

/** What the Session passes to {@link GuardControl.beforeToolCall} before it executes a call. */
export interface BeforeToolCallInput {
  /** The session id (`session.id`); the run of identical calls is per session. */
  readonly sessionId: string;
  /** The prompt id; a new real user prompt resets the run. */
  readonly promptId: string;
  /** Provider call id, so that a call is never counted twice. */
  readonly callId?: string;
  /** Resolved tool name. */
  readonly toolName: string;
  /** The call's arguments (any JSON value). Hashed in memory and dropped at once. */
  readonly arguments: unknown;
  readonly toolType?: ToolType;
  /** True when the prompt was injected by the agent itself (cron, notification, continuation): it does not reset the run. @defaultValue `false` */
  readonly injectedPrompt?: boolean;
}

const NONE: FailureAction = { type: 'none' };
const NO_REPETITION_ACTION: RepetitionAction = { type: 'none' };

/**
 * The in-process control hook. The Session calls {@link GuardControl.afterToolBatch} once per
 * settled tool batch, after draining mid-turn input and before building the next model message,
 * and applies the action it gets back:
 *
 * - `none`: continue as usual;
 * - `remind`: append `action.text` (the fixed reminder) to the next model-bound message;
 * - `stop`: keep every settled result, add `action.text` to history, end the request without
 *   another model stream.
 *
 * In `shadow` it always returns `none`. In `warn` and `enforce` a batch whose Session never calls
 * the hook is treated as an unreliable drain (reset `unreliable_input`, enforcement disabled for
 * the prompt), so the guard can never act for a Session that does not call it.
 */
export class GuardControl {
  private readonly _engine: FailureEngine;
  private readonly _repetition: RepetitionEngine;
  private readonly _isShutdown: () => boolean;

  constructor(engine: FailureEngine, repetition: RepetitionEngine, isShutdown: () => boolean) {
    this._engine = engine;
    this._repetition = repetition;
    this._isShutdown = isShutdown;
  }

  /**
   * The identical tool-call repetition breaker's hook: call it before executing each tool call.
   *
   * - `none`: run the call as usual;
   * - `warn`: run it, and append `action.text` to its result;
   * - `block`: do not run it, give the model `action.text` as its result, and stop the turn.
   *
   * Once a session calls this hook, its calls are no longer counted from telemetry (no double
   * counting). In `shadow` it always returns `none`. Never throws; errors give `none`.
   */
  beforeToolCall(input: BeforeToolCallInput): RepetitionAction {
    if (this._isShutdown()) return NO_REPETITION_ACTION;
    try {
      if (input === null || typeof input !== 'object' || typeof input.promptId !== 'string' || typeof input.toolName !== 'string') {
        return NO_REPETITION_ACTION;
      }
      return this._repetition.beforeToolCall({
        sessionId: typeof input.sessionId === 'string' ? input.sessionId : undefined,
        promptId: input.promptId,
        callId: typeof input.callId === 'string' ? input.callId : undefined,
        toolName: input.toolName,
        args: input.arguments,
        argsAreJsonText: false,
        toolType: input.toolType === 'native' || input.toolType === 'mcp' ? input.toolType : undefined,
        userPrompt: input.injectedPrompt !== true,
        route: 'acp_foreground',
      });
    } catch (err) {
      globalErrorHandler(err as Error);
      return NO_REPETITION_ACTION;
    }
  }

  /**
   * Reduce the prompt's settled batch with the drain result and return the action.
   * Never throws; errors are reported via the global error handler and give `none`. Malformed
   * input (non-boolean signals) is treated as an unreliable drain.
   */
  afterToolBatch(input: AfterToolBatchInput): FailureAction {
    if (this._isShutdown()) return NONE;
    try {
      if (input === null || typeof input !== 'object' || typeof input.promptId !== 'string' || input.promptId === '') {
        return NONE;
      }
      const wellFormed =
        typeof input.hasExternalInput === 'boolean' &&
        typeof input.hasQueuedPrompt === 'boolean' &&
        typeof input.inputReliable === 'boolean';
      return this._engine.afterToolBatch(
        input.promptId,
        wellFormed
          ? { hasExternalInput: input.hasExternalInput, hasQueuedPrompt: input.hasQueuedPrompt, inputReliable: input.inputReliable }
          : { hasExternalInput: false, hasQueuedPrompt: false, inputReliable: false },
        input.channelPrompt === true,
      );
    } catch (err) {
      globalErrorHandler(err as Error);
      return NONE;
    }
  }

  /** Force a prompt `off` (a channel-bridge prompt). Never throws. */
  markChannelPrompt(promptId: string): void {
    if (this._isShutdown()) return;
    try {
      this._engine.markChannelPrompt(promptId);
    } catch (err) {
      globalErrorHandler(err as Error);
    }
  }
}

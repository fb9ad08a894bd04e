/**
 * The seam every in-process host adapter uses (the AI SDK, pi): it translates what a host knows
 * about one settled tool batch into the engine's call updates, closes the batch through the control
 * hook and hands back the guard's action; before a call runs it asks the identical-call breaker.
 * It holds no guard state of its own: batch assembly and reduction stay the engine's.
 */
import { globalErrorHandler } from '@opentelemetry/core';
import type { RepetitionAction } from '../core/repetition/types.js';
import type { FailureAction } from '../core/failure/types.js';
import type { CallFacts } from '../engine/call-facts.js';
import type { RepeatedToolFailureGuard } from '../otel/repeated-tool-failure-guard.js';

/**
 * How one call of a settled batch ended, as the host can tell:
 *
 * - `success`: the tool ran and returned;
 * - `error`: the tool ran and failed; `errorType` is the host's structured class of the failure
 *   (an identifier such as `exit_128` or `file_not_found`), `undefined` when the host has none
 *   (the design's `unknown`: never counted, resets and disables enforcement for the prompt);
 * - `cancelled`: the user or the host aborted it;
 * - `not_started`: it never ran (validation failure, unknown tool, blocked before it ran).
 */
export type HostCallOutcome =
  | { readonly kind: 'success' }
  | { readonly kind: 'error'; readonly errorType: string | undefined }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'not_started' };

/** One call of a settled batch. Holds no argument, result or error text. */
export interface HostCall {
  /** The provider's call id. */
  readonly callId: string;
  /** The tool's registered name. */
  readonly toolName: string;
  readonly outcome: HostCallOutcome;
}

/** The call facts of an outcome (what a profile reads from an execution span's end). */
function factsOf(call: HostCall): CallFacts {
  const o = call.outcome;
  switch (o.kind) {
    case 'success':
      return { toolName: call.toolName, terminalStatus: 'success', spanExecutionStatus: 'success' };
    case 'cancelled':
      return { toolName: call.toolName, terminalStatus: 'cancelled', spanExecutionStatus: 'cancelled' };
    case 'not_started':
      return { toolName: call.toolName, terminalStatus: 'error', spanExecutionStatus: 'not_started' };
    case 'error':
      return o.errorType === undefined
        ? { toolName: call.toolName, terminalStatus: 'error', spanExecutionStatus: 'unknown' }
        : { toolName: call.toolName, terminalStatus: 'error', spanExecutionStatus: 'error', spanErrorType: o.errorType };
  }
}

const NONE: FailureAction = { type: 'none' };

/**
 * One guard driven by a host's own events instead of telemetry. One prompt is one host run (an
 * SDK call, an agent loop); the host's loop only ever runs the next model request after a batch
 * settled, so every batch is reduced with a reliable, empty drain.
 */
export class InProcessHost {
  /** The guard whose engine, breaker and control hook this host drives. */
  readonly guard: RepeatedToolFailureGuard;

  constructor(guard: RepeatedToolFailureGuard) {
    this.guard = guard;
  }

  /** A host run began: a foreground prompt (`agent_run` route) of the session. Never throws. */
  beginPrompt(promptId: string, sessionId?: string): void {
    this._safe(() => this.guard.engine.observePrompt(promptId, { foreground: true, route: 'agent_run', sessionId }), undefined);
  }

  /**
   * Every call of one model response has settled: hand them to the engine as one batch and return
   * the failure guard's action (`none` in shadow). Never throws (errors give `none`).
   *
   * @param promptId - the run's prompt id
   * @param calls - the batch's calls in the model's order; an empty batch reduces nothing
   * @param timeMillis - event time, in milliseconds since the epoch
   * @param hasExternalInput - the user sent input after the batch (it resets the guard)
   */
  settleBatch(promptId: string, calls: readonly HostCall[], timeMillis: number = Date.now(), hasExternalInput = false): FailureAction {
    if (calls.length === 0) return NONE;
    return this._safe(() => {
      const engine = this.guard.engine;
      for (const call of calls) {
        engine.updateCall({ promptId, callId: call.callId, opened: 'tool', closed: 'tool', settled: true, facts: factsOf(call), timeMillis });
      }
      return this.guard.control.afterToolBatch({ promptId, hasExternalInput, hasQueuedPrompt: false, inputReliable: true });
    }, NONE);
  }

  /**
   * A call is about to run (or, for a host with no veto, has just been admitted): the breaker's
   * action. `arguments` is hashed in memory and dropped. Never throws.
   */
  checkCall(input: { readonly sessionId: string; readonly promptId: string; readonly callId: string; readonly toolName: string; readonly arguments: unknown; readonly injectedPrompt?: boolean }): RepetitionAction {
    return this.guard.control.beforeToolCall(input);
  }

  /** The run ended (`cancelled`: the user or host aborted it). Never throws. */
  endPrompt(promptId: string, cancelled = false): void {
    this._safe(() => this.guard.engine.endPrompt(promptId, cancelled), undefined);
  }

  private _safe<T>(fn: () => T, fallback: T): T {
    try {
      return fn();
    } catch (err) {
      // A host hook never throws into the host.
      globalErrorHandler(err as Error);
      return fallback;
    }
  }
}

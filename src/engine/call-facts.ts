/**
 * Internal shapes shared by the engine and the wire profiles. Never re-exported.
 */
import type { ToolType } from '../core/failure/types.js';

/** Facts about one call gathered from spans and logs; merged field by field, first value kept. */
export interface CallFacts {
  /** Policy tool name from `gen_ai.tool.name` on the tool or execution span. */
  toolName?: string;
  /** Lookup name from the `tool_call` log's `function_name` (normally equal to `toolName`). */
  lookupName?: string;
  toolType?: ToolType;
  /** Terminal status as the producer wrote it; validated when the receipt is built. */
  terminalStatus?: string;
  /** Frozen execution status from the execution span (preferred). */
  spanExecutionStatus?: string;
  /** Execution error type from the execution span (preferred). */
  spanErrorType?: string;
  /** Execution status from the `tool_call` log. */
  logExecutionStatus?: string;
  /** Terminal error type from the `tool_call` log (trusted only when its execution status is `error`). */
  logErrorType?: string;
  providerDuplicate?: boolean;
}

/** One update about a call, from a profile to the engine. */
export interface CallUpdate {
  readonly promptId: string;
  readonly callId: string;
  /** A span of this call started. */
  readonly opened?: 'tool' | 'execution';
  /** A span of this call ended. */
  readonly closed?: 'tool' | 'execution';
  /** The call's terminal record arrived (a `tool_call` log, or a batch-span child's end). */
  readonly settled?: boolean;
  /** Headless model response id: a change of it starts a new batch. */
  readonly responseId?: string;
  readonly facts?: CallFacts;
  /** Event time in milliseconds since the epoch. */
  readonly timeMillis: number;
}

/** What a profile knows when it first sees a prompt. */
export interface PromptInfo {
  /** The agent's message type of the prompt (e.g. qwen-code's `acp_prompt | cron | userQuery`), when known; matched against `offMessageTypes`. */
  readonly messageType?: string;
  /** The prompt's route, when the record proves it (e.g. from the message type). */
  readonly route?: GuardRoute;
  /** A route the record suggests, applied only while the route is not proven (e.g. a headless-only attribute). */
  readonly inferredRoute?: GuardRoute;
  readonly sessionId?: string;
  /** The producer's Resource `service.name` (which agent), when the profile reads it. */
  readonly serviceName?: string;
  /** True when the record proves a foreground prompt (interaction span, interaction llm_request, api_request). */
  readonly foreground?: boolean;
  /**
   * `true`: the prompt's latest batch has no model request after it yet; `false`: one followed (or
   * the batch was judged by a hook that ended the turn). A prompt that ends while it is `true` had
   * its turn cut after the batch (a user interrupt, a turn cap): its final batch is not judged
   * (`turn_cancelled`), as the design leaves a cancelled turn's batch unreduced.
   */
  readonly batchAwaitingRequest?: boolean;
  /** The prompt's trace, so the profile's trace index can forget it with the prompt. */
  readonly traceId?: string;
  /**
   * A value the profile keeps with the prompt while the engine holds it (read back with
   * `FailureEngine.profileNote`; the engine never interprets it). Replaces the previous note.
   */
  readonly note?: string | null;
}

/**
 * Route label. `acp_foreground` is the in-tree value (interactive ACP foreground prompt);
 * `headless` marks a qwen-code `-p` prompt (`qwen-code.message_type = userQuery`), where qwen-code
 * itself has no guard; `agent_run` marks one agent run (`invoke_agent`) of a framework that follows
 * the OpenTelemetry GenAI conventions (the `genai` profile).
 */
export type GuardRoute = 'acp_foreground' | 'headless' | 'agent_run';

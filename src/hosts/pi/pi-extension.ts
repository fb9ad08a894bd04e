/**
 * The guard as a pi extension (`@mariozechner/pi-coding-agent`, checked against 0.73.1): both
 * guards, shadow by default, through pi's extension events.
 *
 * - `agent_start` / `agent_end` bound one prompt (one agent loop over a user message).
 * - `tool_call` (awaited before the call runs) asks the identical-call breaker: `warn` → the
 *   warning is appended to that call's result at its `tool_result`; `block` → `{ block: true,
 *   reason }` (the call never runs, the model reads the fixed text) and `ctx.abort()`.
 * - `tool_result` (awaited after the call ran) records how the call ended: `isError` false is a
 *   success; for `bash`, pi rejects a non-zero exit with "Command exited with code N", of which
 *   only N is kept, as the class `exit_N` (a timeout is `timeout`, "Command aborted" a
 *   cancellation); any other error has no class (`unknown`: never counted). A call with no
 *   `tool_result` never ran (validation failure, unknown tool, blocked): `not_started`.
 * - `context` (awaited before every model request) closes the batch of the previous model
 *   response: its tool results are the `toolResult` messages after the last assistant message.
 *   The batch goes to the engine; `remind` → the reminder is appended to the last tool result of
 *   this request only (the model reads it once); `stop` → `ctx.abort()`, so this request never
 *   reaches the model. `turn_end` carries the same results, but pi 0.73.1 hands agent events to
 *   extensions on a queue the loop does not wait for, so it can arrive after the next request.
 *
 * Mode: the `--repeated-tool-failure-guard <off|shadow|warn|enforce>` flag, else the options given
 * to {@link createPiExtension}, else the guard's environment variable, else `shadow`. Decisions
 * are appended as JSON lines to the file named by `RTFG_PI_DECISIONS` (the `replay --format json`
 * shape: ids, closed labels and counts only).
 *
 * Sources: pi-coding-agent 0.73.1 `dist/core/extensions/types.d.ts`, `dist/core/agent-session.js`
 * (`_installAgentToolHooks`, `_handleAgentEvent`), `dist/core/sdk.js` (`transformContext`),
 * `dist/core/tools/bash.js`; pi-agent-core 0.73.1 `dist/agent-loop.js`.
 */
import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { parseGuardMode } from '../../core/mode.js';
import type { GuardMode } from '../../core/failure/types.js';
import type { RepeatedToolFailureGuardOptions } from '../../otel/config.js';
import { RepeatedToolFailureGuard } from '../../otel/repeated-tool-failure-guard.js';
import { decisionLine, repetitionLine } from '../../report/text.js';
import { InProcessHost } from '../in-process-host.js';
import type { HostCall, HostCallOutcome } from '../in-process-host.js';

/** The pi flag that sets the mode. */
export const PI_MODE_FLAG = 'repeated-tool-failure-guard';
/** Environment variable naming a file the extension appends its decisions to (JSON lines). */
export const PI_DECISIONS_ENV = 'RTFG_PI_DECISIONS';

/** A text part of a pi message or tool result. */
interface PiTextPart {
  readonly type: string;
  readonly text?: string;
}

/** The pi message fields the extension reads (`AgentMessage`). */
interface PiMessage {
  readonly role: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly isError?: boolean;
  readonly content?: unknown;
}

/** The part of pi's `ExtensionContext` the extension uses. */
export interface PiExtensionContext {
  abort(): void;
  readonly hasUI?: boolean;
  readonly ui?: { notify?(message: string, type?: 'info' | 'warning' | 'error'): void };
  readonly sessionManager?: { getSessionId?(): string };
}

/** The part of pi's `ExtensionAPI` the extension uses. */
export interface PiExtensionApi {
  on(event: string, handler: (event: never, ctx: PiExtensionContext) => unknown): void;
  registerFlag?(name: string, options: { description?: string; type: 'boolean' | 'string'; default?: boolean | string }): void;
  getFlag?(name: string): boolean | string | undefined;
}

/** The extension's state for one prompt. */
interface Prompt {
  readonly promptId: string;
  /** How each call that ran ended, from its `tool_result`. */
  readonly ended: Map<string, HostCallOutcome>;
  /** Calls the breaker blocked. */
  readonly blocked: Set<string>;
  /** Breaker warnings to append to a call's result. */
  readonly warnings: Map<string, string>;
  /** Calls of batches already handed to the engine. */
  readonly settled: Set<string>;
  stopped: boolean;
}

const EXIT_CODE = /Command exited with code (\d{1,3})\s*$/;
const TIMED_OUT = /Command timed out after \d+ seconds\s*$/;
const ABORTED = /Command aborted\s*$/;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as PiTextPart[]).map((p) => (p !== null && typeof p === 'object' && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('\n');
}

/**
 * How a call that ran ended. Only the exit code of pi's bash rejection is read (as `exit_<N>`),
 * and its fixed timeout and abort statuses; no other text is a classification.
 */
export function piCallOutcome(toolName: string, isError: boolean, content: unknown): HostCallOutcome {
  if (!isError) return { kind: 'success' };
  if (toolName !== 'bash') return { kind: 'error', errorType: undefined };
  const text = textOf(content);
  const code = EXIT_CODE.exec(text);
  if (code !== null) return { kind: 'error', errorType: `exit_${Number(code[1])}` };
  if (TIMED_OUT.test(text)) return { kind: 'error', errorType: 'timeout' };
  if (ABORTED.test(text)) return { kind: 'cancelled' };
  return { kind: 'error', errorType: undefined };
}

/**
 * Build the pi extension factory.
 *
 * @param options - the guard's options; `mode` is overridden by the `--repeated-tool-failure-guard`
 *   flag when given. Missing: the environment variable, else `shadow`.
 * @returns the factory pi calls with its `ExtensionAPI`
 */
export function createPiExtension(options: RepeatedToolFailureGuardOptions = {}): (pi: PiExtensionApi) => void {
  return (pi: PiExtensionApi) => {
    pi.registerFlag?.(PI_MODE_FLAG, { description: 'repeated-tool-failure-guard mode: off, shadow, warn or enforce', type: 'string' });
    let host: InProcessHost | undefined;
    let prompt: Prompt | undefined;
    let injected = false;
    const sessionId = randomUUID();
    const decisionsFile = process.env[PI_DECISIONS_ENV];
    const write = (line: object): void => {
      if (decisionsFile === undefined || decisionsFile === '') return;
      try {
        appendFileSync(decisionsFile, `${JSON.stringify(line)}\n`);
      } catch {
        // a decisions file that cannot be written never stops the agent
      }
    };

    const hostOf = (): InProcessHost => {
      if (host !== undefined) return host;
      const flag = pi.getFlag?.(PI_MODE_FLAG);
      const flagMode: GuardMode | undefined = typeof flag === 'string' ? parseGuardMode(flag) : undefined;
      const guard = new RepeatedToolFailureGuard({ profile: 'genai', ...options, ...(flagMode === undefined ? {} : { mode: flagMode }) });
      guard.addListener({
        onDecision: (d) => {
          if (d.outcome.decision !== 'none') write(decisionLine(d));
        },
        onRepetitionDecision: (r) => write(repetitionLine(r)),
      });
      host = new InProcessHost(guard);
      return host;
    };

    /** Hand the batch of the last model response to the engine, once. */
    const settle = (p: Prompt, messages: readonly PiMessage[]): ReturnType<InProcessHost['settleBatch']> | undefined => {
      let last = messages.length - 1;
      while (last >= 0 && messages[last]?.role !== 'assistant') last--;
      const calls: HostCall[] = [];
      let laterInput = false;
      for (let i = last + 1; i < messages.length; i++) {
        const m = messages[i] as PiMessage;
        if (m.role === 'user') laterInput = true;
        if (m.role !== 'toolResult' || typeof m.toolCallId !== 'string' || p.settled.has(m.toolCallId)) continue;
        p.settled.add(m.toolCallId);
        const outcome: HostCallOutcome = p.blocked.has(m.toolCallId) ? { kind: 'not_started' } : (p.ended.get(m.toolCallId) ?? (m.isError === true ? { kind: 'not_started' } : { kind: 'success' }));
        calls.push({ callId: m.toolCallId, toolName: typeof m.toolName === 'string' ? m.toolName : '', outcome });
      }
      if (calls.length === 0) return undefined;
      return hostOf().settleBatch(p.promptId, calls, Date.now(), laterInput && !injected);
    };

    pi.on('input', (event: { source?: string }) => {
      injected = event?.source === 'extension';
    });

    pi.on('agent_start', () => {
      const h = hostOf();
      prompt = { promptId: randomUUID(), ended: new Map(), blocked: new Set(), warnings: new Map(), settled: new Set(), stopped: false };
      h.beginPrompt(prompt.promptId, sessionId);
    });

    pi.on('tool_call', (event: { toolCallId?: string; toolName?: string; input?: unknown }, ctx) => {
      const p = prompt;
      if (p === undefined || typeof event?.toolCallId !== 'string' || typeof event.toolName !== 'string') return undefined;
      const action = hostOf().checkCall({ sessionId, promptId: p.promptId, callId: event.toolCallId, toolName: event.toolName, arguments: event.input, injectedPrompt: injected });
      if (action.type === 'warn') p.warnings.set(event.toolCallId, action.text);
      if (action.type !== 'block') return undefined;
      p.blocked.add(event.toolCallId);
      p.stopped = true;
      ctx.abort();
      return { block: true, reason: action.text };
    });

    pi.on('tool_result', (event: { toolCallId?: string; toolName?: string; isError?: boolean; content?: unknown }) => {
      const p = prompt;
      if (p === undefined || typeof event?.toolCallId !== 'string') return undefined;
      p.ended.set(event.toolCallId, piCallOutcome(String(event.toolName), event.isError === true, event.content));
      const warning = p.warnings.get(event.toolCallId);
      if (warning === undefined) return undefined;
      const content = Array.isArray(event.content) ? (event.content as unknown[]) : [];
      return { content: [...content, { type: 'text', text: warning }] };
    });

    pi.on('context', (event: { messages?: PiMessage[] }, ctx) => {
      const p = prompt;
      const messages = event?.messages;
      if (p === undefined || !Array.isArray(messages) || p.stopped) return undefined;
      const action = settle(p, messages);
      if (action === undefined || action.type === 'none') return undefined;
      if (action.type === 'stop') {
        p.stopped = true;
        if (ctx.hasUI === true) ctx.ui?.notify?.(action.text, 'warning');
        ctx.abort();
        return undefined;
      }
      // The reminder: appended to the last tool result of this request only.
      let at = messages.length - 1;
      while (at >= 0 && messages[at]?.role !== 'toolResult') at--;
      if (at < 0) return undefined;
      const target = messages[at] as PiMessage;
      const content = Array.isArray(target.content) ? (target.content as unknown[]) : [{ type: 'text', text: textOf(target.content) }];
      const copy = [...messages];
      copy[at] = { ...target, content: [...content, { type: 'text', text: action.text }] };
      return { messages: copy };
    });

    pi.on('agent_end', (event: { messages?: PiMessage[] }) => {
      const p = prompt;
      if (p === undefined) return;
      prompt = undefined;
      // A batch no model request followed (the loop ended on it): judged, nothing left to act on.
      if (!p.stopped && Array.isArray(event?.messages)) settle(p, event.messages);
      hostOf().endPrompt(p.promptId);
    });
  };
}

/**
 * The in-process example of docs/in-process.md, kept compiling by `npm run test:types`: the guard registered in the
 * agent's NodeSDK (shadow needs nothing else), and the Session-side hooks for warn and enforce.
 */
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace';
import { BatchLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { createRepeatedToolFailureGuard } from '../src/index.js';

// Mode from REPEATED_TOOL_FAILURE_GUARD_MODE (or qwen-code's QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD; missing or invalid: shadow), or pass `mode`.
const guard = createRepeatedToolFailureGuard();

const sdk = new NodeSDK({
  spanProcessors: [guard.spanProcessor, new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  logRecordProcessors: [guard.logRecordProcessor, new BatchLogRecordProcessor({ exporter: new OTLPLogExporter() })],
});
sdk.start();

/** What the Session's mid-turn drain returned (wire reference §5.5). */
interface Drain {
  readonly items: readonly unknown[];
  readonly hasQueuedPrompt: boolean;
  readonly reliable: boolean;
}

/** Called by the Session after a tool batch settled and the drain answered, before the next model message. */
export function afterToolBatch(promptId: string, drain: Drain, nextMessageParts: { text: string }[], history: string[]): 'continue' | 'stop' {
  const action = guard.control.afterToolBatch({
    promptId,
    hasExternalInput: drain.items.length > 0,
    hasQueuedPrompt: drain.hasQueuedPrompt,
    inputReliable: drain.reliable,
  });
  switch (action.type) {
    case 'none':
      return 'continue';
    case 'remind':
      nextMessageParts.push({ text: action.text });
      return 'continue';
    case 'stop':
      history.push(action.text);
      return 'stop';
    default: {
      const _exhaustive: never = action;
      return _exhaustive;
    }
  }
}

/** Called by the Session before it executes each tool call (the identical-call breaker). */
export function beforeToolCall(sessionId: string, promptId: string, callId: string, toolName: string, args: unknown): 'run' | 'run-and-warn' | 'block' {
  const action = guard.control.beforeToolCall({ sessionId, promptId, callId, toolName, arguments: args });
  return action.type === 'none' ? 'run' : action.type === 'warn' ? 'run-and-warn' : 'block';
}

process.on('SIGTERM', () => {
  void sdk.shutdown();
});

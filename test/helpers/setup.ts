import { context, trace } from '@opentelemetry/api';
import type { Span, Tracer } from '@opentelemetry/api';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { createRepeatedToolFailureGuard } from '../../src/otel/repeated-tool-failure-guard.js';
import type { RepeatedToolFailureGuardOptions } from '../../src/otel/config.js';
import type { BatchDecision } from '../../src/engine/failure-types.js';


/**
 * The host's Logger and the record it emits, as the installed `@opentelemetry/sdk-logs` types them
 * (`@opentelemetry/api-logs` on the 2.x line, `@opentelemetry/api` 1.10 on the 3.x line).
 */
export type Logger = ReturnType<LoggerProvider['getLogger']>;
export type HostLogRecord = Parameters<Logger['emit']>[0];
/**
 * A real SDK: host providers with the guard's processors first (and, with `hostExport`, in-memory
 * exporters after them); the guard's own logs and counters go to in-memory exporters.
 */
export function guardedSdk(options: RepeatedToolFailureGuardOptions = {}, hostExport = true) {
  const guardLogs = new InMemoryLogRecordExporter();
  const guardLoggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: guardLogs })] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 2_147_483_647 });
  const guardMeterProvider = new MeterProvider({ readers: [reader] });
  const guard = createRepeatedToolFailureGuard({
    mode: 'shadow',
    meterProvider: guardMeterProvider,
    loggerProvider: guardLoggerProvider,
    sweepIntervalMillis: 0,
    ...options,
  });
  const decisions: BatchDecision[] = [];
  guard.addListener({ onDecision: (d) => decisions.push(d) });
  const spanExporter = new InMemorySpanExporter();
  const hostLogs = new InMemoryLogRecordExporter();
  const tracerProvider = new TracerProvider({
    spanProcessors: hostExport ? [guard.spanProcessor, new SimpleSpanProcessor({ exporter: spanExporter })] : [guard.spanProcessor],
  });
  const hostLoggerProvider = new LoggerProvider({
    processors: hostExport ? [guard.logRecordProcessor, new SimpleLogRecordProcessor({ exporter: hostLogs })] : [guard.logRecordProcessor],
  });
  return {
    guard,
    decisions,
    spanExporter,
    hostLogs,
    guardLogs,
    tracer: tracerProvider.getTracer('qwen-code', '1.0.0'),
    logger: hostLoggerProvider.getLogger('qwen-code'),
    /** The guard's counter data points at the last collection. */
    async metricPoints(): Promise<Array<{ name: string; attributes: Record<string, unknown>; value: unknown }>> {
      await reader.forceFlush();
      const last = metricExporter.getMetrics().at(-1);
      if (last === undefined) return [];
      return last.scopeMetrics.flatMap((sm) =>
        sm.metrics.flatMap((m) =>
          m.dataPoints.map((dp) => ({ name: m.descriptor.name, attributes: dp.attributes as Record<string, unknown>, value: dp.value })),
        ),
      );
    },
    async shutdown(): Promise<void> {
      await tracerProvider.shutdown();
      await hostLoggerProvider.shutdown();
      await guardMeterProvider.shutdown();
      await guardLoggerProvider.shutdown();
    },
  };
}

/** {@link guardedSdk} with a fake qwen-code agent on the host providers. */
export function setup(options: RepeatedToolFailureGuardOptions = {}) {
  const sdk = guardedSdk(options);
  return {
    ...sdk,
    agent: new FakeQwenAgent(sdk.tracer, sdk.logger),
    /** The guard's diagnostic log records (not the loop event). */
    guardEvents: (): ReadableLogRecord[] =>
      sdk.guardLogs.getFinishedLogRecords().filter((r) => r.attributes['event.name'] === 'qwen-code.repeated_tool_failure_guard'),
    loopEvents: (): ReadableLogRecord[] => sdk.guardLogs.getFinishedLogRecords().filter((r) => r.attributes['event.name'] === 'loop_detected'),
  };
}

export interface ToolCallSpec {
  name?: string;
  callId?: string;
  status?: 'success' | 'error' | 'cancelled';
  executionStatus?: 'not_started' | 'success' | 'error' | 'cancelled';
  errorType?: string;
  toolType?: 'native' | 'mcp';
  /** Raw, sensitive fields a real client writes. */
  args?: string;
  errorText?: string;
  /** Log before the tool span ends (default true, as ACP often does). */
  logFirst?: boolean;
  /** Leave the tool span open (ended later by the test). */
  leaveOpen?: boolean;
  /** Emit no tool_call log. */
  noLog?: boolean;
}

let callSeq = 0;

/** Emits spans and logs shaped like qwen-code 0.24.4 (wire reference §1, §2). */
export class FakeQwenAgent {
  private readonly _tracer: Tracer;
  private readonly _logger: Logger;
  private readonly _prompts = new Map<string, Span>();

  constructor(tracer: Tracer, logger: Logger) {
    this._tracer = tracer;
    this._logger = logger;
  }

  startPrompt(promptId: string, messageType = 'acp_prompt'): void {
    const span = this._tracer.startSpan(
      'qwen-code.interaction',
      { root: true, attributes: { 'qwen-code.prompt_id': promptId, 'qwen-code.message_type': messageType, 'session.id': 'sess-1' } },
    );
    this._prompts.set(promptId, span);
  }

  private _ctx(promptId: string) {
    const p = this._prompts.get(promptId);
    if (p === undefined) throw new Error(`no prompt ${promptId}`);
    return trace.setSpan(context.active(), p);
  }

  modelRequest(promptId: string, contextKind = 'interaction'): void {
    const s = this._tracer.startSpan(
      'qwen-code.llm_request',
      { attributes: { 'qwen-code.prompt_id': promptId, 'llm_request.context': contextKind } },
      this._ctx(promptId),
    );
    this._logger.emit({ attributes: { 'event.name': 'qwen-code.api_request', prompt_id: promptId }, context: trace.setSpan(context.active(), s) });
    s.setAttribute('finish_reason', 'tool_calls');
    s.end();
  }

  /** One tool call; returns a function that ends a span left open. */
  toolCall(promptId: string, spec: ToolCallSpec = {}): () => void {
    const name = spec.name ?? 'read_file';
    const callId = spec.callId ?? `call_${++callSeq}`;
    const status = spec.status ?? 'error';
    const executionStatus = spec.executionStatus ?? (status === 'success' ? 'success' : 'error');
    const tool = this._tracer.startSpan(
      'qwen-code.tool',
      { attributes: { 'tool.call_id': callId, call_id: callId, 'gen_ai.tool.name': name, 'session.id': 'sess-1' } },
      this._ctx(promptId),
    );
    const toolCtx = trace.setSpan(context.active(), tool);
    if (executionStatus !== 'not_started') {
      const exec = this._tracer.startSpan('qwen-code.tool.execution', { attributes: { 'gen_ai.tool.name': name, 'tool.call_id': callId } }, toolCtx);
      exec.setAttributes({ execution_status: executionStatus, success: executionStatus === 'success' });
      if (executionStatus === 'error') exec.setAttributes({ error_type: spec.errorType ?? 'file_not_found', 'error.type': spec.errorType ?? 'file_not_found', error: 'tool_error' });
      exec.end();
    }
    const log = (): void => {
      if (spec.noLog) return;
      const attributes: Record<string, string | number | boolean> = {
        'event.name': 'qwen-code.tool_call',
        'session.id': 'sess-1',
        call_id: callId,
        function_name: name,
        function_args: spec.args ?? '{\n  "file_path": "/workspace/demo/missing.txt"\n}',
        status,
        execution_status: executionStatus,
        success: status === 'success',
        prompt_id: promptId,
        tool_type: spec.toolType ?? 'native',
      };
      if (status === 'error') {
        attributes.error = spec.errorText ?? 'File not found: /workspace/demo/missing.txt';
        attributes['error.message'] = attributes.error;
        attributes.error_type = spec.errorType ?? 'file_not_found';
        attributes['error.type'] = attributes.error_type;
      }
      this._logger.emit({ body: `Tool call: ${name}. Success: ${status === 'success'}.`, attributes, context: toolCtx });
    };
    const endTool = (): void => {
      if (status === 'error') tool.setAttributes({ error: spec.errorText ?? 'File not found: /workspace/demo/missing.txt', 'error.type': 'tool_error' });
      tool.setAttribute('success', status === 'success');
      tool.end();
    };
    if (spec.logFirst ?? true) log();
    if (spec.leaveOpen) return endTool;
    endTool();
    if (!(spec.logFirst ?? true)) log();
    return () => undefined;
  }

  /** A model round: the request, then `calls`. */
  batch(promptId: string, calls: ToolCallSpec[]): void {
    this.modelRequest(promptId);
    for (const c of calls) this.toolCall(promptId, c);
  }

  endPrompt(promptId: string, turnStatus: 'ok' | 'cancelled' | 'error' = 'ok'): void {
    const p = this._prompts.get(promptId);
    if (p === undefined) throw new Error(`no prompt ${promptId}`);
    p.setAttribute('qwen-code.turn_status', turnStatus);
    p.end();
    this._prompts.delete(promptId);
  }

  loopDetected(promptId: string, loopType: string): void {
    this._logger.emit({ attributes: { 'event.name': 'loop_detected', loop_type: loopType, prompt_id: promptId } });
  }
}

export const twoFailures = (): ToolCallSpec[] => [{}, {}];

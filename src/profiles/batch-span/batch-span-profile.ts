/**
 * The `batch-span` wire profile: the design's contract. Tool spans are direct children of a batch
 * span (default name `runToolCalls`) that carries the prompt id; the batch closes when that span
 * ends, and is incomplete if a tool span started under it has not ended by then. Each tool span
 * carries its own outcome attributes (qwen-code names by default; see {@link BatchSpanAttributeMapping}).
 */
import type { FailureEngine } from '../../engine/failure-engine.js';
import { BoundedMap } from '../../engine/bounded.js';
import { hrTimeToMillis, nonEmptyString } from '../wire-profile.js';
import type { LogRecordView, SpanView, WireProfile, WireProfileReads } from '../wire-profile.js';
import type { ToolType } from '../../core/failure/types.js';

/**
 * Attribute keys the `batch-span` profile reads from each tool span.
 * Defaults: the qwen-code names (wire reference §1.2, §1.3, §2.1).
 */
export interface BatchSpanAttributeMapping {
  /** @defaultValue `'tool.call_id'` */
  readonly callId: string;
  /** @defaultValue `'gen_ai.tool.name'` */
  readonly toolName: string;
  /** `success | error | cancelled`. @defaultValue `'status'` */
  readonly terminalStatus: string;
  /** `not_started | success | error | cancelled | unknown`. @defaultValue `'execution_status'` */
  readonly executionStatus: string;
  /** Frozen ToolErrorType. @defaultValue `'error_type'` */
  readonly executionErrorType: string;
  /** `native | mcp`. @defaultValue `'tool_type'` */
  readonly toolType: string;
  /** Boolean; `true` marks a provider call-id duplicate. @defaultValue `'provider_duplicate'` */
  readonly providerDuplicate: string;
}

/** Default name of the batch span. Source: design (`runToolCalls`). */
export const DEFAULT_BATCH_SPAN_NAME = 'runToolCalls';

/** Options of the `batch-span` profile. */
export interface BatchSpanProfileOptions {
  /** Name of the batch span. @defaultValue `'runToolCalls'` (the design's batch boundary) */
  readonly batchSpanName?: string;
  /** Attributes holding the prompt id on the batch span, first present wins. @defaultValue `['qwen-code.prompt_id', 'prompt_id']` */
  readonly promptIdAttributes?: readonly string[];
  /** Name of a span whose end ends the prompt (it carries the prompt id too). @defaultValue `'qwen-code.interaction'` */
  readonly promptSpanName?: string;
  /** Overrides of the tool-span attribute keys. */
  readonly attributes?: Partial<BatchSpanAttributeMapping>;
}

/** Default attribute mapping of the `batch-span` profile. */
export const DEFAULT_BATCH_SPAN_ATTRIBUTES: BatchSpanAttributeMapping = {
  callId: 'tool.call_id',
  toolName: 'gen_ai.tool.name',
  terminalStatus: 'status',
  executionStatus: 'execution_status',
  executionErrorType: 'error_type',
  toolType: 'tool_type',
  providerDuplicate: 'provider_duplicate',
};

/**
 * What the `batch-span` profile reads with these options: spans of any name (tool spans are
 * recognised by their parent), the prompt-id and tool-span attributes; no log record.
 */
export function batchSpanReads(options: BatchSpanProfileOptions = {}): WireProfileReads {
  const attrs = { ...DEFAULT_BATCH_SPAN_ATTRIBUTES, ...options.attributes };
  return {
    spanNames: undefined,
    spanAttributes: [...new Set([...(options.promptIdAttributes ?? ['qwen-code.prompt_id', 'prompt_id']), ...Object.values(attrs)])],
    logEventNames: [],
    logAttributes: [],
  };
}

/** The design's batch-span profile. */
export class BatchSpanProfile implements WireProfile {
  readonly name = 'batch-span';
  private readonly _engine: FailureEngine;
  private readonly _batchSpanName: string;
  private readonly _promptKeys: readonly string[];
  private readonly _promptSpanName: string;
  private readonly _attrs: BatchSpanAttributeMapping;
  /** Open batch span id -> prompt id. */
  private readonly _batches = new Map<string, string>();
  /** Recently closed batch span id -> prompt id, so that late children are recognised as late. */
  private readonly _closedBatches = new BoundedMap<string, string>(65_536);

  constructor(engine: FailureEngine, options: BatchSpanProfileOptions = {}) {
    this._engine = engine;
    this._batchSpanName = options.batchSpanName ?? DEFAULT_BATCH_SPAN_NAME;
    this._promptKeys = options.promptIdAttributes ?? ['qwen-code.prompt_id', 'prompt_id'];
    this._promptSpanName = options.promptSpanName ?? 'qwen-code.interaction';
    this._attrs = { ...DEFAULT_BATCH_SPAN_ATTRIBUTES, ...options.attributes };
  }

  onSpanStart(span: SpanView): void {
    if (span.name === this._batchSpanName) {
      const promptId = this._promptId(span);
      if (promptId === undefined) return;
      this._batches.set(span.spanContext().spanId, promptId);
      this._engine.observePrompt(promptId, { foreground: true });
      this._engine.openBatch(promptId, hrTimeToMillis(span.startTime));
      return;
    }
    if (span.name === this._promptSpanName) {
      const promptId = this._promptId(span);
      if (promptId !== undefined) {
        const messageType = nonEmptyString(span.attributes['qwen-code.message_type']);
        // The prompt span follows the qwen-code names by default: `userQuery` is a headless prompt.
        this._engine.observePrompt(promptId, {
          messageType,
          route: messageType === undefined ? undefined : messageType === 'userQuery' ? 'headless' : 'acp_foreground',
        });
      }
      return;
    }
    const parent = span.parentSpanContext?.spanId;
    const promptId = parent === undefined ? undefined : this._batches.get(parent);
    const callId = nonEmptyString(span.attributes[this._attrs.callId]);
    if (promptId === undefined || callId === undefined) return;
    this._engine.updateCall({
      promptId,
      callId,
      opened: 'tool',
      facts: { toolName: nonEmptyString(span.attributes[this._attrs.toolName]) },
      timeMillis: hrTimeToMillis(span.startTime),
    });
  }

  onSpanEnd(span: SpanView): void {
    const spanId = span.spanContext().spanId;
    if (span.name === this._batchSpanName) {
      const promptId = this._batches.get(spanId);
      if (promptId === undefined) return;
      this._batches.delete(spanId);
      this._closedBatches.set(spanId, promptId);
      this._engine.closeBatch(promptId);
      return;
    }
    if (span.name === this._promptSpanName) {
      const promptId = this._promptId(span);
      if (promptId !== undefined) this._engine.endPrompt(promptId);
      return;
    }
    const parent = span.parentSpanContext?.spanId;
    const promptId = parent === undefined ? undefined : this._batches.get(parent);
    const a = span.attributes;
    const callId = nonEmptyString(a[this._attrs.callId]);
    if (callId === undefined) return;
    // A child that ends after its batch span closed still reaches the engine, which counts it as late.
    const target = promptId ?? (parent === undefined ? undefined : this._closedBatches.get(parent));
    if (target === undefined) return;
    const tt = a[this._attrs.toolType];
    const execution = nonEmptyString(a[this._attrs.executionStatus]);
    this._engine.updateCall({
      promptId: target,
      callId,
      closed: 'tool',
      settled: true,
      facts: {
        toolName: nonEmptyString(a[this._attrs.toolName]),
        toolType: tt === 'native' || tt === 'mcp' ? (tt as ToolType) : undefined,
        terminalStatus: nonEmptyString(a[this._attrs.terminalStatus]),
        spanExecutionStatus: execution,
        spanErrorType: nonEmptyString(a[this._attrs.executionErrorType]),
        providerDuplicate: a[this._attrs.providerDuplicate] === true,
      },
      timeMillis: hrTimeToMillis(span.endTime),
    });
  }

  onLogRecord(_record: LogRecordView): void {
    // no-op: the batch-span profile reads spans only
  }

  private _promptId(span: SpanView): string | undefined {
    for (const k of this._promptKeys) {
      const v = nonEmptyString(span.attributes[k]);
      if (v !== undefined) return v;
    }
    return undefined;
  }
}

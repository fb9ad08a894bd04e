/**
 * The router behind `serve --profile auto`: tells the agent from the telemetry itself, trace by
 * trace, and hands each record to the built-in profile that reads it (a long-running `serve` may
 * receive more than one agent; `replay` picks one profile for its whole input instead).
 *
 * - A span named `qwen-code.*` marks its trace as qwen-code's; every span of a qwen-code trace, and
 *   every log record, goes to the `qwen-code` profile. (qwen-code's own spans also carry
 *   `gen_ai.operation.name`, and its HTTP client spans carry `chat`, so GenAI names alone do not
 *   tell a GenAI-conventions agent.)
 * - Every other span goes to the `genai` profile, which acts only on GenAI operations
 *   (`invoke_agent`, model calls, `execute_tool`) and keeps the rest for their parent links.
 *
 * A trace's root span starts before its children, and `replay` and `serve` release records in
 * event-time order, so a qwen-code trace is marked before its non-`qwen-code.*` spans arrive.
 */
import type { FailureEngine } from '../../engine/failure-engine.js';
import type { RepetitionEngine } from '../../engine/repetition-engine.js';
import { BoundedSet } from '../../engine/bounded.js';
import { GenAiProfile } from '../genai/genai-profile.js';
import { QwenCodeProfile } from '../qwen-code/qwen-code-profile.js';
import type { LogRecordView, SpanView, WireProfile } from '../wire-profile.js';

/** Prefix of qwen-code's span names (wire reference §1). */
const QWEN_CODE_SPAN_PREFIX = 'qwen-code.';
/** qwen-code traces remembered at once. */
const MAX_QWEN_TRACES = 65_536;

/** The `auto` wire profile (see the module comment). */
export class AutoDetectProfile implements WireProfile {
  readonly name = 'auto';
  private readonly _qwen: QwenCodeProfile;
  private readonly _genai: GenAiProfile;
  private readonly _qwenTraces = new BoundedSet<string>(MAX_QWEN_TRACES);

  constructor(engine: FailureEngine, repetition: RepetitionEngine) {
    this._qwen = new QwenCodeProfile(engine, repetition);
    this._genai = new GenAiProfile(engine, repetition);
  }

  onSpanStart(span: SpanView): void {
    this._route(span, true).onSpanStart(span);
  }

  onSpanEnd(span: SpanView): void {
    this._route(span, false).onSpanEnd(span);
  }

  onLogRecord(record: LogRecordView): void {
    this._qwen.onLogRecord(record);
  }

  private _route(span: SpanView, starting: boolean): WireProfile {
    const traceId = span.spanContext().traceId;
    if (span.name.startsWith(QWEN_CODE_SPAN_PREFIX)) {
      if (starting) this._qwenTraces.add(traceId);
      return this._qwen;
    }
    return this._qwenTraces.has(traceId) ? this._qwen : this._genai;
  }
}

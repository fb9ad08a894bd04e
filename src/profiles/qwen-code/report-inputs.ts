/**
 * The shadow report's inputs from the qwen-code 0.24.4 wire (wire reference §1, §2): usage from
 * `qwen-code.api_response` logs, calls from `qwen-code.tool_call` logs, prompt extents from
 * `qwen-code.interaction` spans.
 */
import { createHash } from 'node:crypto';
import { argumentsTextFingerprint } from '../../engine/fingerprint.js';
import { COUNT_USAGE_KEYS, numberAttribute as num, PromptExtents, usageFromLog } from '../report-inputs.js';
import type { CallRecord, ReportInputLog, ReportInputs, ReportInputsCollector, ReportInputsOptions, ReportInputSpan, UsageRecord } from '../report-inputs.js';
import { hrTimeToMillis } from '../wire-profile.js';
import {
  ATTR_CALL_ID,
  ATTR_EVENT_NAME,
  ATTR_FUNCTION_ARGS,
  ATTR_FUNCTION_NAME,
  ATTR_LLM_REQUEST_CONTEXT,
  ATTR_PROMPT_ID,
  ATTR_QWEN_PROMPT_ID,
  ATTR_SESSION_ID,
  ATTR_STATUS,
  ATTR_TOOL_CALL_ID,
  EVENT_API_REQUEST,
  EVENT_TOOL_CALL,
  SPAN_INTERACTION,
  SPAN_LLM_REQUEST,
  SPAN_TOOL,
} from './semconv.js';

/** One log per model response: `input_token_count`, `output_token_count`, `duration_ms`. §2.3 */
const EVENT_API_RESPONSE = 'qwen-code.api_response';
/** One log per user prompt. §2.3 */
const EVENT_USER_PROMPT = 'qwen-code.user_prompt';
/** The tool result on `qwen-code.tool` spans, only with sensitive span attributes on. §1.2 */
const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** qwen-code 0.24.4 tools that write files (`packages/core/src/tools/tool-names.ts`). */
export const QWEN_CODE_FILE_CHANGING_TOOLS: ReadonlySet<string> = new Set(['edit', 'write_file', 'notebook_edit']);

/** A call before its result fingerprint is resolved (the tool span may arrive after its log). */
type PendingCall = Omit<CallRecord, 'resultFingerprint'> & { readonly resultSize: number | undefined };

/**
 * Collects the shadow report's inputs from the qwen-code wire, record by record: usage from
 * `qwen-code.api_response` logs (one per model response), or from interaction
 * `qwen-code.llm_request` spans when the input has no such log; calls from `qwen-code.tool_call`
 * logs (arguments hashed at once, never kept); prompt extents from `qwen-code.interaction` spans,
 * else from the prompt's first and last record. Holds at most `maxItems` usage records and calls
 * (later ones are counted in `dropped`).
 */
export class QwenCodeReportInputsCollector implements ReportInputsCollector {
  private readonly _maxItems: number;
  private readonly _responses: UsageRecord[] = [];
  private readonly _requestSpans: UsageRecord[] = [];
  private readonly _calls: PendingCall[] = [];
  private readonly _results = new Map<string, string>();
  private readonly _prompts: PromptExtents;
  private _dropped = 0;

  /**
   * @param options - the owner and cohort attributes
   * @param maxItems - usage records, calls and prompts held, each. @defaultValue `1000000`
   */
  constructor(options: ReportInputsOptions = {}, maxItems = 1_000_000) {
    this._maxItems = maxItems;
    this._prompts = new PromptExtents(options, maxItems);
  }

  /** Records not held because of `maxItems`. */
  get dropped(): number {
    return this._dropped;
  }

  addSpan(span: ReportInputSpan): void {
    const a = span.attributes;
    if (span.name === SPAN_INTERACTION) {
      const id = str(a[ATTR_QWEN_PROMPT_ID]);
      if (id !== undefined) this._prompts.touch(id, hrTimeToMillis(span.startTime), hrTimeToMillis(span.endTime), str(a[ATTR_SESSION_ID]), a, span.resource?.attributes, true);
    } else if (span.name === SPAN_TOOL) {
      const callId = str(a[ATTR_TOOL_CALL_ID]) ?? str(a[ATTR_CALL_ID]);
      const result = a[ATTR_GEN_AI_TOOL_CALL_RESULT];
      if (callId !== undefined && result !== undefined && this._results.size < this._maxItems) {
        this._results.set(callId, `r:${sha256(typeof result === 'string' ? result : JSON.stringify(result))}`);
      }
    } else if (span.name === SPAN_LLM_REQUEST) {
      const context = a[ATTR_LLM_REQUEST_CONTEXT];
      const promptId = str(a[ATTR_QWEN_PROMPT_ID]);
      if (promptId === undefined || (context !== undefined && context !== 'interaction')) return;
      this._push(this._requestSpans, {
        promptId,
        startMillis: hrTimeToMillis(span.startTime),
        endMillis: hrTimeToMillis(span.endTime),
        inputTokens: num(a['gen_ai.usage.input_tokens']),
        outputTokens: num(a['gen_ai.usage.output_tokens']),
        costUsd: undefined,
        model: str(a['gen_ai.request.model']),
      });
    }
  }

  addLog(log: ReportInputLog): void {
    const a = log.attributes;
    const promptId = str(a[ATTR_PROMPT_ID]);
    if (promptId === undefined) return;
    const name = str(a[ATTR_EVENT_NAME]) ?? log.eventName;
    const t = hrTimeToMillis(log.hrTime);
    const sessionId = str(a[ATTR_SESSION_ID]);
    if (name === EVENT_API_RESPONSE) {
      const usage = usageFromLog(promptId, t, a, COUNT_USAGE_KEYS);
      this._push(this._responses, usage);
      this._prompts.touch(promptId, usage.startMillis, t, sessionId, a, log.resource?.attributes);
    } else if (name === EVENT_TOOL_CALL) {
      this._prompts.touch(promptId, t, t, sessionId, a, log.resource?.attributes);
      const callId = str(a[ATTR_CALL_ID]);
      if (callId === undefined) return;
      const tool = str(a[ATTR_FUNCTION_NAME]) ?? 'unknown_tool';
      const args = a[ATTR_FUNCTION_ARGS];
      this._push(this._calls, {
        promptId,
        callId,
        atMillis: t,
        fingerprint: argumentsTextFingerprint(tool, typeof args === 'string' ? args : JSON.stringify(args ?? null)),
        succeeded: a[ATTR_STATUS] === 'success',
        resultSize: num(a['content_length']),
      });
    } else if (name === EVENT_API_REQUEST || name === EVENT_USER_PROMPT) {
      this._prompts.touch(promptId, t, t, sessionId, a, log.resource?.attributes);
    }
  }

  finish(): ReportInputs {
    const fromLogs = this._responses.length > 0;
    const usage = [...(fromLogs ? this._responses : this._requestSpans)].sort((x, y) => x.endMillis - y.endMillis);
    const calls: CallRecord[] = this._calls
      .map(({ resultSize, ...c }) => ({ ...c, resultFingerprint: this._results.get(c.callId) ?? (resultSize === undefined ? undefined : `n:${resultSize}`) }))
      .sort((x, y) => x.atMillis - y.atMillis);
    return {
      usageSource: fromLogs ? EVENT_API_RESPONSE : this._requestSpans.length > 0 ? SPAN_LLM_REQUEST : undefined,
      usage,
      calls,
      prompts: this._prompts.records(),
      fileChangingTools: QWEN_CODE_FILE_CHANGING_TOOLS,
    };
  }

  private _push<T>(list: T[], item: T): void {
    if (list.length < this._maxItems) list.push(item);
    else this._dropped++;
  }
}

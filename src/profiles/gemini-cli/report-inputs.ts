/**
 * The shadow report's inputs from gemini-cli 0.61.0's logs: usage from `gemini_cli.api_response`
 * (`input_token_count`, `output_token_count`, `cached_content_token_count`, `duration_ms`, `model`,
 * `prompt_id`), prompt extents from every event that names a prompt. gemini-cli records no cost,
 * and its `tool_call` log no call id, so no calls are collected (the breaker what-if shows none).
 *
 * Prompt ids are the profile's: a `prompt_id` reused by a later `user_prompt` becomes
 * `<prompt_id>/<k>` from its k-th `user_prompt` on (`promptKeyOf`), as the profile names them.
 */
import { COUNT_USAGE_KEYS, PromptExtents, usageFromLog } from '../report-inputs.js';
import type { ReportInputLog, ReportInputs, ReportInputsCollector, ReportInputsOptions, ReportInputSpan, UsageRecord } from '../report-inputs.js';
import { hrTimeToMillis } from '../wire-profile.js';
import { promptKeyOf } from './gemini-cli-profile.js';
import { ATTR_EVENT_NAME, ATTR_PROMPT_ID, ATTR_SESSION_ID, EVENT_USER_PROMPT } from './semconv.js';

/** One log per model response. */
export const EVENT_API_RESPONSE = 'gemini_cli.api_response';
/** gemini-cli 0.61.0 tools that write files (`packages/core/src/tools/tool-names.ts`). */
export const GEMINI_CLI_FILE_CHANGING_TOOLS: ReadonlySet<string> = new Set(['replace', 'write_file']);

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Collects the report's inputs from gemini-cli's log events (see the module comment). */
export class GeminiCliReportInputsCollector implements ReportInputsCollector {
  private readonly _max: number;
  private readonly _usage: UsageRecord[] = [];
  private readonly _prompts: PromptExtents;
  /** `user_prompt` records seen per raw `prompt_id` (the profile's generations). */
  private readonly _generation = new Map<string, number>();

  /**
   * @param options - the owner and cohort attributes
   * @param maxItems - usage records, calls and prompts held, each. @defaultValue `1000000`
   */
  constructor(options: ReportInputsOptions = {}, maxItems = 1_000_000) {
    this._max = maxItems;
    this._prompts = new PromptExtents(options, maxItems);
  }

  addSpan(_span: ReportInputSpan): void {
    // Logs carry everything the report reads.
  }

  addLog(log: ReportInputLog): void {
    const a = log.attributes;
    const raw = str(a[ATTR_PROMPT_ID]);
    if (raw === undefined) return;
    const name = str(a[ATTR_EVENT_NAME]) ?? log.eventName;
    const seen = this._generation.get(raw);
    const generation = name === EVENT_USER_PROMPT ? (seen ?? 0) + 1 : (seen ?? 1);
    if (generation !== seen && this._generation.size < this._max) this._generation.set(raw, generation);
    const promptId = promptKeyOf(raw, generation);
    const t = hrTimeToMillis(log.hrTime);
    const sessionId = str(a[ATTR_SESSION_ID]);
    if (name === EVENT_API_RESPONSE) {
      const usage = usageFromLog(promptId, t, a, COUNT_USAGE_KEYS);
      if (this._usage.length < this._max) this._usage.push(usage);
      this._prompts.touch(promptId, usage.startMillis, t, sessionId, a, log.resource?.attributes);
      return;
    }
    this._prompts.touch(promptId, t, t, sessionId, a, log.resource?.attributes);
    // No calls: gemini-cli's `tool_call` log has no call id to join the guard's receipts with.
  }

  finish(): ReportInputs {
    return {
      usageSource: this._usage.length > 0 ? EVENT_API_RESPONSE : undefined,
      usage: [...this._usage].sort((x, y) => x.endMillis - y.endMillis),
      calls: [],
      prompts: this._prompts.records(),
      fileChangingTools: GEMINI_CLI_FILE_CHANGING_TOOLS,
    };
  }
}

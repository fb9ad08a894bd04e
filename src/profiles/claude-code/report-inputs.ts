/**
 * The shadow report's inputs from Claude Code 2.1.328's logs (scope
 * `com.anthropic.claude_code.events`, wire reference §2): usage from `api_request` (`input_tokens`,
 * `output_tokens`, `cache_read_tokens`, `cache_creation_tokens`, `cost_usd`, `duration_ms`, `model`,
 * keyed by `prompt.id`), calls from `tool_result` (`tool_use_id`, `tool_name`, `success`), prompt
 * extents from every event of the prompt.
 *
 * Every `api_request` of a prompt counts, subagents' and auxiliary queries' too: the prompt pays
 * for them all, and enforce's stop ends them all.
 */
import { argumentsTextFingerprint } from '../../engine/fingerprint.js';
import { PromptExtents, usageFromLog } from '../report-inputs.js';
import type { CallRecord, ReportInputLog, ReportInputs, ReportInputsCollector, ReportInputsOptions, ReportInputSpan, UsageLogKeys, UsageRecord } from '../report-inputs.js';
import { hrTimeToMillis } from '../wire-profile.js';
import { CLAUDE_CODE_EVENTS_SCOPE } from './claude-code-profile.js';

/** The event whose records carry usage. */
const EVENT_API_REQUEST = 'api_request';
const EVENT_TOOL_RESULT = 'tool_result';
/** The usage fields of an `api_request` record (wire reference §2). */
const USAGE_KEYS: UsageLogKeys = {
  inputTokens: 'input_tokens',
  outputTokens: 'output_tokens',
  cacheReadTokens: 'cache_read_tokens',
  cacheCreationTokens: 'cache_creation_tokens',
  costUsd: 'cost_usd',
  durationMillis: 'duration_ms',
  model: 'model',
};
/** Claude Code tools that write files (its built-in Edit, Write, NotebookEdit). */
export const CLAUDE_CODE_FILE_CHANGING_TOOLS: ReadonlySet<string> = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit']);

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Collects the report's inputs from Claude Code's log events (see the module comment). */
export class ClaudeCodeReportInputsCollector implements ReportInputsCollector {
  private readonly _max: number;
  private readonly _usage: UsageRecord[] = [];
  private readonly _calls: CallRecord[] = [];
  private readonly _prompts: PromptExtents;

  /**
   * @param options - the owner and cohort attributes (owner default `user.id`, Claude Code's hashed user id)
   * @param maxItems - usage records, calls and prompts held, each. @defaultValue `1000000`
   */
  constructor(options: ReportInputsOptions = {}, maxItems = 1_000_000) {
    this._max = maxItems;
    this._prompts = new PromptExtents(options, maxItems);
  }

  addSpan(_span: ReportInputSpan): void {
    // Logs carry everything the report reads (spans exist only with the beta flag).
  }

  addLog(log: ReportInputLog): void {
    const scope = log.instrumentationScope?.name;
    if (scope !== undefined && scope !== CLAUDE_CODE_EVENTS_SCOPE) return;
    const a = log.attributes;
    const promptId = str(a['prompt.id']);
    if (promptId === undefined) return;
    const name = str(a['event.name']) ?? log.eventName;
    const t = hrTimeToMillis(log.hrTime);
    const sessionId = str(a['session.id']);
    if (name === EVENT_API_REQUEST) {
      const usage = usageFromLog(promptId, t, a, USAGE_KEYS);
      if (this._usage.length < this._max) this._usage.push(usage);
      this._prompts.touch(promptId, usage.startMillis, t, sessionId, a, log.resource?.attributes);
      return;
    }
    this._prompts.touch(promptId, t, t, sessionId, a, log.resource?.attributes);
    if (name !== EVENT_TOOL_RESULT) return;
    const callId = str(a['tool_use_id']);
    // Arguments are recorded only with OTEL_LOG_TOOL_DETAILS=1 (hashed here and dropped); without
    // them every call of a tool would look identical to the breaker's what-if, so none is kept.
    const args = a['tool_input'] ?? a['tool_parameters'];
    if (callId === undefined || args === undefined || this._calls.length >= this._max) return;
    const tool = str(a['tool_name']) ?? 'unknown_tool';
    this._calls.push({
      promptId,
      callId,
      atMillis: t,
      fingerprint: argumentsTextFingerprint(tool, typeof args === 'string' ? args : JSON.stringify(args ?? null)),
      succeeded: a['success'] === 'true' || a['success'] === true,
      resultFingerprint: undefined,
    });
  }

  finish(): ReportInputs {
    return {
      usageSource: this._usage.length > 0 ? `claude_code.${EVENT_API_REQUEST}` : undefined,
      usage: [...this._usage].sort((x, y) => x.endMillis - y.endMillis),
      calls: [...this._calls].sort((x, y) => x.atMillis - y.atMillis),
      prompts: this._prompts.records(),
      fileChangingTools: CLAUDE_CODE_FILE_CHANGING_TOOLS,
    };
  }
}

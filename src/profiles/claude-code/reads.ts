/**
 * What the `claude-code` profile reads (its span names, log events and attribute keys); `serve`
 * keeps only these at ingest. Keep in step with `claude-code-profile.ts` (a test checks both).
 */
import type { WireProfileReads } from '../wire-profile.js';
import {
  CLAUDE_CODE_SPAN_INTERACTION,
  CLAUDE_CODE_SPAN_LLM_REQUEST,
  CLAUDE_CODE_SPAN_TOOL,
  CLAUDE_CODE_SPAN_TOOL_EXECUTION,
} from './claude-code-profile.js';

/** The `claude-code` profile's reads. */
export const CLAUDE_CODE_READS: WireProfileReads = Object.freeze({
  spanNames: Object.freeze([CLAUDE_CODE_SPAN_INTERACTION, CLAUDE_CODE_SPAN_LLM_REQUEST, CLAUDE_CODE_SPAN_TOOL, CLAUDE_CODE_SPAN_TOOL_EXECUTION]),
  spanAttributes: Object.freeze(['request_id', 'llm_request.context', 'stop_reason', 'tool_name', 'tool_use_id', 'success', 'error.type']),
  logEventNames: Object.freeze(['user_prompt', 'api_request', 'tool_decision', 'tool_result', 'hook_execution_complete']),
  logAttributes: Object.freeze([
    'event.name',
    'prompt.id',
    'session.id',
    'request_id',
    'query_source',
    'tool_use_id',
    'tool_name',
    'decision',
    'success',
    'error_type',
    'tool_source',
    'tool_parameters',
    'hook_event',
    'num_blocking',
  ]),
});

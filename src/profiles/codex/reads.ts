/**
 * What the `codex` profile reads (its span names, log events and attribute keys); `serve` keeps
 * only these at ingest. Keep in step with `codex-profile.ts`.
 */
import type { WireProfileReads } from '../wire-profile.js';
import { CODEX_SPAN_MCP_TOOLS_CALL, CODEX_SPAN_TURN } from './codex-profile.js';

/** The `codex` profile's reads. */
export const CODEX_READS: WireProfileReads = Object.freeze({
  spanNames: Object.freeze([CODEX_SPAN_MCP_TOOLS_CALL, CODEX_SPAN_TURN]),
  spanAttributes: Object.freeze(['tool.call_id', 'conversation.id', 'error.type', 'codex.mcp.error.code']),
  logEventNames: Object.freeze(['codex.user_prompt', 'codex.api_request', 'codex.tool_decision', 'codex.sandbox_outcome', 'codex.tool_result']),
  logAttributes: Object.freeze([
    'event.name',
    'conversation.id',
    'originator',
    'tool_name',
    'tool_namespace',
    'call_id',
    'decision',
    'outcome',
    'success',
    'mcp_server',
  ]),
});

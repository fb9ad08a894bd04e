/**
 * What Claude Code 2.1.328's telemetry cannot show the guard (verified by the conformance run,
 * conformance/claude-code), as fixed sentences that `replay` and the shadow report print, and the
 * Phase 1 invariants whose violation that telemetry could not show. The `claude-code-hook` path sees
 * what the telemetry does not: PostToolBatch lists every call of a batch with its result.
 */
import type { NotCheckableInvariants } from '../wire-profile.js';
import { CLAUDE_CODE_SPAN_TOOL_EXECUTION } from './claude-code-profile.js';

/** Blind spots of the telemetry path, each with what the profile does about it and where it is seen. */
export const CLAUDE_CODE_BLIND_SPOTS: readonly string[] = Object.freeze([
  'calls Claude Code rejects before running them (input validation, unknown tools, Edit "File has not been read yet" or "String to replace not found") leave no record: a response whose calls all left none is judged incomplete (reset); one with some recorded calls is judged on those alone. The claude-code-hook path sees every call (PostToolBatch).',
  'an interrupted call is logged as a failure; only the beta spans (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1) mark it. A turn that ends after a batch with no model request after it (an interrupt, a turn cap, a stop by an HTTP hook, which 2.1.328 does not count as blocking) leaves that batch unjudged.',
  'an MCP call is logged as mcp_tool: its server-qualified name comes from the beta spans or OTEL_LOG_TOOL_DETAILS=1; without either it is unresolved and ineligible.',
  'mid-turn user input and queued prompts are not in the telemetry: the input drain is assumed reliable and empty.',
]);

/** The invariants Claude Code's telemetry cannot show a violation of. */
export const CLAUDE_CODE_NOT_CHECKABLE: NotCheckableInvariants = Object.freeze({
  always: Object.freeze({
    no_incomplete_decisions: 'a batch holding calls rejected before they ran, beside recorded ones, looks complete in Claude Code telemetry',
    no_enforcement_after_unreliable_drain: 'Claude Code telemetry shows no input drain',
  }),
  unlessSpan: CLAUDE_CODE_SPAN_TOOL_EXECUTION,
  withoutSpan: Object.freeze({
    no_ineligible_counted: 'Claude Code logs an interrupted call as a failure; only its beta spans mark the interrupt',
  }),
});

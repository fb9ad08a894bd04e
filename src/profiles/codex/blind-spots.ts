/**
 * What Codex CLI 0.169.0's telemetry cannot show the guard (verified by the conformance run,
 * conformance/codex), as fixed sentences that `replay` and the shadow report print, and the Phase 1
 * invariants whose violation that telemetry could not show. The `codex-hook` path sees part of what
 * the telemetry does not: shell exit statuses, from the session transcript.
 */
import type { NotCheckableInvariants } from '../wire-profile.js';

/** Blind spots of the telemetry path. */
export const CODEX_BLIND_SPOTS: readonly string[] = Object.freeze([
  'a shell command that exits non-zero is codex.tool_result success="true" (the exit status is only in the output text): a shell loop reads as successes. The codex-hook path reads the exit status from the session transcript.',
  'a failure with no structured class (an unknown tool, arguments that do not parse, a failing built-in tool) is success="false" alone: untyped. Untyped failures are counted and shown in the summary, never toward a stop (each resets the candidate and disables enforcement for the prompt).',
  'a sandbox refusal is typed only when Codex emits codex.sandbox_outcome for it, which 0.169.0 does for some refusals only; the others read as successes.',
  'MCP failures are typed from the mcp.tools.call span: without [otel] trace_exporter they are untyped.',
  'mid-turn user input and queued prompts are not in the telemetry: the input drain is assumed reliable and empty.',
]);

/** The invariants Codex's telemetry cannot show a violation of. */
export const CODEX_NOT_CHECKABLE: NotCheckableInvariants = Object.freeze({
  always: Object.freeze({
    no_incomplete_decisions: 'Codex telemetry does not say how many calls a model response asked for',
    no_enforcement_after_unreliable_drain: 'Codex telemetry shows no input drain',
    no_ineligible_counted: 'Codex telemetry marks no cancelled or interrupted call',
  }),
});

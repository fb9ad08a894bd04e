/**
 * The guard mode vocabulary and its one parser, shared by every source (options, environment,
 * CLI flags, hook environments). Pure.
 */
import type { GuardMode } from './failure/types.js';

/**
 * The agent-neutral environment variable that selects the mode (`off | shadow | warn | enforce`),
 * for every agent and path (in process, `replay`, `serve`, hooks). qwen-code's own name,
 * `QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD`, is honoured too and wins when both are set (the more
 * specific name first, as OpenTelemetry's per-signal variables win over the general ones).
 */
export const GUARD_MODE_NEUTRAL_ENV_VAR = 'REPEATED_TOOL_FAILURE_GUARD_MODE';

/** The mode when nothing valid is set. Source: design ("Default is shadow"). */
export const DEFAULT_GUARD_MODE: GuardMode = 'shadow';

/**
 * Parse one raw value.
 *
 * @returns the mode, or `undefined` for a missing, blank or invalid value
 */
export function parseGuardMode(value: string | undefined): GuardMode | undefined {
  const v = (value ?? '').trim().toLowerCase();
  switch (v) {
    case 'off':
    case 'shadow':
    case 'warn':
    case 'enforce':
      return v;
    default:
      return undefined;
  }
}

/**
 * The guard mode vocabulary and its one parser, shared by every source (options, environment,
 * CLI flags, hook environments). Pure.
 */
import type { GuardMode } from './failure/types.js';

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

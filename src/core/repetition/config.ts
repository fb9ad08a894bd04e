/**
 * Thresholds of the identical tool-call repetition breaker: the config type, its defaults (the
 * seed PR), and their resolution. Pure.
 */
/**
 * How the guard acts on what it detects.
 *
 * - `'off'`: inert; every event yields decision `'none'` and the same state object.
 * - `'shadow'`: counts and reports `'would_warn'` / `'would_abort'`; never acts.
 * - `'warn'`: appends {@link REPETITION_WARNING_TEXT}; never blocks.
 * - `'enforce'`: warns, then blocks the call and stops the turn.
 */
export type RepetitionMode = 'off' | 'shadow' | 'warn' | 'enforce';

/**
 * Thresholds of the repetition breaker. Resolve user input with {@link resolveRepetitionConfig};
 * {@link reduceRepetition} assumes a resolved config.
 */
export type RepetitionConfig = {
  /**
   * Master switch; `false` makes the guard inert, like mode `'off'`.
   * @defaultValue true
   */
  readonly enabled: boolean;
  /**
   * Run length (in calls) at which the warning is emitted.
   * Minimum: `1`. @defaultValue 3
   */
  readonly warn: number;
  /**
   * Run length (in calls) at which the call is blocked and the turn stopped (mode `'enforce'`).
   * Always greater than `warn`. @defaultValue 5
   */
  readonly abort: number;
  /**
   * Counting window, in calls.
   *
   * - `0` (default): strict consecutive run: the run length is the number of identical calls in
   *   a row, and any other call restarts it at 1. Misses A-B-A-B alternation.
   * - `N > 0`: the run length of a call is the number of occurrences of its fingerprint among the
   *   last `N` calls (this one included), so A-B-A-B alternation is caught. Trade-off: legitimate
   *   polling (re-reading a status until it changes) or alternating reads of two files can trip
   *   it where strict mode would not. An A-B alternation reaches at most `ceil(N / 2)`, so
   *   catching it at `abort` needs `N >= 2 * abort - 1`.
   *
   * Minimum: `0`; a value between `1` and `abort - 1` could never reach `abort` and is raised to
   * `abort` by {@link resolveRepetitionConfig}. Memory: one fingerprint string per window slot.
   * @defaultValue 0
   */
  readonly windowSize: number;
};

/**
 * Defaults; source: the seed PR (`repetitionGuard: { enabled: true, warn: 3, abort: 5 }`,
 * strict consecutive counting).
 */
export const DEFAULT_REPETITION_CONFIG: RepetitionConfig = Object.freeze({
  enabled: true,
  warn: 3,
  abort: 5,
  windowSize: 0,
});

/** Result of {@link resolveRepetitionConfig}. */
export type ResolvedRepetitionConfig = {
  /** The config to use; always valid. */
  readonly config: RepetitionConfig;
  /** One human-readable line per value that was replaced or clamped; empty when none. */
  readonly issues: string[];
};

/**
 * Applies defaults and clamps invalid values; never throws.
 *
 * Rules, in order:
 * - `enabled` not a boolean: issue, default.
 * - `warn` not an integer, or `< 1`: issue, default (`3`).
 * - `abort` not an integer: issue, default (`5`); then `abort <= warn`: issue, `abort = warn + 1`
 *   (the seed's clamp).
 * - `windowSize` not an integer: issue, `0`; `< 0`: issue, `0`; between `1` and `abort - 1`:
 *   issue, raised to `abort`.
 *
 * A missing (`undefined`) field takes its default silently.
 *
 * @param input - Partial, unvalidated config (e.g. from a JSON file).
 * @returns The resolved config and the list of issues.
 *
 * @example
 * ```ts
 * resolveRepetitionConfig({ warn: 4, abort: 2 });
 * // => { config: { enabled: true, warn: 4, abort: 5, windowSize: 0 }, issues: ['…'] }
 * ```
 */
export function resolveRepetitionConfig(
  input: Partial<RepetitionConfig>,
): ResolvedRepetitionConfig {
  const issues: string[] = [];
  const defaults = DEFAULT_REPETITION_CONFIG;

  let enabled = defaults.enabled;
  if (input.enabled !== undefined) {
    if (typeof input.enabled === 'boolean') enabled = input.enabled;
    else issues.push(`RepetitionConfig: enabled must be a boolean; using ${String(defaults.enabled)}`);
  }

  let warn = defaults.warn;
  if (input.warn !== undefined) {
    if (!Number.isInteger(input.warn)) {
      issues.push(`RepetitionConfig: warn must be an integer, got ${String(input.warn)}; using ${defaults.warn}`);
    } else if (input.warn < 1) {
      issues.push(`RepetitionConfig: warn must be >= 1, got ${input.warn}; using ${defaults.warn}`);
    } else {
      warn = input.warn;
    }
  }

  let abort = defaults.abort;
  if (input.abort !== undefined) {
    if (Number.isInteger(input.abort)) abort = input.abort;
    else issues.push(`RepetitionConfig: abort must be an integer, got ${String(input.abort)}; using ${defaults.abort}`);
  }
  if (abort <= warn) {
    issues.push(`RepetitionConfig: abort (${abort}) must be greater than warn (${warn}); using ${warn + 1}`);
    abort = warn + 1;
  }

  let windowSize = defaults.windowSize;
  if (input.windowSize !== undefined) {
    if (!Number.isInteger(input.windowSize)) {
      issues.push(`RepetitionConfig: windowSize must be an integer, got ${String(input.windowSize)}; using 0`);
    } else if (input.windowSize < 0) {
      issues.push(`RepetitionConfig: windowSize must be >= 0, got ${input.windowSize}; using 0`);
    } else if (input.windowSize > 0 && input.windowSize < abort) {
      issues.push(`RepetitionConfig: windowSize (${input.windowSize}) is below abort (${abort}) and could never abort; using ${abort}`);
      windowSize = abort;
    } else {
      windowSize = input.windowSize;
    }
  }

  return { config: { enabled, warn, abort, windowSize }, issues };
}

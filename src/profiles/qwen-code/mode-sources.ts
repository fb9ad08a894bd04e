/**
 * Guard mode resolution from explicit, testable sources.
 *
 * Rules (design "Scope and enforcement modes"; wire reference §5.6):
 * - `QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD` selects `off | shadow | warn | enforce`
 *   (trimmed, case-insensitive, as the in-tree `parseRepeatedToolFailureGuardMode`); the
 *   agent-neutral `REPEATED_TOOL_FAILURE_GUARD_MODE` does too, under the same rules, and yields to
 *   qwen-code's name within one source (a disagreement is a diagnostic);
 * - a missing or invalid value resolves to `shadow`; a non-empty invalid value adds a diagnostic;
 * - project `.env`, project `.qwen/.env` and workspace `settings.env` sources may not set it: such
 *   a value is refused with a diagnostic; the process environment and a user-level env file are
 *   honoured, the process environment first;
 * - a prompt marked as a channel prompt is forced to `off`.
 *
 * Pure: no process or file access; pass the sources in.
 */
import type { GuardMode } from '../../core/failure/types.js';
import { DEFAULT_GUARD_MODE, GUARD_MODE_NEUTRAL_ENV_VAR, parseGuardMode } from '../../core/mode.js';

/** The environment variable that selects the mode. Source: qwen-code 0.24.4. */
export const GUARD_MODE_ENV_VAR = 'QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD';

/** A variable that selects the mode: qwen-code's, or the agent-neutral one. */
export type GuardModeVariable = typeof GUARD_MODE_ENV_VAR | typeof GUARD_MODE_NEUTRAL_ENV_VAR;

/** The mode variables, the one that wins within a source first. */
export const GUARD_MODE_VARIABLES: readonly GuardModeVariable[] = [GUARD_MODE_ENV_VAR, GUARD_MODE_NEUTRAL_ENV_VAR];

/**
 * Where a value of the mode variable came from.
 *
 * - `process`: the exported process environment (trusted);
 * - `user_env_file`: a user-level env file such as `~/.qwen/.env` (trusted);
 * - `project_env_file`: the project's `.env` (refused);
 * - `project_qwen_env_file`: the project's `.qwen/.env` (refused);
 * - `workspace_settings_env`: the `env` block of workspace `settings.json` (refused).
 */
export type ModeSource =
  | 'process'
  | 'user_env_file'
  | 'project_env_file'
  | 'project_qwen_env_file'
  | 'workspace_settings_env';

/** One candidate value of a mode variable and its source. */
export interface ModeSourceValue {
  readonly source: ModeSource;
  /** Which variable the value was set under. @defaultValue {@link GUARD_MODE_ENV_VAR} */
  readonly variable?: GuardModeVariable;
  readonly value: string | undefined;
}

/** Input of {@link resolveGuardMode}. */
export interface ResolveGuardModeInput {
  /** Candidate values in any order; trusted sources are consulted process first. */
  readonly values: readonly ModeSourceValue[];
  /** True for a prompt the channel bridges marked; forces `off`. @defaultValue `false` */
  readonly channelPrompt?: boolean;
}

/** Result of {@link resolveGuardMode}. */
export interface ResolvedGuardMode {
  readonly mode: GuardMode;
  /** The source whose value was used; `default` when none was, `channel` when forced off. */
  readonly source: ModeSource | 'default' | 'channel';
  /** Operator diagnostics (invalid value, refused source). Never contains the raw value twice. */
  readonly diagnostics: readonly string[];
}

const TRUSTED_ORDER: readonly ModeSource[] = ['process', 'user_env_file'];

const SOURCE_LABELS: Readonly<Record<ModeSource, string>> = {
  process: 'environment',
  user_env_file: 'user-level env file',
  project_env_file: 'project .env',
  project_qwen_env_file: 'project .qwen/.env',
  workspace_settings_env: 'workspace settings.env',
};

function isTrusted(source: ModeSource): boolean {
  switch (source) {
    case 'process':
    case 'user_env_file':
      return true;
    case 'project_env_file':
    case 'project_qwen_env_file':
    case 'workspace_settings_env':
      return false;
    default: {
      const _exhaustive: never = source;
      return _exhaustive;
    }
  }
}

/**
 * Resolve the guard mode for one prompt. Never throws.
 *
 * @example
 * ```ts
 * resolveGuardMode({ values: [{ source: 'process', value: process.env.QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD }] });
 * // => { mode: 'shadow', source: 'default', diagnostics: [] } when unset
 * ```
 */
export function resolveGuardMode(input: ResolveGuardModeInput): ResolvedGuardMode {
  const diagnostics: string[] = [];
  const isSet = (v: ModeSourceValue): boolean => v.value !== undefined && v.value.trim() !== '';
  for (const v of input.values) {
    if (!isTrusted(v.source) && isSet(v)) {
      diagnostics.push(
        `${v.variable ?? GUARD_MODE_ENV_VAR} from the ${SOURCE_LABELS[v.source]} is refused: project and workspace sources may not set the guard policy`,
      );
    }
  }
  let resolved: { mode: GuardMode; source: ModeSource } | undefined;
  for (const source of TRUSTED_ORDER) {
    // Within a source, qwen-code's name first, then the agent-neutral one.
    const set = GUARD_MODE_VARIABLES.flatMap((name) =>
      input.values.filter((c) => c.source === source && (c.variable ?? GUARD_MODE_ENV_VAR) === name && isSet(c)).slice(0, 1),
    );
    const v = set[0];
    if (v === undefined) continue;
    const name = v.variable ?? GUARD_MODE_ENV_VAR;
    const mode = parseGuardMode(v.value);
    if (mode === undefined) {
      diagnostics.push(
        `${name} from the ${SOURCE_LABELS[source]} has an invalid value (expected off, shadow, warn or enforce); using ${DEFAULT_GUARD_MODE}`,
      );
    } else {
      resolved = { mode, source };
      const other = set[1];
      if (other !== undefined && parseGuardMode(other.value) !== mode) {
        diagnostics.push(
          `${other.variable ?? GUARD_MODE_ENV_VAR} and ${name} from the ${SOURCE_LABELS[source]} disagree; using ${name} (${mode})`,
        );
      }
    }
    break;
  }
  if (input.channelPrompt === true) {
    return { mode: 'off', source: 'channel', diagnostics };
  }
  return resolved !== undefined
    ? { ...resolved, diagnostics }
    : { mode: DEFAULT_GUARD_MODE, source: 'default', diagnostics };
}

/**
 * Convenience: resolve from a process environment object only (both variable names).
 *
 * @param env - defaults to `process.env`
 */
export function resolveGuardModeFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ResolvedGuardMode {
  return resolveGuardMode({ values: GUARD_MODE_VARIABLES.map((variable) => ({ source: 'process', variable, value: env[variable] })) });
}

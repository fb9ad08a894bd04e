import { describe, expect, it } from 'vitest';
import { GUARD_MODE_ENV_VAR, resolveGuardMode, resolveGuardModeFromEnv } from '../src/profiles/qwen-code/mode-sources.js';
import { GUARD_MODE_NEUTRAL_ENV_VAR, parseGuardMode } from '../src/core/mode.js';
import { createRepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';
import type { ModeSourceValue } from '../src/profiles/qwen-code/mode-sources.js';
import type { GuardMode } from '../src/core/failure/types.js';

describe('parseGuardMode', () => {
  it.each<[string | undefined, GuardMode | undefined]>([
    ['off', 'off'],
    ['shadow', 'shadow'],
    ['warn', 'warn'],
    ['enforce', 'enforce'],
    ['  ENFORCE ', 'enforce'],
    ['Warn', 'warn'],
    ['', undefined],
    ['   ', undefined],
    [undefined, undefined],
    ['on', undefined],
    ['enforced', undefined],
  ])('%j -> %j', (raw, expected) => {
    expect(parseGuardMode(raw)).toBe(expected);
  });
});

describe('resolveGuardMode', () => {
  it.each<{ desc: string; values: ModeSourceValue[]; channelPrompt?: boolean; mode: GuardMode; source: string; diagnostics: number }>([
    { desc: 'nothing set -> shadow, no diagnostic', values: [], mode: 'shadow', source: 'default', diagnostics: 0 },
    { desc: 'process value wins', values: [{ source: 'process', value: 'enforce' }], mode: 'enforce', source: 'process', diagnostics: 0 },
    { desc: 'blank process value is missing', values: [{ source: 'process', value: '  ' }], mode: 'shadow', source: 'default', diagnostics: 0 },
    { desc: 'invalid non-empty value -> shadow with a diagnostic', values: [{ source: 'process', value: 'aggressive' }], mode: 'shadow', source: 'default', diagnostics: 1 },
    { desc: 'user-level env file is honoured', values: [{ source: 'user_env_file', value: 'warn' }], mode: 'warn', source: 'user_env_file', diagnostics: 0 },
    {
      desc: 'process beats the user env file',
      values: [{ source: 'user_env_file', value: 'warn' }, { source: 'process', value: 'off' }],
      mode: 'off',
      source: 'process',
      diagnostics: 0,
    },
    { desc: 'project .env is refused', values: [{ source: 'project_env_file', value: 'enforce' }], mode: 'shadow', source: 'default', diagnostics: 1 },
    { desc: 'project .qwen/.env is refused', values: [{ source: 'project_qwen_env_file', value: 'off' }], mode: 'shadow', source: 'default', diagnostics: 1 },
    { desc: 'workspace settings.env is refused', values: [{ source: 'workspace_settings_env', value: 'warn' }], mode: 'shadow', source: 'default', diagnostics: 1 },
    {
      desc: 'a refused project value does not hide a trusted one',
      values: [{ source: 'project_env_file', value: 'off' }, { source: 'user_env_file', value: 'enforce' }],
      mode: 'enforce',
      source: 'user_env_file',
      diagnostics: 1,
    },
    { desc: 'channel prompt is forced off', values: [{ source: 'process', value: 'enforce' }], channelPrompt: true, mode: 'off', source: 'channel', diagnostics: 0 },
  ])('$desc', ({ values, channelPrompt, mode, source, diagnostics }) => {
    const r = resolveGuardMode({ values, channelPrompt });
    expect(r.mode).toBe(mode);
    expect(r.source).toBe(source);
    expect(r.diagnostics).toHaveLength(diagnostics);
    for (const d of r.diagnostics) expect(d).toContain(GUARD_MODE_ENV_VAR);
  });

  it('reads a process environment object', () => {
    expect(resolveGuardModeFromEnv({ [GUARD_MODE_ENV_VAR]: 'warn' }).mode).toBe('warn');
    expect(resolveGuardModeFromEnv({}).mode).toBe('shadow');
  });
});

describe('the agent-neutral mode variable REPEATED_TOOL_FAILURE_GUARD_MODE', () => {
  const NEUTRAL = GUARD_MODE_NEUTRAL_ENV_VAR;
  it('is named after no agent', () => {
    expect(NEUTRAL).toBe('REPEATED_TOOL_FAILURE_GUARD_MODE');
  });

  it.each<{ desc: string; values: ModeSourceValue[]; mode: GuardMode; source: string; diagnostics: string[] }>([
    { desc: 'exported: honoured', values: [{ source: 'process', variable: NEUTRAL, value: 'enforce' }], mode: 'enforce', source: 'process', diagnostics: [] },
    { desc: 'user-level env file: honoured', values: [{ source: 'user_env_file', variable: NEUTRAL, value: 'warn' }], mode: 'warn', source: 'user_env_file', diagnostics: [] },
    ...(['project_env_file', 'project_qwen_env_file', 'workspace_settings_env'] as const).map((source) => ({
      desc: `${source}: refused, as the qwen-code name is (design: project sources may not set the policy)`,
      values: [{ source, variable: NEUTRAL, value: 'enforce' }] as ModeSourceValue[],
      mode: 'shadow' as GuardMode,
      source: 'default',
      diagnostics: [NEUTRAL],
    })),
    {
      desc: 'a refused project value of the neutral name does not hide an exported qwen-code one',
      values: [{ source: 'project_env_file', variable: NEUTRAL, value: 'off' }, { source: 'process', value: 'warn' }],
      mode: 'warn',
      source: 'process',
      diagnostics: [NEUTRAL],
    },
    {
      desc: 'exported neutral name beats the qwen-code name from the user env file (the process comes first)',
      values: [{ source: 'user_env_file', value: 'enforce' }, { source: 'process', variable: NEUTRAL, value: 'shadow' }],
      mode: 'shadow',
      source: 'process',
      diagnostics: [],
    },
    {
      desc: 'both names exported and equal: no diagnostic',
      values: [{ source: 'process', variable: NEUTRAL, value: 'warn' }, { source: 'process', value: 'WARN' }],
      mode: 'warn',
      source: 'process',
      diagnostics: [],
    },
    {
      desc: "both names exported and different: qwen-code's name wins, with a diagnostic",
      values: [{ source: 'process', variable: NEUTRAL, value: 'enforce' }, { source: 'process', value: 'warn' }],
      mode: 'warn',
      source: 'process',
      diagnostics: [NEUTRAL],
    },
    { desc: 'invalid: shadow with a diagnostic naming it', values: [{ source: 'process', variable: NEUTRAL, value: 'loud' }], mode: 'shadow', source: 'default', diagnostics: [NEUTRAL] },
  ])('$desc', ({ values, mode, source, diagnostics }) => {
    const r = resolveGuardMode({ values });
    expect(r.mode).toBe(mode);
    expect(r.source).toBe(source);
    expect(r.diagnostics).toHaveLength(diagnostics.length);
    diagnostics.forEach((name, i) => expect(r.diagnostics[i]).toContain(name));
  });

  it('is read from the environment by the guard and by resolveGuardModeFromEnv', () => {
    expect(resolveGuardModeFromEnv({ [NEUTRAL]: 'warn' }).mode).toBe('warn');
    expect(resolveGuardModeFromEnv({ [NEUTRAL]: 'warn', [GUARD_MODE_ENV_VAR]: 'enforce' }).mode).toBe('enforce');
    expect(createRepeatedToolFailureGuard({ env: { [NEUTRAL]: 'enforce' }, sweepIntervalMillis: 0 }).mode).toBe('enforce');
    expect(createRepeatedToolFailureGuard({ env: { [NEUTRAL]: 'off', [GUARD_MODE_ENV_VAR]: 'warn' }, sweepIntervalMillis: 0 }).mode).toBe('warn');
  });
});

import { describe, expect, it } from 'vitest';
import { GUARD_MODE_ENV_VAR, resolveGuardMode, resolveGuardModeFromEnv } from '../src/profiles/qwen-code/mode-sources.js';
import { parseGuardMode } from '../src/core/mode.js';
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

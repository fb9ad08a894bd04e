/**
 * `claude-code-hook --check` against what a user really has: the settings `--print-settings`
 * printed from an installation of the package (here a copy of dist/ with the package's
 * dependencies beside it, and without the optional OTLP/HTTP exporters), then the ways that
 * installation stops working. For each, --check must say whether the guard answered (exit 0 only
 * when every event was answered), and the hook itself, run as Claude Code runs it, must say so
 * where the user sees it (a `systemMessage` on PostToolBatch, or a non-blocking exit) and never
 * block a tool (no exit code 2, no `decision: "block"`, no `permissionDecision`).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve('.');
const CLI = join(ROOT, 'dist/bin/repeated-tool-failure-guard.js');
/** The optional peers `--otlp-endpoint` needs; the installation under test lacks them. */
const EXPORTERS = new Set(['exporter-logs-otlp-http', 'exporter-metrics-otlp-http']);

let tmp: string;
let pkg: string;

/** An installation of the package: its dist and manifest, every installed package beside it but the exporters. */
function install(at: string): void {
  mkdirSync(join(at, 'node_modules', '@opentelemetry'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(at, 'dist'), { recursive: true, filter: (src) => !src.endsWith('.map') });
  cpSync(join(ROOT, 'package.json'), join(at, 'package.json'));
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name.startsWith('.') || name === '@opentelemetry') continue;
    symlinkSync(join(ROOT, 'node_modules', name), join(at, 'node_modules', name));
  }
  for (const name of readdirSync(join(ROOT, 'node_modules', '@opentelemetry'))) {
    if (!EXPORTERS.has(name)) symlinkSync(join(ROOT, 'node_modules', '@opentelemetry', name), join(at, 'node_modules', '@opentelemetry', name));
  }
}

/** `--print-settings` of the installation, written to a settings file; returns the file and the hook command. */
function printSettings(args: readonly string[], file: string): string {
  const r = spawnSync(process.execPath, [join(pkg, 'dist/bin/claude-code-hook.cjs'), '--print-settings', ...args], { encoding: 'utf8', timeout: 30_000 });
  expect(r.status).toBe(0);
  writeFileSync(file, r.stdout);
  return (JSON.parse(r.stdout) as { hooks: { PostToolBatch: { hooks: { command: string }[] }[] } }).hooks.PostToolBatch[0]?.hooks[0]?.command as string;
}

/** `--check` as a user runs it (the globally installed CLI), in a clean environment. */
function check(settings: string, env: Record<string, string>) {
  const r = spawnSync(process.execPath, [CLI, 'claude-code-hook', '--check', '--settings', settings], { encoding: 'utf8', timeout: 120_000, cwd: tmp, env: { PATH: process.env.PATH ?? '', ...env } });
  return { code: r.status, out: r.stdout };
}

/** The hook command run as Claude Code runs it: through a shell, the input on stdin. */
function hook(command: string, input: Record<string, unknown>, env: Record<string, string>) {
  const r = spawnSync('/bin/sh', ['-c', command], { input: JSON.stringify(input), encoding: 'utf8', timeout: 30_000, cwd: tmp, env: { PATH: process.env.PATH ?? '', ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const common = { session_id: 's-check', transcript_path: '/home/u/t.jsonl', cwd: '/home/u/work', prompt_id: 'p-check', permission_mode: 'default' };
const call = (i: number) => ({ tool_name: 'Bash', tool_input: { command: `git status ${i}` }, tool_use_id: `toolu_${i}` });
/** A failing batch of 3 calls, as Claude Code sends it: PreToolUse, PostToolUseFailure each, then PostToolBatch. */
const failingBatch = [0, 1, 2].flatMap((i) => [
  { ...common, ...call(i), hook_event_name: 'PreToolUse' },
  { ...common, ...call(i), hook_event_name: 'PostToolUseFailure', error: 'Exit code 128', is_interrupt: false },
]);
const batchEnd = { ...common, hook_event_name: 'PostToolBatch', tool_calls: [0, 1, 2].map((i) => ({ ...call(i), tool_response: 'Exit code 128' })) };

/** Never a block: exit 0 (2 would block), and no blocking field in the output. */
function expectNeverBlocks(r: { code: number | null; stdout: string }): void {
  expect(r.code).not.toBe(2);
  expect(r.stdout).not.toMatch(/"decision"|"permissionDecision"|"continue"/);
}

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'rtfg-check-'));
  pkg = join(tmp, 'lib', 'node_modules', 'repeated-tool-failure-guard');
  install(pkg);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('claude-code-hook --check and the hook where it cannot work', () => {
  it('no settings file registers the hook: exit 1, and the command it prints to fix that runs as printed from another directory', () => {
    const settings = join(tmp, 'empty.json');
    writeFileSync(settings, '{}');
    const r = check(settings, { HOME: join(tmp, 'home') });
    expect(r.code).toBe(1);
    const printed = /^print the settings to add with: (.*) <shadow\|warn\|enforce>$/m.exec(r.out)?.[1];
    expect(printed).toBeDefined();
    const run = spawnSync('/bin/sh', ['-c', `${printed as string} warn`], { encoding: 'utf8', timeout: 30_000, cwd: tmp, env: { PATH: '/nonexistent' } });
    expect(run.status).toBe(0);
    const hooks = (JSON.parse(run.stdout) as { hooks: Record<string, { hooks: { command: string }[] }[]> }).hooks;
    expect(Object.keys(hooks).sort()).toEqual(['PostToolBatch', 'PostToolUse', 'PostToolUseFailure', 'PreToolUse']);
    expect(hooks.PostToolBatch?.[0]?.hooks[0]?.command).toMatch(/ --mode warn$/);
  });

  it('an installation that works: every event answered, exit 0', () => {
    const settings = join(tmp, 'ok.json');
    printSettings(['--mode', 'enforce'], settings);
    const r = check(settings, { HOME: join(tmp, 'home'), XDG_STATE_HOME: join(tmp, 'state') });
    expect(r.out.match(/: the guard answered \(given settings .*\): mode enforce, state .*claude-code$/gm)).toHaveLength(4);
    expect(r.out).toMatch(/^ok: Claude Code will run the guard on every tool event$/m);
    expect(r.code).toBe(0);
  });

  it('the package removed after the settings were written: --check says the command fails; the hook exits 1, which Claude Code does not treat as blocking', () => {
    const gone = join(tmp, 'gone');
    install(gone);
    const settings = join(tmp, 'gone.json');
    const saved = pkg;
    pkg = gone;
    const command = printSettings(['--mode', 'enforce'], settings);
    pkg = saved;
    rmSync(gone, { recursive: true, force: true });
    const r = check(settings, { HOME: join(tmp, 'home') });
    expect(r.out.match(/: the guard did NOT answer \(exit code 1;/gm)).toHaveLength(4);
    expect(r.out).toMatch(/^not ok: /m);
    expect(r.code).toBe(1);
    const h = hook(command, batchEnd, { HOME: join(tmp, 'home') });
    expect(h.code).toBe(1);
    expect(h.stderr).toMatch(/Cannot find module/);
    expectNeverBlocks(h);
  });

  it('an unwritable state directory: --check names it; in a session the PostToolBatch answer tells the user and blocks nothing', () => {
    const settings = join(tmp, 'state.json');
    const command = printSettings(['--mode', 'enforce'], settings);
    const notADir = join(tmp, 'a-file');
    writeFileSync(notADir, '');
    const env = { HOME: join(tmp, 'home'), XDG_STATE_HOME: notADir };
    const r = check(settings, env);
    expect(r.out.match(/: the guard did NOT answer \(no answer;/gm)).toHaveLength(4);
    expect(r.out).toMatch(/cannot use the state directory \(ENOTDIR\); no decision/);
    expect(r.code).toBe(1);
    for (const input of failingBatch) expectNeverBlocks(hook(command, input, env));
    const end = hook(command, batchEnd, env);
    expect(end.code).toBe(0);
    expect(JSON.parse(end.stdout)).toEqual({
      systemMessage: 'repeated-tool-failure-guard: cannot use the state directory (ENOTDIR); no decision; no tool is blocked by it',
    });
  });

  it('--otlp-endpoint without the exporter packages: --check names the install line; in a session the user sees it and nothing is blocked', () => {
    const settings = join(tmp, 'otlp.json');
    const command = printSettings(['--mode', 'enforce', '--otlp-endpoint', 'http://127.0.0.1:9'], settings);
    const env = { HOME: join(tmp, 'home'), XDG_STATE_HOME: join(tmp, 'state-otlp') };
    const r = check(settings, env);
    expect(r.out.match(/: the guard did NOT answer \(no answer;/gm)).toHaveLength(4);
    expect(r.out).toMatch(/--otlp-endpoint: exporting the guard's telemetry over OTLP\/HTTP needs the optional packages .*npm install @opentelemetry\/exporter-logs-otlp-http/);
    expect(r.code).toBe(1);
    for (const input of failingBatch) expectNeverBlocks(hook(command, input, env));
    const end = hook(command, batchEnd, env);
    expect(end.code).toBe(0);
    expectNeverBlocks(end);
    expect((JSON.parse(end.stdout) as { systemMessage: string }).systemMessage).toMatch(/^repeated-tool-failure-guard: --otlp-endpoint: .*npm install .*; no tool is blocked by it$/);
  });
});

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GuardMode } from '../src/core/failure/types.js';
import { CLAUDE_CODE_HOOK_ADAPTER, claudeCodeHookSettings, claudeCodeRouteOf } from '../src/hooks/claude-code/claude-code-adapter.js';
import { startHookHttpServer } from '../src/hooks/hook-http-server.js';
import type { HookHttpServer } from '../src/hooks/hook-http-server.js';
import { HOOK_CHECK_FIELD, HOOK_CHECK_HEADER, runHook } from '../src/hooks/hook-runtime.js';
import { MemoryHookStateStore } from '../src/hooks/memory-state-store.js';
import { claudeHookScenarios, recordedHookInputs } from './helpers/claude-code-wire.js';

/**
 * The Claude Code HTTP hook endpoint (`serve --claude-code-hook-port`): the same decisions and
 * outputs as the command hook on the real 2.1.328 hook inputs, the token required before anything
 * else, and what Claude Code 2.1.328 expects of the answer (a JSON object body; read in its CLI and
 * checked on the real CLI by the conformance run).
 */
const MAIN = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;
const TOKEN = 'test-token-0123456789abcdef';
const hookScenarios = claudeHookScenarios();
const inputsOf = recordedHookInputs;

function readDecisions(file: string): Record<string, unknown>[] {
  const text = readFileSync(file, 'utf8').trim();
  return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function post(url: string, body: string, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }, method = 'POST') {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, ...(method === 'POST' ? { body } : {}) });
  return { status: res.status, body: await res.text(), check: res.headers.get(HOOK_CHECK_HEADER), wwwAuthenticate: res.headers.get('www-authenticate') };
}

const servers: HookHttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(mode: GuardMode, decisionsFile?: string, extra: Partial<Parameters<typeof startHookHttpServer>[0]> = {}): Promise<HookHttpServer> {
  const server = await startHookHttpServer({ adapter: CLAUDE_CODE_HOOK_ADAPTER, bearerToken: TOKEN, mode, decisionsFile, log: () => undefined, ...extra });
  servers.push(server);
  return server;
}

describe('the Claude Code HTTP hook endpoint on the real 2.1.328 hook inputs', () => {
  it.each(hookScenarios)('$name: the design\'s decisions, and the command hook\'s outputs, event by event', async (s) => {
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-cc-http-'));
    const httpDecisions = join(dir, 'http.jsonl');
    const fileDecisions = join(dir, 'file.jsonl');
    writeFileSync(httpDecisions, '');
    writeFileSync(fileDecisions, '');
    const server = await start(s.mode, httpDecisions);
    const inputs = inputsOf(s.name);
    for (const input of inputs) {
      const text = JSON.stringify(input);
      const viaHttp = await post(server.url, text);
      expect(viaHttp.status).toBe(200);
      const printed: string[] = [];
      await runHook(CLAUDE_CODE_HOOK_ADAPTER, text, { mode: s.mode, stateDir: join(dir, 's'), decisionsFile: fileDecisions }, { out: (l) => printed.push(l), err: () => undefined }, {});
      // Claude Code reads `{}` and an empty body alike; anything else must be the same object.
      expect(JSON.parse(viaHttp.body)).toEqual(printed.length === 0 ? {} : JSON.parse(printed[0] as string));
    }
    const promptOrder = [...new Set(inputs.filter((i) => i.hook_event_name === 'UserPromptSubmit').map((i) => String(i.prompt_id)))];
    const ours = readDecisions(httpDecisions).map(({ promptId, guard: _guard, ...rest }) => ({ prompt: promptOrder.indexOf(String(promptId)) + 1, ...rest }));
    expect(ours).toEqual(s.expectedDecisions.map((d) => ({ mode: s.mode, prompt: 1, ...d })));
    expect(readDecisions(httpDecisions)).toEqual(readDecisions(fileDecisions));
  });
});

describe('who may post', () => {
  const failure = inputsOf('bash-git-loop-enforce-hooks').find((i) => i.hook_event_name === 'PostToolUseFailure');

  it.each([
    ['no Authorization header', {}],
    ['a wrong token', { authorization: 'Bearer not-the-token' }],
    ['another scheme', { authorization: `Basic ${TOKEN}` }],
    ['the token without its scheme', { authorization: TOKEN }],
  ])('%s: 401, and the event changes nothing', async (_label, headers: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-cc-http-'));
    const decisions = join(dir, 'd.jsonl');
    writeFileSync(decisions, '');
    const server = await start('enforce', decisions);
    const r = await post(server.url, JSON.stringify(failure), headers);
    expect(r.status).toBe(401);
    expect(r.wwwAuthenticate).toBe('Bearer');
    expect(readDecisions(decisions)).toEqual([]);
  });

  it('refuses to start without a token', async () => {
    await expect(startHookHttpServer({ adapter: CLAUDE_CODE_HOOK_ADAPTER, bearerToken: '', mode: 'enforce' })).rejects.toThrow(/bearer token/);
  });

  it('listens on loopback by default', async () => {
    const server = await start('shadow');
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    expect(new URL(server.url).pathname).toBe('/hooks/claude-code');
  });

  it.each([
    ['another path', '/v1/logs', 'POST', 404],
    ['GET', '/hooks/claude-code', 'GET', 405],
  ])('%s: %s %s → %i', async (_label, path, method, status) => {
    const server = await start('shadow');
    const r = await post(new URL(path, server.url).toString(), '{}', undefined, method);
    expect(r.status).toBe(status);
  });

  it('a body over the limit: 413, a non-blocking error for Claude Code', async () => {
    const server = await start('shadow', undefined, { maxBodyBytes: 1024 });
    const r = await post(server.url, JSON.stringify({ ...failure, tool_input: { command: 'x'.repeat(4096) } })).catch(() => ({ status: 413 }));
    expect(r.status).toBe(413);
  });
});

describe('answers', () => {
  it('a check input: the answer line in its header, `{}` as the hook output', async () => {
    const server = await start('warn');
    const nonce = '0123456789abcdef';
    const r = await post(server.url, JSON.stringify({ session_id: 's', prompt_id: 'p', hook_event_name: 'PostToolBatch', tool_calls: [], [HOOK_CHECK_FIELD]: nonce }));
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({});
    expect(r.check).toMatch(new RegExp(`check ${nonce} answered: mode warn, state in memory`));
  });

  it('input that is not JSON: 200 and `{}` (no decision, never a block)', async () => {
    const server = await start('enforce');
    const r = await post(server.url, 'not json');
    expect(r).toMatchObject({ status: 200, body: '{}' });
  });

  it('128 concurrent failures of one batch are all recorded (no lock to lose them on)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-cc-http-'));
    const decisions = join(dir, 'd.jsonl');
    writeFileSync(decisions, '');
    const server = await start('shadow', decisions);
    const common = { session_id: 'sess', prompt_id: 'prompt-1', cwd: '/x', transcript_path: '/x/t.jsonl', permission_mode: 'default' };
    await post(server.url, JSON.stringify({ ...common, hook_event_name: 'UserPromptSubmit' }));
    const calls = Array.from({ length: 128 }, (_, i) => ({ tool_name: 'Bash', tool_input: { command: `false ${i}` }, tool_use_id: `toolu_${i}` }));
    await Promise.all(calls.map((c) => post(server.url, JSON.stringify({ ...common, ...c, hook_event_name: 'PostToolUseFailure', error: 'Exit code 1', is_interrupt: false }))));
    await post(server.url, JSON.stringify({ ...common, hook_event_name: 'PostToolBatch', tool_calls: calls.map((c) => ({ ...c, tool_response: '' })) }));
    expect(readDecisions(decisions)).toEqual([expect.objectContaining({ decision: 'tracked', failureCountBucket: '8+', batchCountBucket: '1' })]);
  });

  it('the route label comes from the entrypoint header Claude Code fills in', () => {
    expect(claudeCodeRouteOf('sdk-cli')).toBe('headless');
    expect(claudeCodeRouteOf('sdk-ts')).toBe('headless');
    expect(claudeCodeRouteOf('cli')).toBe('acp_foreground');
    expect(claudeCodeRouteOf(undefined)).toBe('acp_foreground');
    expect(claudeCodeRouteOf('')).toBe('acp_foreground');
  });
});

describe('MemoryHookStateStore', () => {
  const put = (store: MemoryHookStateStore, id: string, value: unknown) => store.update(id, (read) => [value, read]);

  it('keeps at most maxSessions, dropping the least recently updated', async () => {
    const store = new MemoryHookStateStore({ maxSessions: 2 });
    await put(store, 'a', 1);
    await put(store, 'b', 2);
    await put(store, 'a', 3);
    await put(store, 'c', 4);
    expect(store.size).toBe(2);
    expect((await put(store, 'b', 5))?.current).toBeUndefined();
    expect((await put(store, 'c', 6))?.current).toBe(4);
  });

  it('forgets a session idle for longer than maxAgeMillis, and sweeps it', async () => {
    let now = 0;
    const store = new MemoryHookStateStore({ maxAgeMillis: 1000, now: () => now });
    await put(store, 'a', 1);
    now = 500;
    await put(store, 'b', 2);
    now = 1200;
    expect(await store.sweep()).toBe(1);
    expect(store.size).toBe(1);
    now = 1600;
    expect((await put(store, 'b', 3))?.current).toBeUndefined();
  });

  it('a state over maxStateBytes is not kept and is reported as too large', async () => {
    const store = new MemoryHookStateStore({ maxStateBytes: 16 });
    await put(store, 'a', 'x'.repeat(64));
    expect(await put(store, 'a', 1)).toEqual({ current: undefined, discarded: 'too_large', lostRecords: 0 });
  });
});

describe('settings and serve', () => {
  it('the HTTP form: type http, the token only as a variable Claude Code fills in from allowedEnvVars', () => {
    const settings = claudeCodeHookSettings({ url: 'http://127.0.0.1:4319/hooks/claude-code' }) as { hooks: Record<string, { hooks: Record<string, unknown>[] }[]> };
    expect(Object.keys(settings.hooks)).toEqual(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch']);
    const hook = settings.hooks.PreToolUse?.[0]?.hooks[0];
    expect(hook).toMatchObject({ type: 'http', url: 'http://127.0.0.1:4319/hooks/claude-code', timeout: 10 });
    expect((hook?.headers as Record<string, string>).Authorization).toBe('Bearer ${RTFG_CLAUDE_CODE_HOOK_TOKEN}');
    expect(hook?.allowedEnvVars).toEqual(expect.arrayContaining(['RTFG_CLAUDE_CODE_HOOK_TOKEN', 'CLAUDE_CODE_ENTRYPOINT']));
  });

  it('serve --claude-code-hook-port without --bearer-token-file is refused (exit 2)', () => {
    const r = spawnSync(process.execPath, [MAIN, 'serve', '--port', '0', '--claude-code-hook-port', '0'], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--claude-code-hook-port needs --bearer-token-file/);
  });

  it('serve --claude-code-hook-port answers what --print-settings --http registers, and --check says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-cc-http-serve-'));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--claude-code-hook-port', '0', '--bearer-token-file', tokenFile, '--mode', 'warn'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no hook endpoint: ${stderr}`)), 20_000);
        child.stderr.setEncoding('utf8').on('data', (d: string) => {
          stderr += d;
          const m = /answering Claude Code HTTP hooks on (\S+),/.exec(stderr);
          if (m) {
            clearTimeout(timer);
            resolve(m[1] as string);
          }
        });
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/claude-code$/);
      const printed = spawnSync(process.execPath, [MAIN, 'claude-code-hook', '--print-settings', '--http', url], { encoding: 'utf8', timeout: 20_000 });
      expect(printed.status).toBe(0);
      const settingsFile = join(dir, 'settings.json');
      writeFileSync(settingsFile, printed.stdout);
      const check = (env: Record<string, string>) =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const c = spawn(process.execPath, [MAIN, 'claude-code-hook', '--check', '--settings', settingsFile], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          c.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
          c.on('close', (code) => resolve({ code, out }));
        });
      const good = await check({ RTFG_CLAUDE_CODE_HOOK_TOKEN: TOKEN });
      expect(good.out).toMatch(/PostToolBatch: the guard answered .*mode warn, state in memory/);
      expect(good.code).toBe(0);
      const bad = await check({});
      expect(bad.code).toBe(1);
      expect(bad.out).toMatch(/did NOT answer \(HTTP 401: the token was refused \(RTFG_CLAUDE_CODE_HOOK_TOKEN is not set here/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    }
  });
});

/**
 * `claude-code-hook`: the guard as a Claude Code command hook, for PreToolUse, PostToolUse,
 * PostToolUseFailure and PostToolBatch (see `docs/claude-code.md`): the shared hook runtime
 * (`src/hooks/`) with the Claude Code adapter. It reads one hook input on stdin and prints the hook
 * output Claude Code acts on: the reminder (warn, enforce) or the stop (enforce); shadow prints
 * nothing.
 *
 * The same function runs behind `repeated-tool-failure-guard claude-code-hook` and behind the
 * hook's own small entry, `dist/bin/claude-code-hook.cjs`, which is what `--print-settings` prints:
 * it loads neither commander nor any other command, so an event costs little more than a Node
 * start (bench H1).
 *
 * It always exits 0 and never prints anything but a hook output object on stdout: Claude Code
 * treats exit code 2 as a blocking error; any failure is one line on stderr and no decision (fail
 * open). `--print-settings` and `--check` are for people, not for Claude Code.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseGuardMode } from '../../core/mode.js';
import { CLAUDE_CODE_HOOK_ADAPTER, CLAUDE_CODE_HOOK_TOKEN_ENV, claudeCodeHookSettings, claudeCodeRouteOf } from '../../hooks/claude-code/claude-code-adapter.js';
import { CLAUDE_CODE_HOOK_EVENTS } from '../../hooks/claude-code/hook-input.js';
import { HOOK_CHECK_FIELD, HOOK_CHECK_HEADER, runHook } from '../../hooks/hook-runtime.js';
import type { HookIo, HookRunOptions } from '../../hooks/hook-runtime.js';

import { packageRoot, readAll, shellWord } from './hook-entry.js';

export { claudeCodeHookSettings } from '../../hooks/claude-code/claude-code-adapter.js';
export { packageRoot } from './hook-entry.js';

/** The hook's own entry, relative to the package root. */
export const CLAUDE_CODE_HOOK_ENTRY = 'dist/bin/claude-code-hook.cjs';

/**
 * Handle one Claude Code hook invocation. Never rejects; resolves to the exit code (always 0).
 *
 * @param stdinText - the hook input as read from stdin
 * @param options - mode, state directory, decisions file, telemetry endpoint
 * @param io - stdout gets at most one JSON line (the hook output), stderr a diagnostic on failure
 * @param env - the process environment (mode, directories, `CLAUDE_CODE_ENTRYPOINT`)
 * @param now - wall clock
 */
export function runClaudeCodeHook(
  stdinText: string,
  options: HookRunOptions,
  io: HookIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
  now: () => number = Date.now,
): Promise<number> {
  // Claude Code tells hooks how it was started: `sdk-cli` for `claude -p`, `cli` interactive.
  return runHook(CLAUDE_CODE_HOOK_ADAPTER, stdinText, { route: claudeCodeRouteOf(env.CLAUDE_CODE_ENTRYPOINT), ...options }, io, env, now);
}

/**
 * The hook command line for the settings: this Node binary and the hook's own entry, both
 * absolute, so it runs from any directory and needs no `npx` lookup.
 */
export function claudeCodeHookCommand(options: { mode?: string; otlpEndpoint?: string }, root = packageRoot(), node = process.execPath): string | undefined {
  if (root === undefined) return undefined;
  const mode = parseGuardMode(options.mode);
  return [node, join(root, CLAUDE_CODE_HOOK_ENTRY), ...(mode === undefined ? [] : ['--mode', mode]), ...(options.otlpEndpoint === undefined ? [] : ['--otlp-endpoint', options.otlpEndpoint])]
    .map(shellWord)
    .join(' ');
}

/** Where Claude Code reads settings, most specific last (docs: "Settings files"). */
export function claudeCodeSettingsFiles(cwd: string, home: string, platform: NodeJS.Platform = process.platform): { scope: string; file: string }[] {
  const managed =
    platform === 'darwin'
      ? '/Library/Application Support/ClaudeCode/managed-settings.json'
      : platform === 'win32'
        ? 'C:\\Program Files\\ClaudeCode\\managed-settings.json'
        : '/etc/claude-code/managed-settings.json';
  return [
    { scope: 'user', file: join(home, '.claude', 'settings.json') },
    { scope: 'project', file: join(cwd, '.claude', 'settings.json') },
    { scope: 'project (local)', file: join(cwd, '.claude', 'settings.local.json') },
    { scope: 'managed', file: managed },
  ];
}

interface FoundHook {
  readonly scope: string;
  readonly file: string;
  readonly event: string;
  /** The command line (command form) or the URL (HTTP form). */
  readonly command: string;
  /** The HTTP form's headers and the variables they may name. */
  readonly http?: { readonly headers: Readonly<Record<string, string>>; readonly allowedEnvVars: readonly string[]; readonly timeoutSeconds: number | undefined };
}

/** The guard's HTTP hook endpoint path (`serve --claude-code-hook-port`). */
const HTTP_HOOK_PATH = /\/hooks\/claude-code(?:[?#]|$)/;

/** The guard's hook commands a settings file registers, by event. */
function guardHooksIn(scope: string, file: string): FoundHook[] {
  let settings: unknown;
  try {
    settings = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return [];
  }
  const hooks = (settings as { hooks?: Record<string, unknown> } | null)?.hooks;
  if (typeof hooks !== 'object' || hooks === null) return [];
  const found: FoundHook[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const g of groups as { hooks?: { type?: string; command?: string; url?: string; headers?: unknown; allowedEnvVars?: unknown; timeout?: unknown }[] }[]) {
      for (const h of g?.hooks ?? []) {
        if (h?.type === 'command' && typeof h.command === 'string' && /claude-code-hook/.test(h.command)) found.push({ scope, file, event, command: h.command });
        if (h?.type === 'http' && typeof h.url === 'string' && HTTP_HOOK_PATH.test(h.url)) {
          const headers: Record<string, string> = {};
          if (typeof h.headers === 'object' && h.headers !== null) for (const [k, v] of Object.entries(h.headers)) if (typeof v === 'string') headers[k] = v;
          const allowedEnvVars = Array.isArray(h.allowedEnvVars) ? h.allowedEnvVars.filter((v): v is string => typeof v === 'string') : [];
          found.push({ scope, file, event, command: h.url, http: { headers, allowedEnvVars, timeoutSeconds: typeof h.timeout === 'number' ? h.timeout : undefined } });
        }
      }
    }
  }
  return found;
}

/** Run a hook command through the shell, as Claude Code does, with `input` on stdin. */
async function runShell(command: string, input: string, cwd: string, timeoutMillis: number): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  // Loaded here: a hook event never needs it (bench H1).
  const { spawn } = await import('node:child_process');
  return new Promise((done) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMillis);
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', (err) => {
      clearTimeout(timer);
      done({ code: null, stdout, stderr: `${stderr}${err.message}`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * Post a hook input to an HTTP hook as Claude Code does: its headers with the variables
 * `allowedEnvVars` lists taken from this environment (others become empty), JSON body, its timeout.
 */
async function postHook(
  url: string,
  http: NonNullable<FoundHook['http']>,
  input: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ status: number | undefined; body: string; check: string | undefined; error: string | undefined; missing: string[] }> {
  const missing: string[] = [];
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(http.headers)) {
    headers[name] = value.replace(/\$\{([A-Z_][A-Z0-9_]*)\}|\$([A-Z_][A-Z0-9_]*)/g, (_m, a: string | undefined, b: string | undefined) => {
      const v = (a ?? b) as string;
      if (!http.allowedEnvVars.includes(v)) return '';
      if (env[v] === undefined && v !== 'CLAUDE_CODE_ENTRYPOINT') missing.push(v);
      return env[v] ?? '';
    });
  }
  try {
    const res = await fetch(url, { method: 'POST', headers, body: input, signal: AbortSignal.timeout((http.timeoutSeconds ?? 60) * 1000) });
    return { status: res.status, body: await res.text(), check: res.headers.get(HOOK_CHECK_HEADER) ?? undefined, error: undefined, missing };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { status: undefined, body: '', check: undefined, error: cause ?? (err instanceof Error ? err.name : 'error'), missing };
  }
}

/** A synthetic hook input of `event`, marked as a check (no Claude Code input carries the mark). */
function checkInput(event: string, nonce: string, cwd: string): Record<string, unknown> {
  const common = {
    session_id: `rtfg-check-${nonce}`,
    transcript_path: join(cwd, 'rtfg-check.jsonl'),
    cwd,
    prompt_id: `rtfg-check-${nonce}`,
    permission_mode: 'default',
    hook_event_name: event,
    [HOOK_CHECK_FIELD]: nonce,
  };
  const call = { tool_name: 'Bash', tool_input: { command: 'true', description: 'repeated-tool-failure-guard check' }, tool_use_id: `rtfg_check_${nonce}` };
  switch (event) {
    case 'PostToolBatch':
      return { ...common, tool_calls: [{ ...call, tool_response: '' }] };
    case 'PostToolUse':
      return { ...common, ...call, tool_response: { stdout: '', stderr: '', interrupted: false } };
    case 'PostToolUseFailure':
      return { ...common, ...call, error: 'Exit code 1', is_interrupt: false };
    default:
      return { ...common, ...call };
  }
}

/**
 * `--check`: send a synthetic event of each registered type through exactly the command the
 * settings run (a shell, the current directory, this environment) and say whether the guard
 * answered. Exit 0 when every event the guard needs is registered and answered, else 1.
 */
async function checkClaudeCodeHook(settingsFile: string | undefined, io: HookIo): Promise<number> {
  const cwd = process.cwd();
  const files = settingsFile === undefined ? claudeCodeSettingsFiles(cwd, process.env.HOME || homedir()) : [{ scope: 'given', file: resolve(settingsFile) }];
  const found = files.filter((f) => existsSync(f.file)).flatMap((f) => guardHooksIn(f.scope, f.file));
  if (found.length === 0) {
    io.out(`no settings file registers claude-code-hook (looked in: ${files.map((f) => `${f.scope} ${f.file}`).join(', ')})`);
    io.out(`print the settings to add with: ${[process.execPath, join(packageRoot() ?? '.', CLAUDE_CODE_HOOK_ENTRY), '--print-settings', '--mode'].map(shellWord).join(' ')} <shadow|warn|enforce>`);
    return 1;
  }
  let ok = true;
  const nonce = randomBytes(8).toString('hex');
  for (const event of CLAUDE_CODE_HOOK_EVENTS) {
    const here = found.filter((f) => f.event === event);
    if (here.length === 0) {
      io.out(`${event}: not registered: add it (see --print-settings); without it the guard cannot tell a success from a refused call`);
      ok = false;
      continue;
    }
    for (const h of here) {
      if (h.http !== undefined) {
        const r = await postHook(h.command, h.http, JSON.stringify(checkInput(event, nonce, cwd)), process.env);
        const answered = r.status === 200 && r.check?.includes(`check ${nonce} answered`) === true && isJsonObject(r.body);
        if (answered) {
          io.out(`${event}: the guard answered (${h.scope} settings ${h.file}, HTTP ${h.command}): ${(r.check ?? '').slice((r.check ?? '').indexOf('answered') + 'answered'.length).replace(/^[:\s]+/, '')}`);
        } else {
          ok = false;
          const why =
            r.status === undefined
              ? `no answer: ${r.error ?? 'error'} (is serve --claude-code-hook-port running?)`
              : r.status === 401
                ? `HTTP 401: the token was refused${r.missing.length > 0 ? ` (${r.missing.join(', ')} is not set here; Claude Code needs it in its environment too)` : ''}`
                : `HTTP ${r.status}`;
          io.out(`${event}: the guard did NOT answer (${why}; ${h.scope} settings ${h.file}; url: ${h.command})`);
        }
        continue;
      }
      const r = await runShell(h.command, JSON.stringify(checkInput(event, nonce, cwd)), cwd, 15_000);
      const answer = r.stderr.split('\n').find((l) => l.includes(`check ${nonce} answered`));
      const stdoutOk = r.stdout.trim() === '' || isJsonObject(r.stdout);
      if (r.code === 0 && answer !== undefined && stdoutOk) {
        io.out(`${event}: the guard answered (${h.scope} settings ${h.file}): ${answer.slice(answer.indexOf('answered') + 'answered'.length).replace(/^[:\s]+/, '')}`);
      } else {
        ok = false;
        const why = r.timedOut ? 'no answer within 15 s' : r.code !== 0 ? `exit code ${r.code}` : answer === undefined ? 'no answer' : 'stdout is not a hook output';
        io.out(`${event}: the guard did NOT answer (${why}; ${h.scope} settings ${h.file}; command: ${h.command})`);
        for (const line of r.stderr.trim().split('\n').filter(Boolean).slice(-3)) io.out(`    ${line}`);
      }
    }
  }
  io.out(ok ? 'ok: Claude Code will run the guard on every tool event' : 'not ok: fix the lines above (a hook that fails never blocks a tool; the guard is then off)');
  return ok ? 0 : 1;
}

function isJsonObject(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}


/** `--print-settings --http <url>`: the HTTP form, for `serve --claude-code-hook-port`. */
function printHttpSettings(url: string, modeGiven: boolean, io: HookIo): number {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    io.err('repeated-tool-failure-guard claude-code-hook: --http expects the hook URL serve prints, e.g. http://127.0.0.1:4319/hooks/claude-code');
    return 1;
  }
  if (!HTTP_HOOK_PATH.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/+$/, '')}/hooks/claude-code`;
  io.out(JSON.stringify(claudeCodeHookSettings({ url: u.toString() }), null, 2));
  io.err(
    [
      'Merge the "hooks" above into one Claude Code settings file (user ~/.claude/settings.json, project .claude/settings.json, or managed).',
      `Claude Code sends the token from ${CLAUDE_CODE_HOOK_TOKEN_ENV} in its own environment (allowedEnvVars); the file holds no secret:`,
      `  export ${CLAUDE_CODE_HOOK_TOKEN_ENV}="$(cat <the serve --bearer-token-file>)"   # before starting claude`,
      ...(modeGiven ? ['--mode is ignored here: the endpoint answers in serve\'s --mode.'] : []),
      'If serve is down or refuses the token, Claude Code reports a hook error and runs the tool: the guard is then off, never in the way.',
      `Then check it: ${[process.execPath, join(packageRoot() ?? '.', CLAUDE_CODE_HOOK_ENTRY), '--check'].map(shellWord).join(' ')}`,
    ].join('\n'),
  );
  return 0;
}

/**
 * The whole `claude-code-hook` command: options, then `--print-settings`, `--check` or one hook
 * invocation. Unknown options are ignored (a usage error must not become Claude Code's blocking
 * exit 2).
 *
 * @param argv - the arguments after the command name
 * @param io - where to write
 * @param stdin - the hook input
 * @returns the exit code: 0, or 1 for a failed `--check`
 */
export async function runClaudeCodeHookCommand(argv: readonly string[], io: HookIo, stdin: AsyncIterable<Buffer | string> = process.stdin): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      mode: { type: 'string' },
      'state-dir': { type: 'string' },
      'decisions-file': { type: 'string' },
      'otlp-endpoint': { type: 'string' },
      'print-settings': { type: 'boolean' },
      check: { type: 'boolean' },
      settings: { type: 'string' },
      http: { type: 'string' },
    },
    strict: false,
    allowPositionals: true,
  });
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (values['print-settings'] === true && typeof values.http === 'string') return printHttpSettings(values.http, values.mode !== undefined, io);
  if (values['print-settings'] === true) {
    const command = claudeCodeHookCommand({ mode: str(values.mode), otlpEndpoint: str(values['otlp-endpoint']) });
    if (command === undefined) {
      io.err('repeated-tool-failure-guard claude-code-hook: cannot find the installed package from this script; install it (npm install -g repeated-tool-failure-guard) and run --print-settings from there');
      return 1;
    }
    io.out(JSON.stringify(claudeCodeHookSettings(command), null, 2));
    io.err(
      [
        'Merge the "hooks" above into one Claude Code settings file:',
        '  user (you, every project):      ~/.claude/settings.json   <- recommended: the mode stays yours',
        '  managed (every user of a host): /etc/claude-code/managed-settings.json (Linux), /Library/Application Support/ClaudeCode/managed-settings.json (macOS)',
        '  project (.claude/settings.json, .claude/settings.local.json): only on this machine, since the command names absolute paths',
        `The command runs this installation (${packageRoot() ?? '?'}) with this Node; keep both where they are.`,
        `Then check it: ${[process.execPath, join(packageRoot() ?? '.', CLAUDE_CODE_HOOK_ENTRY), '--check'].map(shellWord).join(' ')}`,
      ].join('\n'),
    );
    return 0;
  }
  if (values.check === true) return checkClaudeCodeHook(str(values.settings), io);
  const endpoint = str(values['otlp-endpoint']) ?? process.env.RTFG_CLAUDE_CODE_OTLP_ENDPOINT;
  return runClaudeCodeHook(await readAll(stdin), {
    mode: parseGuardMode(str(values.mode)),
    stateDir: str(values['state-dir']),
    decisionsFile: str(values['decisions-file']),
    otlpEndpoint: endpoint === '' ? undefined : endpoint,
  }, io);
}

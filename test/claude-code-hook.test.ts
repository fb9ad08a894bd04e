import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_TEXT } from '../src/core/failure/reducer.js';
import { REPETITION_ABORT_TEXT, REPETITION_WARNING_TEXT } from '../src/core/repetition/reducer.js';
import { claudeCodeHookSettings, runClaudeCodeHook } from '../src/cli/commands/claude-code-hook.js';
import { CLAUDE_CODE_HOOK_ADAPTER } from '../src/hooks/claude-code/claude-code-adapter.js';
import { parseClaudeCodeHookInput } from '../src/hooks/claude-code/hook-input.js';
import type { HookEvent } from '../src/hooks/hook-event.js';
import { defaultHookStateDir } from '../src/hooks/hook-runtime.js';
import { initialHookState, promptKey, stepHookSession } from '../src/hooks/hook-session.js';
import type { HookSessionState } from '../src/hooks/hook-session.js';
import { HookStateStore } from '../src/hooks/state-store.js';
import type { GuardMode } from '../src/core/failure/types.js';

const run = promisify(execFile);
const CLI = resolve('dist/bin/repeated-tool-failure-guard.js');

/** Hook inputs shaped like the ones Claude Code 2.1.328 sends (fixtures/claude-code-2.1.328/*.hooks.jsonl). */
const common = (prompt = 'prompt-1', session = 'session-1') => ({
  session_id: session,
  transcript_path: '/home/u/.claude/projects/x/session-1.jsonl',
  cwd: '/home/u/work',
  prompt_id: prompt,
  permission_mode: 'bypassPermissions',
});
const failure = (id: string, tool = 'Bash', extra: Record<string, unknown> = {}) => ({
  ...common(),
  hook_event_name: 'PostToolUseFailure',
  tool_name: tool,
  tool_input: { command: 'git status', description: 'Inspect the repository' },
  tool_use_id: id,
  error: 'Exit code 128\nfatal: not a git repository (or any of the parent directories): .git',
  is_interrupt: false,
  duration_ms: 30,
  ...extra,
});
const batch = (ids: readonly string[], extra: Record<string, unknown> = {}, response = 'Exit code 128\nfatal: not a git repository') => ({
  ...common(),
  hook_event_name: 'PostToolBatch',
  tool_calls: ids.map((id) => ({ tool_name: 'Bash', tool_input: { command: 'git status' }, tool_use_id: id, tool_response: response })),
  ...extra,
});
const pre = (id: string, command = 'git status') => ({
  ...common(),
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command, description: 'Inspect the repository' },
  tool_use_id: id,
});

function parse(v: unknown): HookEvent {
  const input = parseClaudeCodeHookInput(v);
  if (input === undefined) throw new Error('unparsed');
  return input;
}

const VOCABULARY = new Set(CLAUDE_CODE_HOOK_ADAPTER.vocabulary);
/** One runtime step with the Claude Code adapter's output. */
function stepHook(state: HookSessionState, event: HookEvent, mode: GuardMode, t: number) {
  const step = stepHookSession(state, event, mode, t, { vocabulary: VOCABULARY });
  return { ...step, output: CLAUDE_CODE_HOOK_ADAPTER.format(event, step.action) };
}
const defaultStateDir = (env: Record<string, string | undefined>) => defaultHookStateDir(CLAUDE_CODE_HOOK_ADAPTER, env);

/** Failing batches of `sizes` calls, through the pure step function; returns outputs and decisions per batch. */
function loop(mode: GuardMode, sizes: readonly number[]) {
  let state: HookSessionState = initialHookState('0'.repeat(32), 0);
  const outputs: unknown[] = [];
  const decisions: string[] = [];
  sizes.forEach((n, b) => {
    const ids = Array.from({ length: n }, (_, i) => `t${b}_${i}`);
    for (const id of ids) {
      const step = stepHook(state, parse(failure(id)), mode, b);
      expect(step.output).toBeUndefined();
      state = step.state;
    }
    const step = stepHook(state, parse(batch(ids)), mode, b);
    state = step.state;
    outputs.push(step.output);
    decisions.push(...step.decisions.map((d) => `${d.batch}:${d.decision}(${d.failureCountBucket},${d.batchCountBucket})`));
  });
  return { outputs, decisions, state };
}

describe('claude-code hook input', () => {
  it('parses the four events it acts on and ignores subagent inputs', () => {
    expect(parse(failure('t1'))).toEqual({
      type: 'call_settled',
      sessionId: 'session-1',
      promptId: 'prompt-1',
      toolName: 'Bash',
      toolType: 'native',
      callId: 't1',
      outcome: { kind: 'failure', errorType: 'shell_error' },
    });
    expect(parse(failure('t1', 'Read', { is_interrupt: true }))).toMatchObject({ outcome: { kind: 'cancelled' } });
    expect(parse(failure('t1', 'mcp__srv__query'))).toMatchObject({ toolType: 'mcp', outcome: { kind: 'failure', errorType: 'mcp_error' } });
    expect(parseClaudeCodeHookInput({ ...failure('t1'), agent_id: 'abb617e581ddf3e74', agent_type: 'general-purpose' })).toBeUndefined();
    expect(parse(pre('t2'))).toMatchObject({ type: 'call_started', toolName: 'Bash', callId: 't2' });
    expect(parse({ ...common(), hook_event_name: 'UserPromptSubmit', prompt: 'fix it' })).toEqual({ type: 'prompt_started', sessionId: 'session-1', promptId: 'prompt-1' });
  });

  it('reads a PostToolBatch: an entry is not_started unless a PostToolUse or PostToolUseFailure recorded it; a malformed entry makes it incomplete', () => {
    const b = parse({
      ...common(),
      hook_event_name: 'PostToolBatch',
      tool_calls: [
        { tool_name: 'Bash', tool_input: { command: 'git status' }, tool_use_id: 'a', tool_response: 'Exit code 128' },
        { tool_name: 'Bash', tool_input: {}, tool_use_id: 'b', tool_response: '<tool_use_error>InputValidationError: Bash failed due to the following issue:\nThe required parameter `command` is missing</tool_use_error>' },
        { tool_name: 'Read', tool_input: {}, tool_use_id: 'c', tool_response: { type: 'text', file: {} } },
      ],
    });
    expect(b).toMatchObject({
      type: 'batch_settled',
      complete: true,
      calls: [
        { callId: 'a', outcome: { kind: 'not_started' } },
        { callId: 'b', outcome: { kind: 'not_started' } },
        { callId: 'c', outcome: { kind: 'not_started' } },
      ],
    });
    expect(parse({ ...batch(['a']), tool_calls: [{ tool_name: 'Bash' }, 7] })).toMatchObject({ complete: false, calls: [] });
    expect(parse({ ...pre('s1'), hook_event_name: 'PostToolUse', tool_response: { stdout: 'x' } })).toMatchObject({ type: 'call_settled', callId: 's1', outcome: { kind: 'success' } });
  });

  it.each([
    ['not an object', 'x'],
    ['no session_id', { ...failure('t1'), session_id: undefined }],
    ['no prompt_id on a tool event', { ...failure('t1'), prompt_id: undefined }],
    ['no tool_use_id', { ...failure('t1'), tool_use_id: '' }],
    ['no tool_calls', { ...batch([]), tool_calls: undefined }],
    ['an event the guard ignores', { ...common(), hook_event_name: 'Stop' }],
  ])('ignores %s', (_name, v) => {
    expect(parseClaudeCodeHookInput(v)).toBeUndefined();
  });

  it('keeps no error text, tool input or tool result in what it returns for the state', () => {
    const text = JSON.stringify([parse(failure('t1')), parse(batch(['t1']))]);
    expect(text).not.toMatch(/git|fatal|Exit code|command/);
  });
});

describe('claude-code hook step (pure)', () => {
  it('enforce, the git loop 3/3/2/1: the reminder as PostToolBatch additionalContext after batch 3, the block with the stop text after batch 4', () => {
    const { outputs, decisions } = loop('enforce', [3, 3, 2, 1]);
    expect(decisions).toEqual(['1:tracked(3-4,1)', '2:tracked(5-7,2)', '3:warned(8+,3+)', '4:stopped(8+,3+)']);
    expect(outputs).toEqual([
      undefined,
      undefined,
      { hookSpecificOutput: { hookEventName: 'PostToolBatch', additionalContext: REPEATED_TOOL_FAILURE_REMINDER } },
      { decision: 'block', reason: REPEATED_TOOL_FAILURE_STOP_TEXT, systemMessage: REPEATED_TOOL_FAILURE_STOP_TEXT },
    ]);
  });

  it('warn reminds once and never blocks; shadow prints nothing', () => {
    const warn = loop('warn', [3, 3, 2, 1, 2]);
    expect(warn.decisions).toEqual(['1:tracked(3-4,1)', '2:tracked(5-7,2)', '3:warned(8+,3+)', '4:would_stop(8+,3+)']);
    expect(warn.outputs.filter((o) => o !== undefined)).toEqual([{ hookSpecificOutput: { hookEventName: 'PostToolBatch', additionalContext: REPEATED_TOOL_FAILURE_REMINDER } }]);
    const shadow = loop('shadow', [3, 3, 2, 1, 2]);
    expect(shadow.decisions).toEqual(['1:tracked(3-4,1)', '2:tracked(5-7,2)', '3:would_warn(8+,3+)', '4:would_stop(8+,3+)']);
    expect(shadow.outputs.every((o) => o === undefined)).toBe(true);
  });

  it('a call rejected before execution (validation error) in the batch resets as not_started', () => {
    let { state } = loop('enforce', [3]);
    state = stepHook(state, parse(failure('x1')), 'enforce', 1).state;
    const b = batch(['x1']);
    b.tool_calls.push({ tool_name: 'Bash', tool_input: { command: '' }, tool_use_id: 'x2', tool_response: '<tool_use_error>InputValidationError</tool_use_error>' });
    const step = stepHook(state, parse(b), 'enforce', 1);
    expect(step.decisions.map((d) => [d.decision, d.resetReason])).toEqual([['reset', 'not_started']]);
  });

  it('a same-tool success (PostToolUse) in the batch resets; an other tool\'s success is ignored', () => {
    const { state } = loop('shadow', [3]);
    const ok = stepHook(state, parse({ ...pre('ok1'), hook_event_name: 'PostToolUse', tool_response: 'On branch main' }), 'shadow', 1).state;
    const step = stepHook(ok, parse(batch(['ok1'], {}, 'On branch main')), 'shadow', 1);
    expect(step.decisions.map((d) => [d.decision, d.resetReason])).toEqual([['reset', 'success']]);
    let other = stepHook(state, parse({ ...pre('r1'), tool_name: 'Read', hook_event_name: 'PostToolUse', tool_response: {} }), 'shadow', 1).state;
    other = stepHook(other, parse(failure('f1')), 'shadow', 1).state;
    const b = batch(['f1']);
    b.tool_calls.unshift({ tool_name: 'Read', tool_input: { command: '' }, tool_use_id: 'r1', tool_response: 'file text' });
    expect(stepHook(other, parse(b), 'shadow', 1).decisions.map((d) => `${d.decision}(${d.failureCountBucket},${d.batchCountBucket})`)).toEqual(['tracked(3-4,2)']);
  });

  // Every form in which Claude Code 2.1.328 refuses a call before it runs, as the real CLI wrote it
  // in PostToolBatch (conformance scenario denials-reset-enforce-hooks and its capture; the CLI's
  // default, dontAsk and bypassPermissions modes give the same texts). None fires PostToolUse or
  // PostToolUseFailure; beside a tracked failure each must reset as not_started, never read as a
  // success (an other tool's success would leave the streak running to a stop).
  it.each([
    ['a Bash deny rule', 'Bash', 'Permission to use Bash with command git push origin main has been denied.'],
    ['a WebFetch domain deny rule', 'WebFetch', 'WebFetch denied access to domain:blocked.example.com.'],
    ['a Read/Edit/Write path deny rule', 'Write', '<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>'],
    ['a Write that needs approval -p cannot give', 'Write', "Claude requested permissions to write to /w/notes.txt, but you haven't granted it yet."],
    ['a WebFetch that needs approval', 'WebFetch', "Claude requested permissions to use WebFetch, but you haven't granted it yet."],
    ['a shell command that needs approval', 'Bash', "touch in '/w/marker' needs approval. The path is inside the working directories for this session ('/w'), and Claude Code asks before a shell command writes there."],
    ["another hook's PreToolUse deny", 'Bash', 'PreToolUse:Bash hook error: policy says no'],
    ['an input validation error', 'Bash', '<tool_use_error>InputValidationError: Bash failed due to the following issue:\nThe required parameter `command` is missing</tool_use_error>'],
    ['an unknown tool', 'NoSuchTool', '<tool_use_error>Error: No such tool available: NoSuchTool</tool_use_error>'],
  ])('%s is not_started: the warned streak resets instead of stopping', (_form, tool, response) => {
    let { state } = loop('enforce', [4, 4]);
    expect(state.guard.phase).toBe('warned');
    state = stepHook(state, parse(failure('x1')), 'enforce', 2).state;
    const b = batch(['x1']);
    b.tool_calls.push({ tool_name: tool, tool_input: { command: 'x' }, tool_use_id: 'x2', tool_response: response });
    const step = stepHook(state, parse(b), 'enforce', 2);
    expect(step.decisions.map((d) => [d.decision, d.resetReason])).toEqual([['reset', 'not_started']]);
    expect(step.output).toBeUndefined();
  });

  it('a new prompt_id starts a fresh guard; subagent inputs are not events', () => {
    const first = loop('enforce', [4, 3]);
    expect(first.state.guard.phase).toBe('tracking');
    expect(parseClaudeCodeHookInput({ ...batch(['s1']), agent_id: 'a1', agent_type: 'general-purpose' })).toBeUndefined();
    const next = stepHook(first.state, parse({ ...failure('n1'), prompt_id: 'prompt-2' }), 'enforce', 3);
    expect(next.state.prompt).toBe(promptKey('prompt-2'));
    expect(next.state.guard.phase).toBe('idle');
    expect(next.state.batches).toBe(0);
  });

  it('identical-call breaker on PreToolUse: warn at 3 (additionalContext), deny at 5, then the batch is blocked', () => {
    let state = initialHookState('1'.repeat(32), 0);
    const outs: unknown[] = [];
    for (let i = 1; i <= 5; i++) {
      const step = stepHook(state, parse(pre(`r${i}`)), 'enforce', i);
      state = step.state;
      outs.push(step.output);
    }
    expect(outs.slice(0, 2)).toEqual([undefined, undefined]);
    expect(outs[2]).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: REPETITION_WARNING_TEXT } });
    expect(outs[4]).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: REPETITION_ABORT_TEXT } });
    const step = stepHook(state, parse(batch(['r5'], {}, 'PreToolUse:Bash hook error'))!, 'enforce', 6);
    expect(step.output).toEqual({ decision: 'block', reason: REPETITION_ABORT_TEXT, systemMessage: REPETITION_ABORT_TEXT });
    expect(step.decisions.map((d) => [d.decision, d.resetReason])).toEqual([]);
    // A different command breaks the run.
    const other = stepHook(initialHookState('1'.repeat(32), 0), parse(pre('z', 'git log')), 'enforce', 7);
    expect(other.output).toBeUndefined();
  });

  it('stores a salted fingerprint, never the tool input', () => {
    const secret = 'SECRET-TOKEN-42';
    let state = initialHookState('2'.repeat(32), 0);
    state = stepHook(state, parse(pre('p1', `curl -H "Authorization: ${secret}" https://x`)), 'enforce', 1).state;
    state = stepHook(state, parse(failure('p1', 'Bash', { error: `Exit code 1 ${secret}` })), 'enforce', 2).state;
    expect(JSON.stringify(state)).not.toContain(secret);
    expect(JSON.stringify(state)).not.toContain('curl');
  });
});

describe('claude-code-hook command and its state file', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
  };
  const fresh = () => mkdtempSync(join(tmpdir(), 'rtfg-cc-hook-'));

  it('runs the enforce loop across invocations through the state file, and appends the decisions', async () => {
    const dir = fresh();
    const decisionsFile = join(dir, 'decisions.jsonl');
    const outs: string[] = [];
    for (const [b, n] of [3, 3, 2, 1].entries()) {
      const ids = Array.from({ length: n }, (_, i) => `t${b}_${i}`);
      for (const id of ids) expect(await runClaudeCodeHook(JSON.stringify(failure(id)), { mode: 'enforce', stateDir: join(dir, 's') }, io().io)).toBe(0);
      const o = io();
      expect(await runClaudeCodeHook(JSON.stringify(batch(ids)), { mode: 'enforce', stateDir: join(dir, 's'), decisionsFile }, o.io)).toBe(0);
      outs.push(o.out.join(''));
    }
    expect(outs.map((o) => (o === '' ? '' : Object.keys(JSON.parse(o)).join()))).toEqual(['', '', 'hookSpecificOutput', 'decision,reason,systemMessage']);
    const lines = readFileSync(decisionsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => `${l.promptId}/${l.batch}:${l.decision}`)).toEqual(['prompt-1/1:tracked', 'prompt-1/2:tracked', 'prompt-1/3:warned', 'prompt-1/4:stopped']);
    expect(Object.keys(lines[0]).sort()).toEqual(['guard', 'batchCountBucket', 'batch', 'candidateOrdinal', 'decision', 'failureCountBucket', 'mode', 'phaseAfter', 'phaseBefore', 'promptId'].sort());
    expect(lines[0].guard).toBe('repeated_tool_failure');
  });

  it.each(['QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD', 'REPEATED_TOOL_FAILURE_GUARD_MODE'])('takes the mode from %s (invalid → shadow); off keeps no state', async (variable) => {
    for (const [value, wantOutput] of [['enforce', true], ['bogus', false], [undefined, false]] as const) {
      const dir = fresh();
      const env = { [variable]: value, HOME: dir };
      let last = io();
      for (const [b, n] of [4, 4].entries()) {
        const ids = Array.from({ length: n }, (_, i) => `t${b}_${i}`);
        for (const id of ids) await runClaudeCodeHook(JSON.stringify(failure(id)), {}, io().io, env);
        last = io();
        await runClaudeCodeHook(JSON.stringify(batch(ids)), {}, last.io, env);
      }
      expect(last.out.length > 0).toBe(wantOutput);
      expect(existsSync(defaultStateDir(env))).toBe(true);
    }
    const dir = fresh();
    await runClaudeCodeHook(JSON.stringify(failure('t')), {}, io().io, { [variable]: 'off', HOME: dir });
    expect(existsSync(defaultStateDir({ HOME: dir }))).toBe(false);
  });

  it('keeps no error text, command or path in the state file, stdout or decisions', async () => {
    const dir = fresh();
    const secret = 'SECRET-PATH-/home/alice/private';
    const decisionsFile = join(dir, 'd.jsonl');
    const o = io();
    for (let b = 0; b < 4; b++) {
      const ids = [`a${b}`, `b${b}`, `c${b}`];
      for (const id of ids) {
        await runClaudeCodeHook(JSON.stringify(pre(id, `cat ${secret}`)), { mode: 'enforce', stateDir: dir, decisionsFile }, o.io);
        await runClaudeCodeHook(JSON.stringify(failure(id, 'Bash', { error: `Exit code 1\n${secret}`, tool_input: { command: `cat ${secret}` } })), { mode: 'enforce', stateDir: dir, decisionsFile }, o.io);
      }
      await runClaudeCodeHook(JSON.stringify(batch(ids, {}, secret)), { mode: 'enforce', stateDir: dir, decisionsFile }, o.io);
    }
    const everything = [...o.out, ...o.err, ...readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8'))].join('\n');
    expect(o.out.length).toBeGreaterThan(0);
    expect(everything).not.toContain('SECRET');
    expect(everything).not.toContain('alice');
    expect(everything).not.toContain('session-1');
  });

  it('keeps no MCP server or tool name in the state file, and still stops the MCP loop (issue 34.7)', async () => {
    const dir = fresh();
    const tool = 'mcp__acme-internal-crm__lookup_customer';
    const o = io();
    for (let b = 0; b < 4; b++) {
      const ids = [`m${b}a`, `m${b}b`, `m${b}c`];
      for (const id of ids) await runClaudeCodeHook(JSON.stringify(failure(id, tool, { error: 'MCP error -32603: upstream down' })), { mode: 'enforce', stateDir: dir }, o.io);
      const calls = ids.map((id) => ({ tool_name: tool, tool_input: { id: 7 }, tool_use_id: id, tool_response: 'MCP error -32603: upstream down' }));
      await runClaudeCodeHook(JSON.stringify({ ...batch([]), tool_calls: calls }), { mode: 'enforce', stateDir: dir }, o.io);
    }
    const state = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
    expect(state.length).toBeGreaterThan(0);
    expect(state).not.toContain('acme');
    expect(state).not.toContain('lookup_customer');
    expect(o.out.join('\n')).toContain(REPEATED_TOOL_FAILURE_STOP_TEXT.slice(0, 40));
  });

  it('never fails the hook: malformed stdin, an unwritable state dir, a busy lock → exit 0 and no output', async () => {
    const o = io();
    expect(await runClaudeCodeHook('not json', { mode: 'enforce' }, o.io)).toBe(0);
    const file = join(fresh(), 'a-file');
    writeFileSync(file, '');
    expect(await runClaudeCodeHook(JSON.stringify(failure('t')), { mode: 'enforce', stateDir: join(file, 'sub') }, o.io)).toBe(0);
    const dir = fresh();
    const store = new HookStateStore(dir, { lockTimeoutMillis: 50 });
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${store.fileOf('session-1')}.lock`, '');
    expect(await runClaudeCodeHook(JSON.stringify(failure('t')), { mode: 'enforce', stateDir: dir }, o.io)).toBe(0);
    expect(o.out).toEqual([]);
    expect(o.err.length).toBe(3);
    expect(o.err.join('\n')).not.toContain('git');
  });

  it('breaks a stale lock, expires an idle session state, sweeps old files', async () => {
    const dir = fresh();
    let t = 1_000_000;
    const store = new HookStateStore(dir, { now: () => t, staleLockMillis: 10_000 });
    expect(await store.update('s', () => [{ n: 1 }, 'first'])).toBe('first');
    writeFileSync(`${store.fileOf('s')}.lock`, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${store.fileOf('s')}.lock`, old, old);
    t = Date.now();
    expect(await store.update('s', ({ current }) => [current, current])).toEqual({ n: 1 });

    // An idle session (> 2 h since the last update) starts fresh: 7 earlier failures do not count.
    const hookDir = fresh();
    let now = 0;
    const clock = () => now;
    for (const [b, n] of [4, 3].entries()) {
      const ids = Array.from({ length: n }, (_, i) => `t${b}_${i}`);
      for (const id of ids) await runClaudeCodeHook(JSON.stringify(failure(id)), { mode: 'enforce', stateDir: hookDir }, io().io, {}, clock);
      await runClaudeCodeHook(JSON.stringify(batch(ids)), { mode: 'enforce', stateDir: hookDir }, io().io, {}, clock);
    }
    now = 2 * 60 * 60 * 1000 + 1;
    const ids = ['x1', 'x2'];
    for (const id of ids) await runClaudeCodeHook(JSON.stringify(failure(id)), { mode: 'enforce', stateDir: hookDir }, io().io, {}, clock);
    const decisionsFile = join(hookDir, 'd.jsonl');
    await runClaudeCodeHook(JSON.stringify(batch(ids)), { mode: 'enforce', stateDir: hookDir, decisionsFile }, io().io, {}, clock);
    expect(JSON.parse(readFileSync(decisionsFile, 'utf8'))).toMatchObject({ batch: 1, decision: 'tracked', failureCountBucket: '1-2', batchCountBucket: '1' });

    const sweepDir = fresh();
    const sweeper = new HookStateStore(sweepDir);
    await sweeper.update('old', () => [{}, 0]);
    await sweeper.update('new', () => [{}, 0]);
    const longAgo = new Date(Date.now() - 25 * 60 * 60 * 1000);
    utimesSync(sweeper.fileOf('old'), longAgo, longAgo);
    expect(await sweeper.sweep()).toBe(1);
    expect(existsSync(sweeper.fileOf('old'))).toBe(false);
    expect(existsSync(sweeper.fileOf('new'))).toBe(true);
  });

  it('concurrent hook processes of one batch (sibling PostToolUseFailure) lose no failure', async () => {
    expect(existsSync(CLI)).toBe(true);
    const dir = fresh();
    const ids = Array.from({ length: 8 }, (_, i) => `par_${i}`);
    const env = { ...process.env, RTFG_CLAUDE_CODE_STATE_DIR: dir, QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD: 'shadow' };
    const hook = (input: unknown) => {
      const p = run(process.execPath, [CLI, 'claude-code-hook'], { env, timeout: 20_000 });
      p.child.stdin?.end(JSON.stringify(input));
      return p;
    };
    const results = await Promise.all(ids.map((id) => hook(failure(id))));
    expect(results.every((r) => r.stdout === '')).toBe(true);
    const decisionsFile = join(dir, 'd.jsonl');
    const batchRun = run(process.execPath, [CLI, 'claude-code-hook', '--decisions-file', decisionsFile], { env, timeout: 20_000 });
    batchRun.child.stdin?.end(JSON.stringify(batch(ids)));
    await batchRun;
    expect(JSON.parse(readFileSync(decisionsFile, 'utf8'))).toMatchObject({ decision: 'tracked', failureCountBucket: '8+', batchCountBucket: '1' });
  }, 30_000);

  it('exports the guard telemetry of a decision over OTLP/HTTP when given an endpoint (shadow: no stdout, only telemetry)', async () => {
    const received: { path: string; body: string }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const env = { ...process.env, RTFG_CLAUDE_CODE_STATE_DIR: fresh(), RTFG_CLAUDE_CODE_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD: 'shadow' };
      const hook = async (input: unknown) => {
        const p = run(process.execPath, [CLI, 'claude-code-hook'], { env, timeout: 20_000 });
        p.child.stdin?.end(JSON.stringify(input));
        return (await p).stdout;
      };
      expect(await hook(failure('e1', 'Bash', { error: 'Exit code 1 SECRET-ERR' }))).toBe('');
      expect(received).toEqual([]);
      expect(await hook(batch(['e1'], {}, 'SECRET-RESULT'))).toBe('');
      expect(received.map((r) => r.path).sort()).toEqual(['/v1/logs', '/v1/metrics']);
      const logs = JSON.parse(received.find((r) => r.path === '/v1/logs')?.body ?? '{}');
      const record = logs.resourceLogs[0].scopeLogs[0].logRecords[0];
      const attrs = Object.fromEntries(record.attributes.map((a: { key: string; value: Record<string, unknown> }) => [a.key, Object.values(a.value)[0]]));
      expect(attrs).toMatchObject({ 'event.name': 'claude-code.repeated_tool_failure_guard', decision: 'tracked', mode: 'shadow', prompt_id: 'prompt-1', execution_error_type: 'shell_error', failure_count_bucket: '1-2' });
      expect(received.map((r) => r.body).join('')).not.toMatch(/SECRET|git|session-1/);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 30_000);

  it('prints a settings fragment registering PreToolUse, PostToolUse, PostToolUseFailure and PostToolBatch', async () => {
    expect(claudeCodeHookSettings('cmd')).toEqual({
      hooks: {
        PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'cmd' }] }],
        PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'cmd' }] }],
        PostToolUseFailure: [{ matcher: '*', hooks: [{ type: 'command', command: 'cmd' }] }],
        PostToolBatch: [{ hooks: [{ type: 'command', command: 'cmd' }] }],
      },
    });
    const { stdout } = await run(process.execPath, [CLI, 'claude-code-hook', '--print-settings', '--mode', 'enforce'], { timeout: 20_000 });
    // An absolute command: this Node and the hook's own entry of this installation, from any directory.
    expect(JSON.parse(stdout).hooks.PostToolBatch[0].hooks[0].command).toBe(`${process.execPath} ${resolve('dist/bin/claude-code-hook.cjs')} --mode enforce`);
    // A usage error still exits 0 (Claude Code would treat exit 2 as blocking).
    const bad = run(process.execPath, [CLI, 'claude-code-hook', 'unexpected-argument'], { timeout: 20_000 });
    bad.child.stdin?.end('');
    await expect(bad).resolves.toMatchObject({ stdout: '' });
  });
});

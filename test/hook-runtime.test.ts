/**
 * The shared hook runtime's guarantees (src/hooks/), driven through the Claude Code adapter with
 * inputs shaped like Claude Code 2.1.328's: ids that are Object.prototype names, oversized ids,
 * lost records, unsafe state directories, planted symbolic links, the invocation's time limit.
 * Expected decisions are the design's (8 eligible failures over ≥ 2 batches → warn; the next
 * matching batch → stop; an incomplete batch → reset).
 */
import { outputId } from '../src/otel/output-id.js';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPEATED_TOOL_FAILURE_STOP_TEXT } from '../src/core/failure/reducer.js';
import { CLAUDE_CODE_HOOK_ADAPTER } from '../src/hooks/claude-code/claude-code-adapter.js';
import type { HookAdapter, HookBatchCall, HookEvent } from '../src/hooks/hook-event.js';
import { runHook } from '../src/hooks/hook-runtime.js';
import type { HookRunOptions } from '../src/hooks/hook-runtime.js';
import { HookStateStore } from '../src/hooks/state-store.js';

const run = promisify(execFile);
const CLI = resolve('dist/bin/repeated-tool-failure-guard.js');
/** The hook's own entry: what the printed settings run. */
const HOOK = resolve('dist/bin/claude-code-hook.cjs');
const fresh = () => mkdtempSync(join(tmpdir(), 'rtfg-hook-rt-'));

const common = (prompt: string) => ({ session_id: 'session-1', transcript_path: '/t.jsonl', cwd: '/w', prompt_id: prompt, permission_mode: 'default' });
const failure = (id: string, prompt = 'prompt-1') => ({
  ...common(prompt),
  hook_event_name: 'PostToolUseFailure',
  tool_name: 'Bash',
  tool_input: { command: 'git status' },
  tool_use_id: id,
  error: 'Exit code 128',
  is_interrupt: false,
});
const batch = (ids: readonly string[], prompt = 'prompt-1') => ({
  ...common(prompt),
  hook_event_name: 'PostToolBatch',
  tool_calls: ids.map((id) => ({ tool_name: 'Bash', tool_input: { command: 'git status' }, tool_use_id: id, tool_response: 'Exit code 128' })),
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

/** Failing batches of `sizes` calls through runHook; ids from `idOf(batch, i)`. Returns each batch's decision and output. */
async function failingRun(sizes: readonly number[], options: HookRunOptions, idOf: (b: number, i: number) => string, prompt = 'prompt-1') {
  const decisionsFile = join(fresh(), 'd.jsonl');
  const outputs: string[] = [];
  const errors: string[] = [];
  for (const [b, n] of sizes.entries()) {
    const ids = Array.from({ length: n }, (_, i) => idOf(b, i));
    for (const id of ids) {
      const c = capture();
      await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure(id, prompt)), { decisionsFile, ...options }, c.io, {});
      errors.push(...c.err);
    }
    const c = capture();
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(batch(ids, prompt)), { decisionsFile, ...options }, c.io, {});
    outputs.push(c.out.join(''));
    errors.push(...c.err);
  }
  const decisions = existsSync(decisionsFile)
    ? readFileSync(decisionsFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { batch: number; decision: string; resetReason?: string; promptId: string })
    : [];
  return { outputs, errors, decisions: decisions.map((d) => `${d.batch}:${d.decision}${d.resetReason ? `:${d.resetReason}` : ''}`), lines: decisions };
}

describe('hook runtime: ids are data, never object keys', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'])('tool_use_id %s: the git loop still warns at batch 3 and stops at batch 4', async (name) => {
    const r = await failingRun([3, 3, 2, 1], { mode: 'enforce', stateDir: fresh() }, (b, i) => (i === 0 ? name : `${name}_${b}_${i}`));
    expect(r.decisions).toEqual(['1:tracked', '2:tracked', '3:warned', '4:stopped']);
    expect(JSON.parse(r.outputs[3] as string)).toEqual({ decision: 'block', reason: REPEATED_TOOL_FAILURE_STOP_TEXT, systemMessage: REPEATED_TOOL_FAILURE_STOP_TEXT });
    expect(r.errors).toEqual([]);
  });

  it('a prompt_id and a session_id named after Object.prototype members are ordinary ids', async () => {
    const r = await failingRun([3, 3, 2, 1], { mode: 'enforce', stateDir: fresh() }, (b, i) => `t${b}_${i}`, '__proto__');
    expect(r.decisions).toEqual(['1:tracked', '2:tracked', '3:warned', '4:stopped']);
  });
});

describe('hook runtime: an oversized prompt_id does not turn the guard off', () => {
  it('a 1.5 MiB prompt_id: the state stays small and the loop is judged as any other', async () => {
    const dir = fresh();
    const prompt = `p-${'x'.repeat(1.5 * 1024 * 1024)}`;
    const r = await failingRun([3, 3, 2, 1], { mode: 'enforce', stateDir: dir }, (b, i) => `t${b}_${i}`, prompt);
    expect(r.decisions).toEqual(['1:tracked', '2:tracked', '3:warned', '4:stopped']);
    // ids in output are bounded (issue 34.7): the first 64 characters, …# and a digest of the whole id
    expect(r.lines[0]?.promptId).toBe(outputId(prompt));
    expect(r.errors).toEqual([]);
    const sizes = readdirSync(dir).map((f) => lstatSync(join(dir, f)).size);
    expect(Math.max(...sizes)).toBeLessThan(4096);
  });

  it('a state file it cannot use is said on stderr, never silently dropped', async () => {
    const dir = fresh();
    const store = new HookStateStore(dir);
    await store.update('session-1', () => [{ any: 'thing' }, 0]);
    writeFileSync(store.fileOf('session-1'), 'x'.repeat(1024 * 1024 + 1));
    const c = capture();
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('t1')), { mode: 'enforce', stateDir: dir }, c.io, {});
    expect(c.err.join('\n')).toMatch(/state file was too large; the guard starts this session afresh/);
  });
});

describe('hook runtime: a lost record makes its batch not judged, never a success', () => {
  it('a PostToolUseFailure lost on a busy lock: the batch resets as incomplete (it would have read as a success)', async () => {
    const dir = fresh();
    const decisionsFile = join(dir, 'd.jsonl');
    const options: HookRunOptions = { mode: 'enforce', stateDir: join(dir, 's'), decisionsFile, lockTimeoutMillis: 50 };
    for (const [b, n] of [4, 3].entries()) {
      const ids = Array.from({ length: n }, (_, i) => `t${b}_${i}`);
      for (const id of ids) await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure(id)), options, capture().io, {});
      await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(batch(ids)), options, capture().io, {});
    }
    // Batch 3: one failure recorded, one lost while another hook holds the lock.
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('a')), options, capture().io, {});
    const store = new HookStateStore(join(dir, 's'));
    const lock = `${store.fileOf('session-1')}.lock`;
    writeFileSync(lock, '');
    const lost = capture();
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('b')), options, lost.io, {});
    expect(lost.err.join('')).toMatch(/state lock busy; this event is lost and its batch will not be judged/);
    expect(lost.out).toEqual([]);
    await import('node:fs/promises').then((fs) => fs.unlink(lock));
    const last = capture();
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(batch(['a', 'b'])), options, last.io, {});
    const lines = readFileSync(decisionsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { decision: string; resetReason?: string });
    expect(lines.map((l) => `${l.decision}:${l.resetReason ?? ''}`)).toEqual(['tracked:', 'tracked:', 'reset:incomplete']);
    expect(last.out).toEqual([]);
  });

  it('a state file found unreadable mid-batch: the batch it held is not judged as complete (its recorded failures are lost)', async () => {
    const dir = fresh();
    const decisionsFile = join(dir, 'd.jsonl');
    const options: HookRunOptions = { mode: 'enforce', stateDir: join(dir, 's'), decisionsFile };
    for (const [b, n] of [4, 3].entries()) {
      const ids = Array.from({ length: n }, (_, i) => `t${b}_${i}`);
      for (const id of ids) await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure(id)), options, capture().io, {});
      await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(batch(ids)), options, capture().io, {});
    }
    // Batch 3: failure a recorded, then the state file is damaged, then failure b.
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('a')), options, capture().io, {});
    writeFileSync(new HookStateStore(join(dir, 's')).fileOf('session-1'), '{"damaged":');
    const damaged = capture();
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('b')), options, damaged.io, {});
    expect(damaged.err.join('')).toMatch(/unreadable; the guard starts this session afresh/);
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(batch(['a', 'b'])), options, capture().io, {});
    const lines = readFileSync(decisionsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { decision: string; resetReason?: string });
    // The guard starts afresh (idle): the damaged batch gives no decision, neither a count nor a success that resets.
    expect(lines.map((l) => `${l.decision}:${l.resetReason ?? ''}`)).toEqual(['tracked:', 'tracked:']);
  });

  it('128 concurrent hook processes, 16 of them on a held lock: every lost record shows as an incomplete batch, never as success', async () => {
    expect(existsSync(CLI)).toBe(true);
    const dir = fresh();
    const decisionsFile = join(dir, 'd.jsonl');
    const env = { ...process.env, RTFG_CLAUDE_CODE_STATE_DIR: join(dir, 's'), QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD: 'shadow' };
    // Pre-create the directory so the processes race only on the lock.
    mkdirSync(join(dir, 's'), { mode: 0o700 });
    const store = new HookStateStore(join(dir, 's'));
    const lock = `${store.fileOf('session-1')}.lock`;
    // Batch 1 (4 failures) makes the guard track: a reset of batch 2 then shows with its reason.
    const first4 = ['f0', 'f1', 'f2', 'f3'];
    const shadow: HookRunOptions = { mode: 'shadow', stateDir: join(dir, 's'), decisionsFile };
    for (const id of first4) await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure(id)), shadow, capture().io, {});
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(batch(first4)), shadow, capture().io, {});
    const ids = Array.from({ length: 128 }, (_, i) => `c${i}`);
    // Hold the lock while the first 16 run (kept fresh, so no slow start finds it stale): they
    // time out and must leave a marker.
    writeFileSync(lock, '');
    const keepFresh = setInterval(() => {
      const t = new Date();
      utimesSync(lock, t, t);
    }, 500);
    const hook = (input: unknown) => {
      const p = run(process.execPath, [HOOK], { env, timeout: 120_000 });
      p.child.stdin?.end(JSON.stringify(input));
      return p;
    };
    const first = await Promise.all(ids.slice(0, 16).map((id) => hook(failure(id)))).finally(() => clearInterval(keepFresh));
    expect(first.map((r) => `${r.stdout}|${/state lock busy/.test(r.stderr)}`)).toEqual(first.map(() => '|true'));
    await import('node:fs/promises').then((fs) => fs.unlink(lock));
    const rest = await Promise.all(ids.slice(16).map((id) => hook(failure(id))));
    expect(rest.every((r) => r.stdout === '')).toBe(true);
    const batchRun = run(process.execPath, [HOOK, '--decisions-file', decisionsFile], { env, timeout: 60_000 });
    batchRun.child.stdin?.end(JSON.stringify(batch(ids)));
    await batchRun;
    // At least 16 records lost: batch 2 is incomplete (read as successes, it would reset as `success`).
    const lines = readFileSync(decisionsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { batch: number; decision: string; resetReason?: string });
    expect(lines.map((l) => `${l.batch}:${l.decision}:${l.resetReason ?? ''}`)).toEqual(['1:tracked:', '2:reset:incomplete']);
  }, 300_000);
});

describe('hook runtime: the state directory and its files', () => {
  it.each([
    ['writable by others (0777)', (d: string) => chmodSync(d, 0o777), /writable by group or others/],
    ['writable by its group (0770)', (d: string) => chmodSync(d, 0o770), /writable by group or others/],
  ])('an existing state directory %s is refused, and the hook still answers nothing and exits 0', async (_name, spoil, message) => {
    const dir = join(fresh(), 's');
    mkdirSync(dir, { mode: 0o700 });
    spoil(dir);
    const c = capture();
    expect(await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('t')), { mode: 'enforce', stateDir: dir }, c.io, {})).toBe(0);
    expect(c.err.join('')).toMatch(message);
    expect(c.out).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a state directory that is a symbolic link is refused', async () => {
    const base = fresh();
    mkdirSync(join(base, 'real'), { mode: 0o700 });
    symlinkSync(join(base, 'real'), join(base, 'link'));
    const c = capture();
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('t')), { mode: 'enforce', stateDir: join(base, 'link') }, c.io, {});
    expect(c.err.join('')).toMatch(/symbolic link/);
    expect(readdirSync(join(base, 'real'))).toEqual([]);
  });

  it.runIf(process.getuid?.() === 0)('a state directory owned by another user is refused', async () => {
    const dir = join(fresh(), 's');
    mkdirSync(dir, { mode: 0o700 });
    const { chownSync } = await import('node:fs');
    chownSync(dir, 65534, 65534);
    const c = capture();
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('t')), { mode: 'enforce', stateDir: dir }, c.io, {});
    expect(c.err.join('')).toMatch(/belongs to another user/);
  });

  it('a symbolic link planted at the state file is neither read nor written through', async () => {
    const base = fresh();
    const dir = join(base, 's');
    mkdirSync(dir, { mode: 0o700 });
    const target = join(base, 'victim');
    writeFileSync(target, 'do not touch');
    const store = new HookStateStore(dir);
    symlinkSync(target, store.fileOf('session-1'));
    const c = capture();
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('t')), { mode: 'enforce', stateDir: dir }, c.io, {});
    expect(readFileSync(target, 'utf8')).toBe('do not touch');
    expect(lstatSync(store.fileOf('session-1')).isSymbolicLink()).toBe(false);
    expect(c.err.join('')).toMatch(/unreadable; the guard starts this session afresh/);
  });

  it('state files and the directory are private (0600, 0700)', async () => {
    const dir = join(fresh(), 's');
    await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('t')), { mode: 'enforce', stateDir: dir }, capture().io, {});
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(dir)) expect(lstatSync(join(dir, f)).mode & 0o777).toBe(0o600);
  });
});

describe('hook runtime: bounded time', () => {
  // mkdir under /proc never returns (Node retries it for ever): without its own limit the hook
  // would hang until Claude Code's hook timeout. The process must end by itself, having said why.
  it.each([
    ['the hook entry', [HOOK]],
    ['repeated-tool-failure-guard claude-code-hook', [CLI, 'claude-code-hook']],
  ])('a state directory under /proc: %s answers nothing, says why, and exits 0 by itself', async (_name, args) => {
    const p = run(process.execPath, [...args, '--mode', 'enforce', '--state-dir', '/proc/rtfg-no-such/dir'], { timeout: 90_000 });
    p.child.stdin?.end(JSON.stringify(batch(['t'])));
    const r = await p;
    expect(r.stdout.trim()).toBe(JSON.stringify({ systemMessage: 'repeated-tool-failure-guard: no answer within 5000 ms (state directory not responding?); no decision; no tool is blocked by it' }));
    expect(r.stderr).toMatch(/no answer within 5000 ms/);
  }, 100_000);

  it('runHook resolves at its time limit even when the store never answers', async () => {
    const c = capture();
    const started = Date.now();
    expect(await runHook(CLAUDE_CODE_HOOK_ADAPTER, JSON.stringify(failure('t')), { mode: 'enforce', stateDir: '/proc/rtfg-no-such/dir', timeLimitMillis: 300 }, c.io, {})).toBe(0);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(c.out).toEqual([]);
    expect(c.err).toEqual(['repeated-tool-failure-guard claude-code-hook: no answer within 300 ms (state directory not responding?); no decision']);
  });
});

describe('hook runtime: hosts whose every event lists the prompt\'s batches again (Codex)', () => {
  /** A test host: `{ events: HookEvent[] }` on stdin is the event list itself. */
  const LISTING: HookAdapter = {
    profile: 'codex',
    command: 'test-hook',
    vocabulary: ['exit_2'],
    denyAfterStop: true,
    parse: (v) => (v as { events: HookEvent[] }).events,
    format: (event, action) => (action.type === 'none' ? undefined : { on: event.type, action: action.type }),
  };
  const common = { sessionId: 's', promptId: 'p' };
  const fail = (id: string): HookBatchCall => ({ callId: id, toolName: 'exec_command', toolType: 'native', outcome: { kind: 'failure', errorType: 'exit_2' } });
  const batchOf = (ordinal: number, ids: string[], calls: HookBatchCall[] = ids.map(fail)): HookEvent => ({ type: 'batch_settled', ...common, calls, complete: true, ordinal });
  const start = (id: string): HookEvent => ({ type: 'call_started', ...common, callId: id, toolName: 'exec_command', toolInput: { id } });

  const count = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0);

  async function step(dir: string, decisionsFile: string, events: HookEvent[]) {
    const c = capture();
    await runHook(LISTING, JSON.stringify({ events }), { mode: 'enforce', stateDir: dir, decisionsFile }, c.io, {});
    expect(c.err).toEqual([]);
    return c.out.length === 0 ? undefined : (JSON.parse(c.out[0] as string) as { on: string; action: string });
  }

  it('a batch listed again changes nothing; one out of order or with an unknown outcome waits; the stop outranks and denies every later call', async () => {
    const dir = fresh();
    const decisionsFile = join(dir, 'd.jsonl');
    const b = (n: number) => [`c${n}a`, `c${n}b`, `c${n}c`];
    expect(await step(dir, decisionsFile, [batchOf(1, b(1))])).toBeUndefined();
    // Listed again (a concurrent sibling's hook), and batch 3 before batch 2: neither is reduced.
    expect(await step(dir, decisionsFile, [batchOf(1, b(1)), batchOf(3, b(3))])).toBeUndefined();
    expect(count(decisionsFile)).toBe(1);
    // Batch 2 with a call the host has no outcome for yet, and none recorded: it waits.
    expect(await step(dir, decisionsFile, [batchOf(2, b(2), [...b(2).slice(0, 2).map(fail), { ...fail(`c2c`), outcome: undefined }])])).toBeUndefined();
    expect(count(decisionsFile)).toBe(1);
    expect(await step(dir, decisionsFile, [batchOf(1, b(1)), batchOf(2, b(2))])).toBeUndefined();
    expect(await step(dir, decisionsFile, [batchOf(3, b(3)), start('c4a')])).toEqual({ on: 'call_started', action: 'remind' });
    // Batch 4 settles at the next call's start: the stop, and that call is denied with it.
    expect(await step(dir, decisionsFile, [batchOf(4, b(4)), start('c5a')])).toEqual({ on: 'call_started', action: 'stop' });
    expect(await step(dir, decisionsFile, [start('c5b')])).toEqual({ on: 'call_started', action: 'deny_call' });
    const decisions = readFileSync(decisionsFile, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { batch: number; decision: string }));
    expect(decisions.map((d) => `${d.batch}:${d.decision}`)).toEqual(['1:tracked', '2:tracked', '3:warned', '4:stopped']);
  });
});

import { execFile } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { codexHookSettingsText, runCodexHook } from '../src/cli/commands/codex-hook.js';
import { REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_TEXT } from '../src/core/failure/reducer.js';
import type { GuardMode } from '../src/core/failure/types.js';
import { REPETITION_ABORT_TEXT } from '../src/core/repetition/reducer.js';
import { readTranscriptTail } from '../src/hooks/codex/codex-adapter.js';
import { parseCodexHookInput } from '../src/hooks/codex/hook-input.js';
import { turnResponses } from '../src/hooks/codex/transcript.js';

const run = promisify(execFile);
const CLI = resolve('dist/bin/repeated-tool-failure-guard.js');

/**
 * Transcript lines and hook inputs shaped like the ones Codex 0.169.0 writes and sends
 * (fixtures/codex-0.169.0/*.transcript.jsonl and *.hooks.jsonl, reduced there to these fields).
 */
const T = {
  turn: (turn: string) => JSON.stringify({ type: 'event_msg', payload: { type: 'task_started', turn_id: turn } }),
  call: (id: string, name = 'exec_command', namespace?: string) =>
    JSON.stringify({ type: 'response_item', payload: { type: 'function_call', name, ...(namespace ? { namespace } : {}), arguments: '{"cmd":"ls /x"}', call_id: id } }),
  end: () => JSON.stringify({ type: 'token_usage_record', payload: { response_id: 'resp_1' } }),
  exec: (id: string, exit: number) =>
    JSON.stringify({ type: 'event_msg', payload: { type: 'item_completed', item: { type: 'CommandExecution', id, status: exit === 0 ? 'completed' : 'failed', exit_code: exit, aggregated_output: 'ls: cannot access' } } }),
  mcp: (id: string, how: 'ok' | 'isError' | 'error') =>
    JSON.stringify({
      type: 'event_msg',
      payload: {
        type: 'item_completed',
        item: { type: 'McpToolCall', id, server: 'ops', tool: 'deploy', status: how === 'ok' ? 'completed' : 'failed', ...(how === 'error' ? { error: { message: 'timed out' } } : { result: { content: [], isError: how === 'isError' } }) },
      },
    }),
  output: (id: string) => JSON.stringify({ type: 'response_item', payload: { type: 'function_call_output', call_id: id, output: 'Process exited with code 2' } }),
};

const hook = (event: string, turn: string, transcript: string, extra: Record<string, unknown> = {}) => ({
  session_id: 'thread-1',
  turn_id: turn,
  transcript_path: transcript,
  cwd: '/home/u/work',
  hook_event_name: event,
  model: 'gpt-5.1-codex',
  permission_mode: 'bypassPermissions',
  ...extra,
});
const pre = (turn: string, transcript: string, id: string, tool = 'Bash', input: unknown = { command: `ls /x-${id}` }) =>
  hook('PreToolUse', turn, transcript, { tool_name: tool, tool_input: input, tool_use_id: id });
const post = (turn: string, transcript: string, id: string, tool = 'Bash') =>
  hook('PostToolUse', turn, transcript, { tool_name: tool, tool_input: { command: `ls /x-${id}` }, tool_response: 'ls: cannot access', tool_use_id: id });

/** A session driver: appends transcript lines, runs the hook in process, collects outputs and decisions. */
function session(mode: GuardMode) {
  const dir = mkdtempSync(join(tmpdir(), 'rtfg-codex-hook-'));
  const transcript = join(dir, 'rollout.jsonl');
  const decisions = join(dir, 'decisions.jsonl');
  writeFileSync(transcript, '');
  writeFileSync(decisions, '');
  let now = 1_000_000;
  const outputs: (Record<string, unknown> | undefined)[] = [];
  return {
    transcript,
    write: (...lines: string[]) => appendFileSync(transcript, lines.map((l) => `${l}\n`).join('')),
    async fire(input: Record<string, unknown>) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCodexHook(JSON.stringify(input), { mode, stateDir: join(dir, 'state'), decisionsFile: decisions }, { out: (l) => out.push(l), err: (l) => err.push(l) }, {}, () => (now += 10));
      expect(code).toBe(0);
      expect(err).toEqual([]);
      const o = out.length === 0 ? undefined : (JSON.parse(out.join('')) as Record<string, unknown>);
      outputs.push(o);
      return o;
    },
    decisions: () =>
      readFileSync(decisions, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .map((d) => `${d.batch}:${String(d.decision)}${d.resetReason ? `:${String(d.resetReason)}` : ''}(${String(d.failureCountBucket)},${String(d.batchCountBucket)})#${String(d.candidateOrdinal)}`),
    outputs,
  };
}

/** One response of `n` shell calls that exit `exit`, as Codex 0.169 orders it: calls, end, Pre hooks, items, Post hooks, outputs. */
async function shellBatch(s: ReturnType<typeof session>, turn: string, round: number, n: number, exit: number) {
  const ids = Array.from({ length: n }, (_, i) => `call_${round}_${i}`);
  s.write(...ids.map((id) => T.call(id)), T.end());
  for (const id of ids) await s.fire(pre(turn, s.transcript, id));
  const outs: (Record<string, unknown> | undefined)[] = [];
  for (const id of ids) {
    s.write(T.exec(id, exit));
    outs.push(await s.fire(post(turn, s.transcript, id)));
  }
  s.write(...ids.map((id) => T.output(id)));
  return outs;
}

const one = (...lines: string[]) => turnResponses([T.turn('t1'), ...lines].join('\n'), 't1');

describe('the transcript of one turn (structured fields only)', () => {
  it.each([
    ['exit 2', T.exec('c1', 2), { kind: 'failure', failureClass: 'exit_2' }],
    ['exit 0', T.exec('c1', 0), { kind: 'success' }],
    ['exit 300 (no class)', T.exec('c1', 300), { kind: 'untyped' }],
    ['MCP isError', T.mcp('c1', 'isError'), { kind: 'failure', failureClass: 'mcp_tool_error' }],
    ['MCP request error', T.mcp('c1', 'error'), { kind: 'failure', failureClass: 'mcp_request_error' }],
    ['MCP success', T.mcp('c1', 'ok'), { kind: 'success' }],
    ['no item', T.output('c1'), undefined],
    ['a line cut short', T.exec('c1', 2).slice(0, 40), undefined],
  ])('%s', (_name, line, item) => {
    expect(one(T.call('c1'), T.end(), line)?.[0]?.calls[0]?.item).toEqual(item);
  });

  it('responses split at token_usage_record; MCP names are namespaced; other turns are not read', () => {
    const text = [T.turn('t0'), T.call('old'), T.end(), T.turn('t1'), T.call('a'), T.call('b', 'deploy', 'mcp__ops'), T.end(), T.output('a'), T.call('c')].join('\n');
    expect(turnResponses(text, 't1')).toEqual([
      {
        calls: [
          { callId: 'a', toolName: 'exec_command', item: undefined, output: true },
          { callId: 'b', toolName: 'mcp__ops__deploy', item: undefined, output: false },
        ],
        ended: true,
        overflow: false,
      },
      { calls: [{ callId: 'c', toolName: 'exec_command', item: undefined, output: false }], ended: false, overflow: false },
    ]);
    expect(turnResponses(text, 't9')).toBeUndefined();
  });

  it('keeps no text: ids, tool names and closed classes only', () => {
    expect(JSON.stringify(one(T.call('c1'), T.exec('c1', 2), T.output('c1'), T.call('c2', 'deploy', 'mcp__ops'), T.mcp('c2', 'error')))).not.toMatch(/ls \/x|cannot access|timed out|exited/);
  });

  it('reads the tail holding the turn, whole lines only; a missing file gives none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-codex-transcript-'));
    const file = join(dir, 'rollout.jsonl');
    // Earlier turns far larger than the first tail read.
    const filler = `${JSON.stringify({ type: 'response_item', payload: { type: 'message', content: 'x'.repeat(1024) } })}\n`;
    writeFileSync(file, `${T.turn('t0')}\n${filler.repeat(600)}${T.turn('t1')}\n${filler.repeat(300)}${T.call('c1')}\n${T.end()}\n`);
    const text = await readTranscriptTail(file, 't1');
    expect(text?.startsWith('{')).toBe(true);
    expect(turnResponses(text ?? '', 't1')?.[0]?.calls.map((c) => c.callId)).toEqual(['c1']);
    expect(await readTranscriptTail(join(dir, 'missing.jsonl'), 't1')).toBeUndefined();
  });
});

describe('codex-hook on Codex 0.169 hook sequences', () => {
  it('enforce: a shell exit loop gets the reminder on batch 3, the stop text on batch 4, then every call is denied', async () => {
    const s = session('enforce');
    s.write(T.turn('turn-1'));
    await s.fire(hook('UserPromptSubmit', 'turn-1', s.transcript, { prompt: 'find the config' }));
    const outs = [];
    for (const r of [1, 2, 3, 4]) outs.push(await shellBatch(s, 'turn-1', r, 3, 2));
    expect(s.decisions()).toEqual(['1:tracked(3-4,1)#1', '2:tracked(5-7,2)#1', '3:warned(8+,3+)#1', '4:stopped(8+,3+)#1']);
    // The action rides the batch's last PostToolUse, after every sibling settled.
    expect(outs[0]).toEqual([undefined, undefined, undefined]);
    expect(outs[2]).toEqual([undefined, undefined, { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: REPEATED_TOOL_FAILURE_REMINDER } }]);
    // The output stays whole: the stop text is added context, not continue:false (which in 0.169
    // replaces the output and does not end the turn).
    expect(outs[3]).toEqual([
      undefined,
      undefined,
      { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: REPEATED_TOOL_FAILURE_STOP_TEXT }, systemMessage: REPEATED_TOOL_FAILURE_STOP_TEXT },
    ]);
    // No hook output ends a 0.169 turn: every later call of the turn is denied with the stop text.
    s.write(T.call('after_1'), T.call('after_2'), T.end());
    for (const id of ['after_1', 'after_2']) {
      expect(await s.fire(pre('turn-1', s.transcript, id))).toEqual({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: REPEATED_TOOL_FAILURE_STOP_TEXT },
      });
    }
    s.write(T.output('after_1'), T.output('after_2'));
    await s.fire(hook('Stop', 'turn-1', s.transcript, { stop_hook_active: false }));
    // The denied call never ran (not_started); after the latch no decision follows.
    expect(s.decisions()).toHaveLength(4);
  });

  it('shadow: the same loop gives would_warn and would_stop and prints nothing', async () => {
    const s = session('shadow');
    s.write(T.turn('turn-1'));
    for (const r of [1, 2, 3, 4]) await shellBatch(s, 'turn-1', r, 3, 2);
    s.write(T.call('after_1'), T.end());
    await s.fire(pre('turn-1', s.transcript, 'after_1'));
    expect(s.decisions()).toEqual(['1:tracked(3-4,1)#1', '2:tracked(5-7,2)#1', '3:would_warn(8+,3+)#1', '4:would_stop(8+,3+)#1']);
    expect(s.outputs.every((o) => o === undefined)).toBe(true);
  });

  it('a success of the same tool resets; a new turn_id starts a fresh guard', async () => {
    const s = session('warn');
    s.write(T.turn('turn-1'));
    await shellBatch(s, 'turn-1', 1, 3, 2);
    await shellBatch(s, 'turn-1', 2, 1, 0);
    s.write(T.turn('turn-2'));
    await shellBatch(s, 'turn-2', 3, 2, 2);
    expect(s.decisions()).toEqual(['1:tracked(3-4,1)#1', '2:reset:success(3-4,1)#1', '1:tracked(1-2,1)#1']);
  });

  it('different exit statuses are different keys (mixed in one batch resets)', async () => {
    const s = session('shadow');
    s.write(T.turn('turn-1'));
    await shellBatch(s, 'turn-1', 1, 3, 2);
    s.write(T.call('m1'), T.call('m2'), T.end());
    await s.fire(pre('turn-1', s.transcript, 'm1'));
    await s.fire(pre('turn-1', s.transcript, 'm2'));
    s.write(T.exec('m1', 2), T.exec('m2', 1));
    await s.fire(post('turn-1', s.transcript, 'm1'));
    await s.fire(post('turn-1', s.transcript, 'm2'));
    expect(s.decisions()).toEqual(['1:tracked(3-4,1)#1', '2:reset:mixed(3-4,1)#1']);
  });

  it('MCP failures (no PostToolUse): the reminder goes out on the next PreToolUse, the stop denies the next call', async () => {
    const s = session('enforce');
    s.write(T.turn('turn-1'));
    const outs: (Record<string, unknown> | undefined)[] = [];
    const sizes = [3, 3, 2, 1, 1];
    for (const [r, n] of sizes.entries()) {
      const ids = Array.from({ length: n }, (_, i) => `mcp_${r}_${i}`);
      s.write(...ids.map((id) => T.call(id, 'deploy', 'mcp__ops')), T.end());
      for (const id of ids) outs.push(await s.fire(pre('turn-1', s.transcript, id, 'mcp__ops__deploy', { target: id })));
      s.write(...ids.map((id) => T.mcp(id, 'isError')), ...ids.map((id) => T.output(id)));
    }
    await s.fire(hook('Stop', 'turn-1', s.transcript, { stop_hook_active: false }));
    expect(s.decisions()).toEqual(['1:tracked(3-4,1)#1', '2:tracked(5-7,2)#1', '3:warned(8+,3+)#1', '4:stopped(8+,3+)#1']);
    // Batch 4's PreToolUse (the 9th) carries the reminder; batch 5's (the 10th) is denied with the stop text.
    expect(outs[8]).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: REPEATED_TOOL_FAILURE_REMINDER } });
    expect(outs[9]).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: REPEATED_TOOL_FAILURE_STOP_TEXT },
      systemMessage: REPEATED_TOOL_FAILURE_STOP_TEXT,
    });
    expect(outs.slice(0, 8).every((o) => o === undefined)).toBe(true);
  });

  it('a shell call whose completion item never comes is untyped, never a success (PostToolUse alone proves nothing)', async () => {
    const s = session('enforce');
    s.write(T.turn('turn-1'));
    await shellBatch(s, 'turn-1', 1, 3, 2);
    s.write(T.call('x1'), T.end());
    await s.fire(pre('turn-1', s.transcript, 'x1'));
    expect(await s.fire(post('turn-1', s.transcript, 'x1'))).toBeUndefined();
    s.write(T.output('x1'));
    await s.fire(hook('Stop', 'turn-1', s.transcript, { stop_hook_active: false }));
    expect(s.decisions()).toEqual(['1:tracked(3-4,1)#1', '2:reset:unknown(3-4,1)#1']);
  });

  it('a session whose transcript moves to a new file reads the new file', async () => {
    const s = session('shadow');
    s.write(T.turn('turn-1'));
    await shellBatch(s, 'turn-1', 1, 3, 2);
    const other = join(mkdtempSync(join(tmpdir(), 'rtfg-codex-moved-')), 'rollout-2.jsonl');
    writeFileSync(other, [T.turn('turn-2'), T.call('n1'), T.end(), T.exec('n1', 2)].map((l) => `${l}\n`).join(''));
    await s.fire(pre('turn-2', other, 'n1'));
    await s.fire(post('turn-2', other, 'n1'));
    expect(s.decisions()).toEqual(['1:tracked(3-4,1)#1', '1:tracked(1-2,1)#1']);
  });

  it('a rejected call (only an output) is untyped: it resets once and disables enforcement', async () => {
    const s = session('shadow');
    s.write(T.turn('turn-1'), T.call('v1', 'view_image'), T.end(), T.output('v1'));
    await s.fire(hook('Stop', 'turn-1', s.transcript, { stop_hook_active: false }));
    expect(s.decisions()).toEqual(['1:reset:unknown(0,0)#0']);
  });
});

describe('codex-hook: the identical-call breaker from PreToolUse', () => {
  it('enforce: warns at the 3rd identical call, denies the 5th, then denies every later call of the turn', async () => {
    const s = session('enforce');
    s.write(T.turn('turn-1'));
    const outs: (Record<string, unknown> | undefined)[] = [];
    for (let r = 1; r <= 6; r++) {
      const id = `same_${r}`;
      s.write(T.call(id), T.end());
      outs.push(await s.fire(pre('turn-1', s.transcript, id, 'Bash', { command: 'ls /same' })));
      if (r < 5) {
        s.write(T.exec(id, 0));
        await s.fire(post('turn-1', s.transcript, id));
      }
      s.write(T.output(id));
    }
    const context = (outs[2] as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput;
    expect(context.additionalContext).toMatch(/identical/i);
    expect(outs[4]).toMatchObject({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny' } });
    // The batch of the denied call is stopped: the 6th call never runs.
    expect(outs[5]).toMatchObject({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: REPETITION_ABORT_TEXT } });
    // Succeeding calls and a call that never ran give the failure guard nothing to count.
    expect(s.decisions().filter((d) => !d.includes('reset'))).toEqual([]);
  });

  it('the tool input is hashed in memory only: the state file holds no part of it', async () => {
    const s = session('shadow');
    s.write(T.turn('turn-1'), T.call('c1'), T.end());
    await s.fire(pre('turn-1', s.transcript, 'c1', 'Bash', { command: 'cat /secret-marker-path' }));
    const dir = join(s.transcript, '..', 'state');
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), 'utf8')).not.toMatch(/secret-marker|cat \//);
  });
});

describe('codex-hook on the recorded hook inputs of the real Codex 0.169.0 runs', () => {
  const FIXTURES = 'fixtures/codex-0.169.0';
  const SCENARIOS = 'conformance/codex/scenarios';
  interface Scenario {
    name: string;
    mode: GuardMode;
    expectedDecisions: Record<string, unknown>[] | null;
    expectedHookDecisions?: Record<string, unknown>[] | null;
  }
  const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const scenarios = readdirSync(SCENARIOS)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(SCENARIOS, f), 'utf8')) as Scenario)
    .filter((sc) => existsSync(join(FIXTURES, `${sc.name}.hooks.jsonl`)));

  it('covers every scenario: each runs the telemetry and the hook path', () => {
    expect(scenarios.length).toBe(readdirSync(SCENARIOS).filter((f) => f.endsWith('.json')).length);
    expect(scenarios.length).toBeGreaterThanOrEqual(10);
  });

  it.each(scenarios)('$name: the decisions the scenario states, with the transcript as it stood at each hook', async (sc) => {
    const hooks = lines(join(FIXTURES, `${sc.name}.hooks.jsonl`)).map((l) => JSON.parse(l) as { transcriptLines: number; input: Record<string, unknown> });
    const transcript = lines(join(FIXTURES, `${sc.name}.transcript.jsonl`));
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-codex-fixture-'));
    const file = join(dir, 'rollout.jsonl');
    const decisions = join(dir, 'decisions.jsonl');
    writeFileSync(decisions, '');
    let now = 1_000_000;
    for (const h of hooks) {
      writeFileSync(file, transcript.slice(0, h.transcriptLines).map((l) => `${l}\n`).join(''));
      // The capture keeps a digest of each tool input (never the input): the breaker hashes that.
      const input = { ...h.input, transcript_path: file, ...(h.input.hook_event_name === 'PreToolUse' ? { tool_input: { digest: h.input.tool_input_digest } } : {}) };
      expect(await runCodexHook(JSON.stringify(input), { mode: sc.mode, stateDir: join(dir, 'state'), decisionsFile: decisions }, { out: () => undefined, err: () => undefined }, {}, () => (now += 10))).toBe(0);
    }
    const turns = [...new Set(hooks.map((h) => String(h.input.turn_id)))];
    const ours = lines(decisions)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .map(({ promptId, guard: _guard, ...rest }) => ({ prompt: turns.indexOf(String(promptId)) + 1, ...rest }));
    const expected = sc.expectedHookDecisions === undefined ? sc.expectedDecisions : sc.expectedHookDecisions;
    if (expected !== null) expect(ours).toEqual(expected.map((d) => ({ mode: sc.mode, ...d })));
  });
});

describe('codex-hook input and failure handling', () => {
  it.each([
    ['not JSON', 'not json', 'stdin is not a JSON hook input'],
    ['no turn_id', JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 's', tool_name: 'Bash', tool_use_id: 'c' }), ''],
    ['an event not registered', JSON.stringify({ hook_event_name: 'SessionStart', session_id: 's', turn_id: 't' }), ''],
  ])('%s: exit 0, nothing on stdout', async (_name, stdin, errText) => {
    const out: string[] = [];
    const err: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'rtfg-codex-hook-'));
    expect(await runCodexHook(stdin, { mode: 'enforce', stateDir: dir }, { out: (l) => out.push(l), err: (l) => err.push(l) }, {})).toBe(0);
    expect(out).toEqual([]);
    expect(err.join('')).toContain(errText);
  });

  it('subagent inputs are out of scope', () => {
    expect(parseCodexHookInput({ ...pre('t', '/x', 'c1'), agent_id: 'a1' })).toBeUndefined();
    expect(parseCodexHookInput(pre('t', '/x', 'c1'))?.at(-1)?.type).toBe('call_started');
  });

  it('--print-settings prints the four events with absolute paths, from any directory (config.toml and hooks.json)', async () => {
    const command = `'${process.execPath}' '${CLI}' codex-hook --mode warn`;
    const toml = await run(process.execPath, [CLI, 'codex-hook', '--mode', 'warn', '--print-settings'], { cwd: tmpdir() });
    for (const e of ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']) expect(toml.stdout).toContain(`[[hooks.${e}]]`);
    expect(toml.stdout).toContain(`command = ${JSON.stringify(command)}`);
    expect(toml.stdout.match(/matcher = "\*"/g)).toHaveLength(2);
    const json = await run(process.execPath, [CLI, 'codex-hook', '--print-settings', 'json', '--mode', 'warn'], { cwd: tmpdir() });
    const hooks = (JSON.parse(json.stdout) as { hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]> }).hooks;
    expect(Object.keys(hooks)).toEqual(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']);
    for (const groups of Object.values(hooks)) expect(groups[0]?.hooks[0]?.command).toBe(command);
    expect(codexHookSettingsText('toml', undefined, CLI)).not.toContain('--mode');
  });

  it('a usage error never exits 2 (Codex would block the call)', async () => {
    const r = await run(process.execPath, [CLI, 'codex-hook', '--mode'], { cwd: tmpdir() }).catch((e: { code: number; stderr: string }) => e);
    expect('code' in r ? r.code : 0).toBe(0);
  });
});

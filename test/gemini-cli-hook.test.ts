import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runGeminiCliHook } from '../src/cli/commands/gemini-cli-hook.js';
import type { GuardMode } from '../src/core/failure/types.js';
import { GeminiTranscript, isRefused, refused } from './helpers/gemini-transcript.js';
import type { RefusedCall } from './helpers/gemini-transcript.js';

/**
 * The gemini-cli hook on sequences of hook inputs shaped as gemini-cli 0.61.0 sends them (the
 * conformance captures): no prompt id, no call id; BeforeTool for every call of a group before any
 * AfterTool; BeforeModel before each model request. Expected decisions and outputs from the design.
 */
const SESSION = '6f1c2d3e-aaaa-bbbb-cccc-000000000001';
/** The design's fixed texts. */
const REMINDER_TEXT =
  'System: the same tool execution has failed repeatedly for the same classified reason. Do not repeat the same approach. ' +
  'Inspect the returned result, change the approach or required preconditions, or explain the blocker.';
const STOP_TEXT =
  'System: Automatic continuation stopped because the same tool execution failure continued after a corrective reminder. ' +
  'New user input is required to continue.';
let t = Date.parse('2026-12-02T05:00:00.000Z');
const base = (event: string) => ({ session_id: SESSION, transcript_path: '/home/u/.gemini/tmp/x/chats/s.jsonl', cwd: '/work/secret-project', hook_event_name: event, timestamp: new Date((t += 7)).toISOString() });
const beforeAgent = () => ({ ...base('BeforeAgent'), prompt: 'fix /work/secret-project/config.yaml' });
const beforeModel = () => ({ ...base('BeforeModel'), llm_request: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'secret' }] } });
const beforeTool = (path: string, tool = 'read_file') => ({ ...base('BeforeTool'), tool_name: tool, tool_input: { file_path: path } });
const afterTool = (path: string, errorType?: string, tool = 'read_file') => ({
  ...base('AfterTool'),
  tool_name: tool,
  tool_input: { file_path: path },
  tool_response: errorType === undefined
    ? { llmContent: 'contents of the secret file', returnDisplay: 'ok' }
    : { llmContent: 'Could not read file', returnDisplay: 'File not found.', error: { message: `File not found: ${path}`, type: errorType } },
});

/** One model batch of `n` calls failing with `errorType` (`null`: succeeding). */
function batch(round: number, n: number, errorType: string | null = 'file_not_found'): object[] {
  const paths = Array.from({ length: n }, (_, i) => `/work/secret-project/missing-${round}-${i}.txt`);
  return [beforeModel(), ...paths.map((p) => beforeTool(p)), ...paths.map((p) => afterTool(p, errorType ?? undefined))];
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * Sends each step to the hook as gemini-cli would: the session transcript written first (see
 * helpers/gemini-transcript.ts), every input naming it. A refused call fires no hook, or only its
 * BeforeTool.
 */
async function run(steps: readonly (object | RefusedCall)[], mode: GuardMode, options: { transcript?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'rtfg-gemini-hook-'));
  dirs.push(dir);
  const decisionsFile = join(dir, 'decisions.jsonl');
  const transcript = new GeminiTranscript(join(dir, 'session.jsonl'), SESSION);
  const outputs: unknown[] = [];
  const errors: string[] = [];
  const send = async (input: object) => {
    transcript.observe(input);
    const withPath = options.transcript === false || !('transcript_path' in input) ? input : { ...input, transcript_path: transcript.path };
    const out: string[] = [];
    const code = await runGeminiCliHook(JSON.stringify(withPath), { mode, stateDir: join(dir, 'state'), decisionsFile }, { out: (l) => out.push(l), err: (l) => errors.push(l) }, {});
    expect(code).toBe(0);
    expect(out).toHaveLength(1);
    outputs.push(JSON.parse(out[0] as string));
  };
  for (const step of steps) {
    if (!isRefused(step)) await send(step);
    else {
      if (step.hooks === 'beforeTool') await send(beforeTool('/work/secret-project/denied.txt', step.tool));
      transcript.observe(step);
    }
  }
  if (options.transcript !== false) expect(errors).toEqual([]);
  let decisions: Record<string, unknown>[] = [];
  try {
    decisions = readFileSync(decisionsFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    // no decision
  }
  const compact = decisions.map((d) => `${d.promptId === SESSION ? '' : `${String(d.promptId).slice(SESSION.length)}:`}b${d.batch}:${d.decision}${d.resetReason ? `:${d.resetReason}` : ''}(${d.failureCountBucket},${d.batchCountBucket})#${d.candidateOrdinal}`);
  const stateDir = join(dir, 'state');
  const stateText = existsSync(stateDir) ? readdirSync(stateDir).map((f) => readFileSync(join(stateDir, f), 'utf8')).join('\n') : '';
  return { outputs, compact, stateText, errors };
}

const LOOP = (rounds: number, n = 2) => [beforeAgent(), ...Array.from({ length: rounds }, (_, r) => batch(r + 1, n)).flat(), beforeModel()];

describe('gemini-cli-hook', () => {
  it('shadow: the design\'s decisions at each BeforeModel, and `{}` on every event', async () => {
    const r = await run(LOOP(6), 'shadow');
    expect(r.compact).toEqual(['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1', 'b4:would_warn(8+,3+)#1', 'b5:would_stop(8+,3+)#1']);
    expect(r.outputs.every((o) => JSON.stringify(o) === '{}')).toBe(true);
  });

  it('enforce: the reminder once, on the warned batch\'s last AfterTool; the stop at the BeforeModel after the next matching batch', async () => {
    const inputs = LOOP(6);
    const r = await run(inputs, 'enforce');
    expect(r.compact).toEqual(['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1', 'b4:warned(8+,3+)#1', 'b5:stopped(8+,3+)#1']);
    const acted = r.outputs.map((o, i) => [i, o] as const).filter(([, o]) => JSON.stringify(o) !== '{}');
    // inputs: 0 BeforeAgent, then 5 events a round (BeforeModel, 2 BeforeTool, 2 AfterTool): round 4's last AfterTool is 1 + 3*5 + 4 = 20.
    expect(acted).toEqual([
      [20, { decision: 'block', reason: REMINDER_TEXT }],
      [26, { continue: false, stopReason: STOP_TEXT, systemMessage: STOP_TEXT }],
    ]);
  });

  it('warn: the reminder, and never a stop', async () => {
    const r = await run(LOOP(6), 'warn');
    expect(r.compact).toEqual(['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1', 'b4:warned(8+,3+)#1', 'b5:would_stop(8+,3+)#1']);
    expect(r.outputs.filter((o) => JSON.stringify(o) !== '{}')).toEqual([{ decision: 'block', reason: REMINDER_TEXT }]);
  });

  it('a reminder on a batch whose last call succeeded goes out as additionalContext', async () => {
    const inputs = [
      beforeAgent(),
      ...batch(1, 3),
      ...batch(2, 3),
      beforeModel(),
      ...['/a', '/b'].map((p) => beforeTool(p)),
      beforeTool('/c', 'list_directory'),
      ...['/a', '/b'].map((p) => afterTool(p, 'file_not_found')),
      afterTool('/c', undefined, 'list_directory'),
      beforeModel(),
    ];
    const r = await run(inputs, 'warn');
    expect(r.compact).toEqual(['b1:tracked(3-4,1)#1', 'b2:tracked(5-7,2)#1', 'b3:warned(8+,3+)#1']);
    expect(r.outputs.filter((o) => JSON.stringify(o) !== '{}')).toEqual([{ hookSpecificOutput: { hookEventName: 'AfterTool', additionalContext: REMINDER_TEXT } }]);
  });

  it('a new prompt (BeforeAgent) starts a fresh guard, named <session>/2', async () => {
    const r = await run([...LOOP(3), ...LOOP(2)], 'shadow');
    expect(r.compact).toEqual(['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:tracked(5-7,3+)#1', '/2:b1:tracked(1-2,1)#1', '/2:b2:tracked(3-4,2)#1']);
  });

  it('a model request with no call before it is no batch; a same-tool success resets', async () => {
    const inputs = [beforeAgent(), beforeModel(), ...batch(1, 2), ...batch(2, 2), ...batch(3, 1, null), beforeModel()];
    const r = await run(inputs, 'shadow');
    expect(r.compact).toEqual(['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:reset:success(3-4,2)#1']);
  });

  it('keeps nothing of the tool input, result, paths or error text in its state', async () => {
    const r = await run(LOOP(6), 'enforce');
    for (const secret of ['secret', 'missing-', 'File not found', 'Could not read', '/work/', 'gemini-2.5-flash']) expect(r.stateText).not.toContain(secret);
  });

  it('answers `{}` to input it cannot read, and to events it does not use', async () => {
    const r = await run([{ hook_event_name: 'BeforeTool' }, { ...base('SessionStart'), source: 'startup' }, { ...base('AfterModel') }], 'enforce');
    expect(r.outputs).toEqual([{}, {}, {}]);
  });
});

/**
 * Every way gemini-cli 0.61.0 refuses a call before it runs, as the real CLI shows it (conformance
 * `validation-errors-shadow`, and its scheduler: `BeforeTool` fires after validation and before the
 * policy check, `AfterTool` only for a call that ran): no hook sees the call, or only its
 * `BeforeTool`; the transcript lists it (`error`, or `cancelled` for a user's rejection). The design
 * (step 3): a batch holding a not-started or cancelled call resets; it is never judged without it.
 * Each row follows two batches of two failing `read_file` calls (`tracked(1-2,1)`, `tracked(3-4,2)`).
 */
describe('gemini-cli-hook: calls gemini-cli refuses before they run', () => {
  const a = '/work/secret-project/a.txt';
  const TWO_FAILING = [beforeAgent(), ...batch(1, 2), ...batch(2, 2)];
  const FAILING_NEXT = [...batch(4, 2), beforeModel()];
  /**
   * `reminders`: reminders sent in enforce. The reminder goes out on the batch's last AfterTool,
   * before gemini-cli lists the calls it refused (the transcript has them at the next model request
   * only): a batch that reached the threshold gets it, and then resets without a stop.
   */
  const rows: { name: string; batch3: (object | RefusedCall)[]; expected: string[]; reminders?: number }[] = [
    {
      name: 'none: the batch of one failure alone advances (the baseline)',
      batch3: [beforeModel(), beforeTool(a), afterTool(a, 'file_not_found')],
      expected: ['b3:tracked(5-7,3+)#1', 'b4:tracked(5-7,3+)#1'],
    },
    {
      name: 'invalid arguments (invalid_tool_params: no hook fires) beside a failure',
      batch3: [beforeModel(), beforeTool(a), refused('read_file', 'error', 'none'), afterTool(a, 'file_not_found')],
      expected: ['b3:reset:not_started(3-4,2)#1', 'b4:tracked(1-2,1)#2'],
    },
    {
      name: 'an unknown tool (tool_not_registered: no hook fires) alone',
      batch3: [beforeModel(), refused('read_fil', 'error', 'none')],
      expected: ['b3:reset:not_started(3-4,2)#1', 'b4:tracked(1-2,1)#2'],
    },
    {
      name: "a policy or another hook's denial (policy_violation: BeforeTool, no AfterTool) beside a failure",
      batch3: [beforeModel(), beforeTool(a), refused('run_shell_command', 'error', 'beforeTool'), afterTool(a, 'file_not_found')],
      expected: ['b3:reset:not_started(3-4,2)#1', 'b4:tracked(1-2,1)#2'],
    },
    {
      name: "a user's rejection (BeforeTool, no AfterTool; cancelled) beside a failure",
      batch3: [beforeModel(), beforeTool(a), refused('write_file', 'cancelled', 'beforeTool'), afterTool(a, 'file_not_found')],
      expected: ['b3:reset:cancelled(3-4,2)#1', 'b4:tracked(1-2,1)#2'],
    },
    {
      name: 'a refused call of the same tool as the failures, in the warned batch',
      batch3: [beforeModel(), ...batch(3, 4).slice(1), refused('read_file', 'error', 'none')],
      expected: ['b3:reset:not_started(3-4,2)#1', 'b4:tracked(1-2,1)#2'],
      reminders: 1,
    },
  ];

  it.each(rows)('$name', async ({ batch3, expected, reminders = 0 }) => {
    for (const mode of ['shadow', 'enforce'] as const) {
      const r = await run([...TWO_FAILING, ...batch3, ...FAILING_NEXT], mode);
      expect(r.compact).toEqual(['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', ...expected]);
      // Never a stop, and nothing of the refused calls' arguments, results or texts kept.
      expect(r.outputs.some((o) => (o as { continue?: unknown }).continue === false)).toBe(false);
      expect(r.outputs.filter((o) => JSON.stringify(o).includes(REMINDER_TEXT))).toHaveLength(mode === 'enforce' ? reminders : 0);
      for (const secret of ['secret', 'File not found', 'denied.txt']) expect(r.stateText).not.toContain(secret);
    }
  });

  it('a batch of only refused calls while idle is a batch: counted, no decision', async () => {
    const r = await run([beforeAgent(), beforeModel(), refused('read_fil', 'error', 'none'), ...batch(2, 2), ...batch(3, 2), beforeModel()], 'shadow');
    expect(r.compact).toEqual(['b2:tracked(1-2,1)#1', 'b3:tracked(3-4,2)#1']);
  });

  it('a transcript that cannot be read: every batch incomplete (never a warning or a stop), and said on stderr', async () => {
    const r = await run(LOOP(6), 'enforce', { transcript: false });
    expect(r.compact).toEqual([]);
    expect(r.outputs.every((o) => JSON.stringify(o) === '{}')).toBe(true);
    expect(r.errors.some((e) => /record of the model's calls is unreadable \(no record\)/.test(e))).toBe(true);
  });
});

/**
 * `--print-settings` as a user runs it: the printed command names this Node and the hook's own
 * entry by absolute paths, and run by a shell from an unrelated directory (as gemini-cli runs hooks
 * in the project's), it answers a hook input.
 */
describe('gemini-cli-hook --print-settings', () => {
  it('prints one command for the five events, which answers from any directory', () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const elsewhere = mkdtempSync(join(tmpdir(), 'rtfg-gemini-print-'));
    dirs.push(elsewhere);
    const printed = spawnSync(process.execPath, [join(root, 'dist/bin/repeated-tool-failure-guard.js'), 'gemini-cli-hook', '--print-settings', '--mode', 'enforce'], { cwd: elsewhere, encoding: 'utf8' });
    expect(printed.status).toBe(0);
    const hooks = (JSON.parse(printed.stdout) as { hooks: Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]> }).hooks;
    expect(Object.keys(hooks).sort()).toEqual(['AfterAgent', 'AfterTool', 'BeforeAgent', 'BeforeModel', 'BeforeTool']);
    const commands = new Set(Object.values(hooks).map((h) => h[0]?.hooks[0]?.command));
    expect(commands.size).toBe(1);
    const [command] = commands;
    expect(command).toBe(`${process.execPath} ${join(root, 'dist/bin/gemini-cli-hook.cjs')} --mode enforce`);
    const answered = spawnSync('/bin/sh', ['-c', `${command} --state-dir ${join(elsewhere, 'state')}`], { cwd: elsewhere, input: JSON.stringify(beforeTool('/work/secret-project/a.txt')), encoding: 'utf8' });
    expect(answered.status).toBe(0);
    expect(JSON.parse(answered.stdout)).toEqual({});
  });
});

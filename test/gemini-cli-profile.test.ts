import { describe, expect, it } from 'vitest';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { replayRecords } from '../src/replay/replay.js';
import { decisionLine } from '../src/report/text.js';
import { GEMINI_CLI_TOOL_ERROR_TYPES, geminiCliOutcome } from '../src/profiles/gemini-cli/tool-error-types.js';
import { promptKeyOf } from '../src/profiles/gemini-cli/gemini-cli-profile.js';
import type { GuardMode } from '../src/core/failure/types.js';

/**
 * gemini-cli 0.61.0 log records in the telemetry outfile's shape (as the conformance captures
 * show them): scope and `service.name` `gemini-cli`, `event.name` attribute, a `tool_call` log's
 * span context = the `schedule_tool_calls` span of its batch. Expected decisions come from the
 * design's state machine.
 */
type Call = { tool?: string; ok?: true; errorType?: string; decision?: string; type?: 'native' | 'mcp' };
type Step =
  | { prompt: string }
  | { api: string; role?: string }
  | { batch: Call[]; prompt: string; span?: string | null }
  | { loop: number; prompt?: string };

const SESSION = 'sess-1';

function outfile(steps: readonly Step[]): string {
  let t = 1_800_000_000_000;
  let span = 0;
  const out: unknown[] = [];
  const log = (attrs: Record<string, unknown>, spanId?: string | null) => {
    t += 10;
    out.push({
      hrTime: [Math.floor(t / 1000), (t % 1000) * 1e6],
      ...(spanId === null ? {} : { spanContext: { traceId: 'a'.repeat(32), spanId: spanId ?? 'c'.repeat(16), traceFlags: 1 } }),
      attributes: { 'session.id': SESSION, interactive: false, ...attrs },
      resource: { _rawAttributes: [['service.name', 'gemini-cli']] },
      instrumentationScope: { name: 'gemini-cli' },
    });
  };
  for (const s of steps) {
    if ('batch' in s) {
      const spanId = s.span === null ? null : (s.span ?? (++span).toString(16).padStart(16, '0'));
      for (const c of s.batch) {
        log(
          {
            'event.name': 'gemini_cli.tool_call',
            function_name: c.tool ?? 'read_file',
            success: c.ok === true,
            decision: c.decision ?? 'accept',
            prompt_id: s.prompt,
            tool_type: c.type ?? 'native',
            ...(c.ok ? {} : { error: 'x', error_type: c.errorType ?? 'file_not_found', 'error.type': c.errorType ?? 'file_not_found' }),
          },
          spanId,
        );
      }
    } else if ('api' in s) log({ 'event.name': 'gemini_cli.api_request', prompt_id: s.api, role: s.role ?? 'main' }, 'd'.repeat(16));
    else if ('loop' in s) log({ 'event.name': 'loop_detected', loop_type: 'consecutive_identical_tool_calls', prompt_id: s.prompt ?? '', count: s.loop });
    else log({ 'event.name': 'gemini_cli.user_prompt', prompt_id: s.prompt, prompt_length: 3 });
  }
  return out.map((o) => JSON.stringify(o)).join('\n');
}

async function decide(steps: readonly Step[], mode: GuardMode = 'shadow'): Promise<string[]> {
  const records = parseTelemetryText(outfile(steps), 'test.json');
  const r = await replayRecords(records, { mode });
  return r.decisions
    .filter((d) => d.outcome.decision !== 'none')
    .map((d) => decisionLine(d))
    .map((d) => `${d.promptId}/b${d.batch}:${d.decision}${d.resetReason ? `:${d.resetReason}` : ''}(${d.failureCountBucket},${d.batchCountBucket})#${d.candidateOrdinal}`);
}

const FAIL2: Call[] = [{}, {}];
const LOOP5 = ['P/b1:tracked(1-2,1)#1', 'P/b2:tracked(3-4,2)#1', 'P/b3:tracked(5-7,3+)#1', 'P/b4:would_warn(8+,3+)#1', 'P/b5:would_stop(8+,3+)#1'];

describe('gemini-cli outcomes (ToolErrorType of 0.61.0)', () => {
  it('has the 38 values of the enum, lower case', () => {
    expect(GEMINI_CLI_TOOL_ERROR_TYPES).toHaveLength(38);
    for (const t of GEMINI_CLI_TOOL_ERROR_TYPES) expect(t).toMatch(/^[a-z_]+$/);
  });

  it.each([
    { success: true, errorType: undefined, rejected: false, expected: ['success', 'success', undefined] },
    { success: false, errorType: 'file_not_found', rejected: false, expected: ['error', 'error', 'file_not_found'] },
    { success: false, errorType: 'mcp_tool_error', rejected: false, expected: ['error', 'error', 'mcp_tool_error'] },
    { success: false, errorType: 'invalid_tool_params', rejected: false, expected: ['error', 'not_started', undefined] },
    { success: false, errorType: 'tool_not_registered', rejected: false, expected: ['error', 'not_started', undefined] },
    { success: false, errorType: 'policy_violation', rejected: false, expected: ['error', 'not_started', undefined] },
    { success: false, errorType: 'stop_execution', rejected: false, expected: ['error', 'not_started', undefined] },
    { success: false, errorType: 'unknown', rejected: false, expected: ['error', 'unknown', undefined] },
    { success: false, errorType: 'unhandled_exception', rejected: false, expected: ['error', 'unknown', undefined] },
    { success: false, errorType: 'Not A Type', rejected: false, expected: ['error', 'unknown', undefined] },
    { success: false, errorType: undefined, rejected: false, expected: ['error', 'unknown', undefined] },
    { success: false, errorType: undefined, rejected: true, expected: ['cancelled', 'cancelled', undefined] },
  ])('success=$success error_type=$errorType rejected=$rejected', ({ success, errorType, rejected, expected }) => {
    const o = geminiCliOutcome(success, errorType, rejected);
    expect([o.terminalStatus, o.executionStatus, o.errorType]).toEqual(expected);
  });
});

describe('gemini-cli profile', () => {
  it.each<{ desc: string; steps: Step[]; mode?: GuardMode; expected: string[] }>([
    {
      desc: 'batches by the batch span on each tool_call log, without any api_request',
      steps: [{ prompt: 'P' }, ...Array.from({ length: 6 }, () => ({ batch: FAIL2, prompt: 'P' }))],
      expected: LOOP5,
    },
    {
      desc: 'logs without span context: batches between foreground api_request logs',
      steps: [{ prompt: 'P' }, ...Array.from({ length: 6 }, () => [{ api: 'P' }, { batch: FAIL2, prompt: 'P', span: null }]).flat()],
      expected: LOOP5,
    },
    {
      desc: 'a utility request (loop check, router) between two calls of one batch does not split it',
      steps: [
        { prompt: 'P' },
        { api: 'P' },
        { batch: [{}], prompt: 'P', span: 'b1' },
        { api: 'P', role: 'utility_loop_detector' },
        { batch: [{}], prompt: 'P', span: 'b1' },
      ],
      expected: ['P/b1:tracked(1-2,1)#1'],
    },
    {
      desc: "a subagent's calls (api_request role subagent) are out of scope",
      steps: [
        { prompt: 'P' },
        { batch: FAIL2, prompt: 'P' },
        { api: 'P-sub', role: 'subagent' },
        ...Array.from({ length: 5 }, () => ({ batch: FAIL2, prompt: 'P-sub' })),
        { batch: FAIL2, prompt: 'P' },
      ],
      expected: ['P/b1:tracked(1-2,1)#1', 'P/b2:tracked(3-4,2)#1'],
    },
    {
      desc: 'mode enforce: warned, then stopped',
      mode: 'enforce',
      steps: [{ prompt: 'P' }, ...Array.from({ length: 5 }, () => ({ batch: FAIL2, prompt: 'P' }))],
      expected: ['P/b1:tracked(1-2,1)#1', 'P/b2:tracked(3-4,2)#1', 'P/b3:tracked(5-7,3+)#1', 'P/b4:warned(8+,3+)#1', 'P/b5:stopped(8+,3+)#1'],
    },
    {
      desc: "gemini-cli's own loop detection ending the turn (count 2, empty prompt_id): the final batch is not reduced",
      steps: [{ prompt: 'P' }, { batch: FAIL2, prompt: 'P' }, { api: 'P' }, { batch: FAIL2, prompt: 'P' }, { loop: 2 }],
      expected: ['P/b1:tracked(1-2,1)#1'],
    },
    {
      desc: 'a loop-detection nudge (count 1) does not end the turn',
      steps: [{ prompt: 'P' }, { batch: FAIL2, prompt: 'P' }, { api: 'P' }, { batch: FAIL2, prompt: 'P' }, { loop: 1 }],
      expected: ['P/b1:tracked(1-2,1)#1', 'P/b2:tracked(3-4,2)#1'],
    },
    {
      desc: 'a call that never ran (invalid_tool_params) resets; a user rejection resets as cancelled',
      steps: [
        { prompt: 'P' },
        { batch: FAIL2, prompt: 'P' },
        { batch: [{}, { errorType: 'invalid_tool_params', decision: '' }], prompt: 'P' },
        { batch: FAIL2, prompt: 'P' },
        { batch: [{ decision: 'reject' }, {}], prompt: 'P' },
        { batch: FAIL2, prompt: 'P' },
      ],
      expected: ['P/b1:tracked(1-2,1)#1', 'P/b2:reset:not_started(1-2,1)#1', 'P/b3:tracked(1-2,1)#2', 'P/b4:reset:cancelled(1-2,1)#2', 'P/b5:tracked(1-2,1)#3'],
    },
    {
      desc: 'a same-tool success resets, another tool succeeding does not',
      steps: [
        { prompt: 'P' },
        { batch: FAIL2, prompt: 'P' },
        { batch: [{}, { tool: 'list_directory', ok: true }], prompt: 'P' },
        { batch: [{ ok: true }], prompt: 'P' },
      ],
      expected: ['P/b1:tracked(1-2,1)#1', 'P/b2:tracked(3-4,2)#1', 'P/b3:reset:success(3-4,2)#1'],
    },
    {
      desc: 'a shell command logged success (non-zero exit) is a success',
      steps: [{ prompt: 'P' }, ...Array.from({ length: 6 }, () => ({ batch: [{ tool: 'run_shell_command', ok: true as const }], prompt: 'P' }))],
      expected: [],
    },
    {
      desc: 'a second user_prompt under the same id (headless --resume) is a fresh prompt <id>/2',
      steps: [
        { prompt: 'P' },
        ...Array.from({ length: 3 }, () => ({ batch: FAIL2, prompt: 'P' })),
        { prompt: 'P' },
        ...Array.from({ length: 2 }, () => ({ batch: FAIL2, prompt: 'P' })),
      ],
      expected: ['P/b1:tracked(1-2,1)#1', 'P/b2:tracked(3-4,2)#1', 'P/b3:tracked(5-7,3+)#1', 'P/2/b1:tracked(1-2,1)#1', 'P/2/b2:tracked(3-4,2)#1'],
    },
  ])('$desc', async ({ steps, mode, expected }) => {
    expect(await decide(steps, mode)).toEqual(expected);
  });

  it('numbers prompts under one id as the hook command does', () => {
    expect([promptKeyOf('s', 1), promptKeyOf('s', 2), promptKeyOf('s', 3)]).toEqual(['s', 's/2', 's/3']);
  });
});

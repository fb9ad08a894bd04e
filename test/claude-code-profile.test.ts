import { describe, expect, it } from 'vitest';
import { emptyRecordBatch } from '../src/otlp/records.js';
import { detectWireProfiles } from '../src/profiles/registry.js';
import { sampleTelemetry } from '../src/profiles/detect.js';
import type { RecordBatch as Records } from '../src/otlp/records.js';
import { auditInvariants, inputIdentifiers } from '../src/replay/audit.js';
import { CLAUDE_CODE_PROMPT_END_GRACE_MILLIS } from '../src/profiles/claude-code/claude-code-profile.js';
import { failureClassOfErrorType, failureClassOfHookFailure } from '../src/profiles/claude-code/failure-class.js';
import type { GuardMode } from '../src/core/failure/types.js';
import { decide, fail, rounds, Wire } from './helpers/claude-code-wire.js';
import type { Step } from './helpers/claude-code-wire.js';

const detectWireProfile = (r: Records) => detectWireProfiles(sampleTelemetry(r.spans, r.logs))[0] ?? 'qwen-code';

describe('claude-code profile: failure classes', () => {
  it.each([
    ['ShellError', { kind: 'failure', failureClass: 'shell_error' }],
    ['TelemetrySafeError', { kind: 'failure', failureClass: 'tool_error' }],
    ['McpToolCallError', { kind: 'failure', failureClass: 'mcp_error' }],
    ['ProtocolError', { kind: 'failure', failureClass: 'mcp_error' }],
    ['TimeoutError', { kind: 'failure', failureClass: 'timeout' }],
    ['Error:ENOENT', { kind: 'failure', failureClass: 'system_error' }],
    ['SomeBrandNewError', { kind: 'failure', failureClass: 'other' }],
    ['file_not_found', { kind: 'failure', failureClass: 'other' }],
    ['Error', { kind: 'failure', failureClass: 'other' }],
    ['AbortError', { kind: 'cancelled' }],
    ['StreamClosedAbortError', { kind: 'cancelled' }],
    ['UnknownError', { kind: 'unknown' }],
    ['', { kind: 'unknown' }],
    [undefined, { kind: 'unknown' }],
    [42, { kind: 'unknown' }],
  ])('error_type %j → %j', (errorType, expected) => {
    expect(failureClassOfErrorType(errorType)).toEqual(expected);
  });

  it.each([
    ['Bash', false, { kind: 'failure', failureClass: 'shell_error' }],
    ['PowerShell', false, { kind: 'failure', failureClass: 'shell_error' }],
    ['Read', false, { kind: 'failure', failureClass: 'tool_error' }],
    ['mcp__github__create_issue', false, { kind: 'failure', failureClass: 'mcp_error' }],
    ['Bash', true, { kind: 'cancelled' }],
  ])('hook failure of %s (interrupt %s) → %j', (tool, interrupt, expected) => {
    expect(failureClassOfHookFailure(tool, interrupt)).toEqual(expected);
  });
});

describe('claude-code profile: batches, prompts and eligibility from the logs', () => {
  const P = 'p-1';
  const cases: { name: string; steps: Step[]; mode?: GuardMode; want: string[] }[] = [
    {
      name: 'two failing Bash calls a batch: tracked, tracked, tracked, would_warn (8 over ≥2 batches), would_stop',
      steps: [{ prompt: P }, ...rounds(P, [fail(2), fail(2), fail(2), fail(2), fail(2)])],
      want: [`${P}/1:tracked`, `${P}/2:tracked`, `${P}/3:tracked`, `${P}/4:would_warn`, `${P}/5:would_stop`],
    },
    {
      name: 'enforce: warned, then stopped on the next matching batch',
      mode: 'enforce',
      steps: [{ prompt: P }, ...rounds(P, [fail(4), fail(4), fail(1)])],
      want: [`${P}/1:tracked`, `${P}/2:warned`, `${P}/3:stopped`],
    },
    {
      name: 'eight failures in one batch do not warn',
      steps: [{ prompt: P }, ...rounds(P, [fail(8)])],
      want: [`${P}/1:tracked`],
    },
    {
      name: 'a same-tool success resets; an other-tool success does not',
      steps: [{ prompt: P }, ...rounds(P, [fail(3), [{ tool: 'Read', ok: true }], [...fail(3), { tool: 'Read', ok: true }], [{ tool: 'Bash', ok: true }]])],
      want: [`${P}/1:tracked`, `${P}/3:tracked`, `${P}/4:reset:success`],
    },
    {
      name: 'two failure keys in one batch reset as mixed',
      steps: [{ prompt: P }, ...rounds(P, [fail(2), [...fail(1), ...fail(1, 'TelemetrySafeError', 'Read')]])],
      want: [`${P}/1:tracked`, `${P}/2:reset:mixed`],
    },
    {
      name: 'a different class of the same tool starts a new candidate (the class is part of the key)',
      steps: [{ prompt: P }, ...rounds(P, [fail(2), fail(2, 'TimeoutError')])],
      want: [`${P}/1:tracked`, `${P}/2:tracked`],
    },
    {
      name: 'an AbortError (interrupt) resets as cancelled',
      steps: [{ prompt: P }, ...rounds(P, [fail(2), fail(1, 'AbortError')]), { request: 'final', prompt: P }],
      want: [`${P}/1:tracked`, `${P}/2:reset:cancelled`],
    },
    {
      name: 'UnknownError is unclassified: reset unknown',
      steps: [{ prompt: P }, ...rounds(P, [fail(2), fail(1, 'UnknownError')])],
      want: [`${P}/1:tracked`, `${P}/2:reset:unknown`],
    },
    {
      name: 'a rejected call (tool_decision reject, no tool_result) resets as not_started, also as the final batch',
      steps: [{ prompt: P }, ...rounds(P, [fail(2), [{ reject: true }]])],
      want: [`${P}/1:tracked`, `${P}/2:reset:not_started`],
    },
    {
      name: 'subagent requests (query_source agent:…) and auxiliary ones are out of scope, and are no batch boundary',
      steps: [
        { prompt: P },
        { request: 'main1', prompt: P, calls: [{ tool: 'Agent', ok: true }] },
        ...rounds(P, [fail(3), fail(3), fail(3)], 'agent:builtin:general-purpose'),
        { request: 'aux', prompt: P, querySource: 'compact', calls: fail(3) },
        { request: 'main2', prompt: P, calls: fail(1) },
        { request: 'end', prompt: P },
      ],
      want: [`${P}/2:tracked`],
    },
    {
      name: 'interactive main thread (query_source repl_main_thread…) is foreground',
      steps: [{ prompt: P }, ...rounds(P, [fail(4), fail(4)], 'repl_main_thread:outputStyle:custom')],
      want: [`${P}/1:tracked`, `${P}/2:would_warn`],
    },
    {
      name: 'calls logged before their api_request are held and land in their own batch',
      steps: [
        { prompt: P },
        { request: 'r1', prompt: P, calls: fail(2) },
        { request: 'r2', prompt: P, calls: fail(2), callsFirst: true },
        { request: 'r3', prompt: P, calls: fail(4), callsFirst: true },
        { request: 'end', prompt: P },
      ],
      want: [`${P}/1:tracked`, `${P}/2:tracked`, `${P}/3:would_warn`],
    },
    {
      name: 'calls whose response never had an api_request are not placed in any batch',
      steps: [{ prompt: P }, { request: 'r1', prompt: P, calls: fail(2) }, { request: 'orphan', prompt: P, calls: fail(8), noApi: true }, { request: 'end', prompt: P }],
      want: [`${P}/1:tracked`],
    },
    {
      name: 'a new prompt in the same session ends the previous one and starts a fresh guard',
      steps: [{ prompt: 'a' }, ...rounds('a', [fail(4), fail(3)]), { prompt: 'b' }, ...rounds('b', [fail(1), fail(1)])],
      want: ['a/1:tracked', 'a/2:tracked', 'b/1:tracked', 'b/2:tracked'],
    },
  ];

  it.each(cases)('$name', async ({ steps, mode, want }) => {
    const { compact, result, records } = await decide(steps, mode);
    expect(compact).toEqual(want);
    expect(auditInvariants(result.decisions, result.emitted, inputIdentifiers(records), 'claude-code').every((i) => i.held)).toBe(true);
  });

  it('is detected from the Claude Code scopes, and qwen-code stays the default', () => {
    expect(detectWireProfile(new Wire().run([{ prompt: P }]))).toBe('claude-code');
    expect(detectWireProfile(emptyRecordBatch())).toBe('qwen-code');
  });

  it('emits claude-code names and only closed-vocabulary classes, never the raw error_type', async () => {
    const { result } = await decide([{ prompt: P }, ...rounds(P, [fail(2, 'SecretProjectXyzError'), fail(1, 'SecretProjectXyzError')])]);
    const logs = result.emitted.filter((e) => e.kind === 'log');
    expect(logs.map((l) => l.name)).toEqual(['claude-code.repeated_tool_failure_guard', 'claude-code.repeated_tool_failure_guard']);
    expect(logs.map((l) => l.attributes.execution_error_type)).toEqual(['other', 'other']);
    expect(JSON.stringify(result.emitted)).not.toContain('SecretProjectXyz');
  });

  it('the end of the root interaction span ends the prompt, after its grace (its last batch is judged before the input ends)', async () => {
    const steps: Step[] = [
      { prompt: P },
      ...rounds(P, [fail(4), fail(4)]),
      { span: 'interaction_end', prompt: P },
      { wait: CLAUDE_CODE_PROMPT_END_GRACE_MILLIS },
      { prompt: 'later', session: 'other-session' },
    ];
    const { result } = await decide(steps);
    const forgotten = result.decisions.map((d) => d.outcome.decision);
    expect(forgotten).toEqual(['tracked', 'would_warn']);
    // The late log of the ended prompt is not a new prompt.
    const again = await decide([...steps, { request: 'late', prompt: P, calls: fail(1) }]);
    expect(again.result.lateRecords).toBeGreaterThan(0);
    expect(again.compact).toEqual([`${P}/1:tracked`, `${P}/2:would_warn`]);
  });
});

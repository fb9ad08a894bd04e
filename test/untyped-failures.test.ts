import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { initialFailureState, isUntypedFailure, reduceFailure } from '../src/core/failure/reducer.js';
import type { FailurePolicy } from '../src/core/failure/reducer.js';
import type { FailureState, ToolCallObservation } from '../src/core/failure/types.js';
import { DEFAULT_FAILURE_POLICY } from '../src/core/failure/reducer.js';
import { replayRecords } from '../src/replay/replay.js';
import { emptyRecordBatch } from '../src/otlp/records.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import { renderSummary, summarise } from '../src/report/text.js';
import { failureWhatIf } from '../src/report/what-if.js';
import { byPrompt } from './helpers/expected-decisions.js';
import { guardedSdk } from './helpers/setup.js';

/**
 * Issue #33 (5): failures with no type. The design's rule stays the default (such a failure is
 * `unknown`: it resets the candidate, disables enforcement for the prompt and never counts); the
 * summary and report count them per agent; `untypedFailures: 'key-by-tool'` (in process, `replay`
 * and `serve` `--untyped-failures key-by-tool`) keys them `(tool, untyped)`; the what-if shows it.
 */
const untyped = (tool = 'read_file'): ToolCallObservation => ({
  callId: 'c',
  policyToolName: tool,
  toolType: undefined,
  terminalStatus: 'error',
  executionStatus: 'error',
  executionErrorType: undefined,
  providerDuplicate: false,
});

function run(batches: ToolCallObservation[][], policy: FailurePolicy): string[] {
  let state: FailureState = initialFailureState();
  const out: string[] = [];
  batches.forEach((observations, i) => {
    const [next, o] = reduceFailure(state, { type: 'batch_settled', mode: 'shadow', batch: { complete: true, observations }, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true }, policy);
    if (o.decision !== 'none') out.push(`${i + 1}:${o.decision}${o.resetReason === undefined ? '' : `/${o.resetReason}`}`);
    state = next;
  });
  return out;
}

const KEY_BY_TOOL: FailurePolicy = { ...DEFAULT_FAILURE_POLICY, untypedFailures: 'key-by-tool' };
const LOOP = Array.from({ length: 10 }, () => [untyped()]);
const DESIGN_LOOP = ['1:tracked', '2:tracked', '3:tracked', '4:tracked', '5:tracked', '6:tracked', '7:tracked', '8:would_warn', '9:would_stop'];

describe('untyped failures in the reducer', () => {
  it.each([
    ['the design (default): unknown at the first, nothing after', DEFAULT_FAILURE_POLICY, LOOP, ['1:reset/unknown']],
    ['key-by-tool: one key per tool, the design thresholds', KEY_BY_TOOL, LOOP, DESIGN_LOOP],
    ['key-by-tool: a same-tool success still resets', KEY_BY_TOOL, [[untyped()], [{ ...untyped(), terminalStatus: 'success', executionStatus: 'success' } as ToolCallObservation], [untyped()]], ['1:tracked', '2:reset/success', '3:tracked']],
    ['key-by-tool: two tools failing untyped in one batch are two keys (mixed)', KEY_BY_TOOL, [[untyped()], [untyped('a'), untyped('b')]], ['1:tracked', '2:reset/mixed']],
    ['key-by-tool: a call that never ran is still not_started', KEY_BY_TOOL, [[untyped()], [{ ...untyped(), executionStatus: 'not_started' }]], ['1:tracked', '2:reset/not_started']],
    ['key-by-tool: cancelled is still cancelled', KEY_BY_TOOL, [[untyped()], [{ ...untyped(), terminalStatus: 'cancelled', executionStatus: 'cancelled' }]], ['1:tracked', '2:reset/cancelled']],
  ] as const)('%s', (_label, policy, batches, want) => {
    expect(run(batches as unknown as ToolCallObservation[][], policy)).toEqual(want);
  });

  it.each([
    [untyped(), true],
    [{ ...untyped(), executionErrorType: 'unknown' }, true],
    [{ ...untyped(), executionErrorType: 'file_not_found' }, false],
    [{ ...untyped(), executionStatus: 'unknown' as const }, false],
    [{ ...untyped(), executionStatus: 'not_started' as const }, false],
    [{ ...untyped(), providerDuplicate: true }, false],
  ])('isUntypedFailure(%o) is %s', (o, want) => {
    expect(isUntypedFailure(o)).toBe(want);
  });
});

const capture = (scenario: string) => {
  const path = join('fixtures', 'openinference', 'openai-agents-0.24.0', `${scenario}.openinference.otlp.jsonl`);
  return { path, records: () => parseTelemetryText(readFileSync(path, 'utf8'), path, emptyRecordBatch()) };
};

describe('untyped failures on the real OpenAI Agents 0.24.0 capture (OpenInference: status ERROR, no type)', () => {
  it('default: never counted, and the summary counts them per agent (service.name)', async () => {
    const r = await replayRecords(capture('failure-loop').records());
    expect(byPrompt(r.decisions).map((p) => p.decisions)).toEqual([['1:reset/unknown']]);
    const s = summarise(r.decisions);
    expect(s.untypedFailures).toBe(10);
    expect(s.untypedFailuresByAgent).toEqual({ 'openai-agents-conformance': 10 });
    const lines = renderSummary(s, r.spanCount, r.logCount).join('\n');
    expect(lines).toContain('untyped failures: 10 call(s) in 10 batch(es)');
    expect(lines).toContain('per agent (service.name): openai-agents-conformance 10');
  });

  it.each([
    // The scripted rounds of scenarios.py, keyed (read_file, untyped): the design's decisions.
    ['failure-loop', [DESIGN_LOOP]],
    ['parallel-batch', [['1:tracked', '2:tracked', '3:would_warn', '4:would_stop']]],
    ['new-run', [['1:tracked', '2:tracked', '3:tracked', '4:tracked', '5:tracked', '6:tracked'], ['1:tracked', '2:tracked', '3:tracked', '4:tracked', '5:tracked', '6:tracked']]],
    // The cost of the opt-in: two different failures of one tool are one key.
    ['alternating-types', [DESIGN_LOOP]],
  ])('key-by-tool, %s', async (scenario, want) => {
    const r = await replayRecords(capture(scenario).records(), { untypedFailures: 'key-by-tool' });
    expect(byPrompt(r.decisions).map((p) => p.decisions)).toEqual(want);
    expect(JSON.stringify(r.emitted)).toContain('untyped');
    for (const s of ['read_file', '/missing/', 'Error running tool']) expect(JSON.stringify(r.emitted)).not.toContain(s);
  });

  it('the what-if shows what key-by-tool would have done on the same telemetry', async () => {
    const r = await replayRecords(capture('failure-loop').records());
    const prompts = [...new Set(r.decisions.map((d) => d.promptId))].map((promptId) => ({
      promptId,
      batches: r.decisions.filter((d) => d.promptId === promptId),
      calls: [],
      usage: [],
      endMillis: Math.max(...r.decisions.map((d) => d.lastActivityMillis)),
    }));
    const rows = failureWhatIf(prompts, new Set());
    expect(rows.find((x) => x.isDefault)).toMatchObject({ reminded: 0, stopped: 0 });
    expect(rows.find((x) => x.variant === 'untyped_key_by_tool')).toMatchObject({ reminded: 1, stopped: 1 });
  });

  it('the CLI: replay --untyped-failures key-by-tool warns and stops; without it the summary names the option', () => {
    const main = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;
    const { path } = capture('failure-loop');
    const keyed = spawnSync(process.execPath, [main, 'replay', '--untyped-failures', 'key-by-tool', path], { encoding: 'utf8', timeout: 60_000 });
    expect(keyed.status).toBe(0);
    expect(keyed.stdout).toMatch(/batch {3}8 {2}would_warn/);
    expect(keyed.stdout).toMatch(/batch {3}9 {2}would_stop/);
    expect(keyed.stdout).toContain('keyed by tool alone (--untyped-failures key-by-tool)');
    const plain = spawnSync(process.execPath, [main, 'replay', path], { encoding: 'utf8', timeout: 60_000 });
    expect(plain.status).toBe(0);
    expect(plain.stdout).not.toMatch(/batch +\d+ +would_warn/);
    expect(plain.stdout).toContain('would_warn 0, would_stop 0');
    expect(plain.stdout).toContain('--untyped-failures key-by-tool keys them by tool');
  });
});

describe('untyped failures in process (option untypedFailures)', () => {
  it.each([
    [undefined, ['1:reset/unknown']],
    ['key-by-tool' as const, DESIGN_LOOP],
  ])('untypedFailures %s', async (option, want) => {
    const sdk = guardedSdk({ profile: 'openinference', ...(option === undefined ? {} : { untypedFailures: option }) });
    const span = (name: string, kind: string, parent = context.active()) => sdk.tracer.startSpan(name, { attributes: { 'openinference.span.kind': kind, 'tool.name': 'read_file' } }, parent);
    const root = span('Agent workflow', 'AGENT');
    const ctx = trace.setSpan(context.active(), root);
    for (let i = 0; i < 10; i++) {
      span('generation', 'LLM', ctx).end();
      const t = span('read_file', 'TOOL', ctx);
      t.setStatus({ code: SpanStatusCode.ERROR, message: 'Error running tool (non-fatal)' });
      t.end();
    }
    root.end();
    expect(byPrompt(sdk.decisions).map((p) => p.decisions)).toEqual([want]);
    const types = sdk.guardLogs.getFinishedLogRecords().map((l) => l.attributes['execution_error_type']).filter((t) => t !== undefined);
    if (option === 'key-by-tool') expect(new Set(types)).toEqual(new Set(['untyped']));
    await sdk.shutdown();
  });

  it('an invalid value falls back to the design with a diagnostic', async () => {
    const sdk = guardedSdk({ profile: 'openinference', untypedFailures: 'count-them' as never });
    expect(sdk.guard.options.untypedFailures).toBe('ineligible');
    await sdk.shutdown();
  });
});

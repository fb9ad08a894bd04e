import { describe, expect, it } from 'vitest';
import type { RecordBatch } from '../src/otlp/records.js';
import { auditInvariants, inputIdentifiers } from '../src/replay/audit.js';
import { renderBlindSpots, renderInvariants } from '../src/report/text.js';
import { decide, fail, Wire } from './helpers/claude-code-wire.js';
import type { Call, Step } from './helpers/claude-code-wire.js';

/**
 * The Claude Code 2.1.328 shapes of issue #32, each derived from the real CLI (conformance
 * scenarios `streamed-response-one-batch-shadow`, `mcp-*`, `unrecorded-calls-shadow`,
 * `interrupt-*`), built here from their wire shape. Expected decisions are the design's: one model
 * response is one batch; a blank or unresolved tool identity is ineligible; an incomplete batch
 * resets; a cancelled turn's batch is not judged, a cancelled call never counts.
 */
const P = 'p-1';

const withoutSpans = (r: RecordBatch): RecordBatch => ({ ...r, spans: [] });

/** Rounds of one prompt: each response with an `llm_request` span (`stop_reason`), then the final text. */
function responses(perRound: readonly { calls: Call[]; stop?: string; apiAfter?: number }[], end = true): Step[] {
  return [
    { prompt: P },
    ...perRound.map((r, i) => ({ request: `r${i + 1}`, prompt: P, calls: r.calls, llmSpan: r.stop ?? (r.calls.length > 0 ? 'tool_use' : 'end_turn'), apiAfter: r.apiAfter })),
    ...(end ? [{ request: 'final', prompt: P, llmSpan: 'end_turn' }] : []),
  ];
}

const mcp = (server: string, tool: string, extra: Partial<Call> = {}): Call => ({ mcp: { server, tool }, errorType: 'McpToolCallError', ...extra });
const times = (n: number, c: Call): Call[] => Array.from({ length: n }, () => ({ ...c }));

interface ShapeCase {
  name: string;
  steps: Step[];
  /** The design's decisions with the spans. */
  want: string[];
  /** The design's decisions from the logs alone, when they differ (what the logs cannot carry). */
  logsOnly?: string[];
}

const cases: ShapeCase[] = [
  {
    name: '1. a streamed response whose api_request log arrives after its first calls is one batch',
    steps: responses([{ calls: fail(9), apiAfter: 2 }, { calls: fail(1), apiAfter: 0 }]),
    want: [`${P}/1:tracked`, `${P}/2:would_warn`],
  },
  {
    name: '1. the same when the api_request log comes after every call of the response',
    steps: responses([{ calls: fail(4), apiAfter: 4 }, { calls: fail(4), apiAfter: 1 }, { calls: fail(1), apiAfter: 1 }]),
    want: [`${P}/1:tracked`, `${P}/2:would_warn`, `${P}/3:would_stop`],
  },
  {
    name: '2. one failing MCP tool: keyed on its server-qualified name (tool span); unresolved from the logs alone',
    steps: responses(Array.from({ length: 5 }, () => ({ calls: times(2, mcp('tickets', 'lookup_ticket', { toolSpan: true })) }))),
    want: [`${P}/1:tracked`, `${P}/2:tracked`, `${P}/3:tracked`, `${P}/4:would_warn`, `${P}/5:would_stop`],
    logsOnly: [`${P}/1:reset:unknown`],
  },
  {
    name: '2. two different failing MCP tools in every batch are two keys (mixed), never one `mcp_tool` key',
    steps: responses(Array.from({ length: 5 }, () => ({ calls: [...times(2, mcp('tickets', 'lookup_ticket', { toolSpan: true })), ...times(2, mcp('wiki', 'fetch_page', { toolSpan: true }))] }))),
    want: [],
    logsOnly: [`${P}/1:reset:unknown`],
  },
  {
    name: '2. OTEL_LOG_TOOL_DETAILS=1 logs name server and tool: the qualified identity without spans',
    steps: responses(Array.from({ length: 5 }, () => ({ calls: times(2, mcp('tickets', 'lookup_ticket', { details: true })) }))),
    want: [`${P}/1:tracked`, `${P}/2:tracked`, `${P}/3:tracked`, `${P}/4:would_warn`, `${P}/5:would_stop`],
  },
  {
    name: '3. a response that asked for tools (stop_reason tool_use) and left no call record is an incomplete batch: reset',
    steps: responses([{ calls: fail(4) }, { calls: [], stop: 'tool_use' }, { calls: fail(4) }, { calls: fail(1) }]),
    want: [`${P}/1:tracked`, `${P}/2:reset:incomplete`, `${P}/3:tracked`, `${P}/4:tracked`],
  },
  {
    name: '3. a response without calls that did not ask for tools (max_tokens) is no batch; logs alone cannot tell and reset',
    steps: responses([{ calls: fail(4) }, { calls: [], stop: 'max_tokens' }, { calls: fail(4) }]),
    want: [`${P}/1:tracked`, `${P}/2:would_warn`],
    logsOnly: [`${P}/1:tracked`, `${P}/2:reset:incomplete`, `${P}/3:tracked`],
  },
  {
    name: '4. an interrupt ends the turn after the batch (no model request follows): that batch is not judged',
    steps: responses([{ calls: fail(4) }, { calls: fail(4) }, { calls: [{ interrupted: true }] }], false),
    want: [`${P}/1:tracked`, `${P}/2:would_warn`],
  },
  {
    name: '4. an interrupted call in a turn that goes on never counts (cancelled); the logs alone read a failure',
    steps: responses([{ calls: fail(4) }, { calls: [...fail(3), { interrupted: true }] }, { calls: fail(1) }]),
    want: [`${P}/1:tracked`, `${P}/2:reset:cancelled`, `${P}/3:tracked`],
    logsOnly: [`${P}/1:tracked`, `${P}/2:would_warn`, `${P}/3:would_stop`],
  },
  {
    name: '4. a PostToolBatch hook that blocked after the last batch had it settled: it is judged',
    steps: [...responses([{ calls: fail(4) }, { calls: fail(4) }], false), { hook: 'PostToolBatch', prompt: P, blocking: 1 }],
    want: [`${P}/1:tracked`, `${P}/2:would_warn`],
  },
  {
    name: '4. a PostToolBatch hook that did not block leaves a cut turn cut',
    steps: [...responses([{ calls: fail(4) }, { calls: fail(4) }], false), { hook: 'PostToolBatch', prompt: P, blocking: 0 }],
    want: [`${P}/1:tracked`],
  },
];

describe('claude-code profile: the shapes of the real CLI, with and without spans', () => {
  it.each(cases)('$name', async ({ steps, want, logsOnly }) => {
    const records = new Wire().run(steps);
    expect((await decide(steps, 'shadow', records)).compact).toEqual(want);
    expect((await decide(steps, 'shadow', withoutSpans(records))).compact).toEqual(logsOnly ?? want);
  });

  it('a streamed response keeps all its calls in its one receipt', async () => {
    const steps = responses([{ calls: fail(9), apiAfter: 2 }]);
    const { result } = await decide(steps);
    expect(result.decisions.map((d) => d.receipt.observations.length)).toEqual([9]);
  });

  it('an unresolved MCP identity is never `mcp_tool`: the receipt names no tool, so the call is ineligible', async () => {
    const steps = responses([{ calls: times(2, mcp('tickets', 'lookup_ticket')) }]);
    const { result } = await decide(steps);
    const names = result.decisions.flatMap((d) => d.receipt.observations.map((o) => [o.policyToolName, o.toolType]));
    expect(names).toEqual([
      [undefined, 'mcp'],
      [undefined, 'mcp'],
    ]);
  });

  it('the incomplete and the cut batch are reported as such', async () => {
    const { result } = await decide(responses([{ calls: fail(2) }, { calls: [], stop: 'tool_use' }, { calls: fail(2) }], false));
    expect(result.decisions.map((d) => [d.batch, d.receipt.complete])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(result.unjudgedBatches).toEqual([{ promptId: P, batch: 3, reason: 'turn_cancelled' }]);
  });
});

describe('claude-code: invariants the telemetry cannot show a violation of', () => {
  const interrupted = responses([{ calls: fail(4) }, { calls: [...fail(3), { interrupted: true }] }, { calls: fail(1) }]);

  it('logs alone: an interrupted call reads as a failure, so "zero cancelled … counted" is not checkable, not held', async () => {
    const records = withoutSpans(new Wire().run(interrupted));
    const { result } = await decide(interrupted, 'shadow', records);
    const invariants = auditInvariants(result.decisions, result.emitted, inputIdentifiers(records), 'claude-code', result.notCheckable);
    const byId = new Map(invariants.map((i) => [i.id, i]));
    expect(byId.get('no_ineligible_counted')?.notCheckable).toMatch(/interrupted/);
    expect(byId.get('no_incomplete_decisions')?.notCheckable).toMatch(/rejected before they ran/);
    expect(byId.get('no_enforcement_after_unreliable_drain')?.notCheckable).toMatch(/drain/);
    expect(byId.get('no_sensitive_telemetry')?.notCheckable).toBeUndefined();
    const lines = renderInvariants(invariants);
    expect(lines.filter((l) => l.startsWith('  not checkable  '))).toHaveLength(3);
    expect(lines.some((l) => l.includes('held') && l.includes('zero cancelled'))).toBe(false);
  });

  it('with the beta spans the interrupt is marked: that invariant is checked again', async () => {
    const records = new Wire().run(interrupted);
    const { result } = await decide(interrupted, 'shadow', records);
    const invariants = auditInvariants(result.decisions, result.emitted, inputIdentifiers(records), 'claude-code', result.notCheckable);
    expect(invariants.find((i) => i.id === 'no_ineligible_counted')?.notCheckable).toBeUndefined();
    expect(invariants.every((i) => i.held)).toBe(true);
  });

  it('a violation found anyway prints VIOLATED, never not checkable', () => {
    const lines = renderInvariants([{ id: 'x', description: 'd', held: false, notCheckable: 'why', violations: ['p batch 1'] }]);
    expect(lines[1]).toBe('  VIOLATED  d');
  });

  it('the summary names what the telemetry cannot show and that the hook path sees it', async () => {
    const { result } = await decide(responses([{ calls: fail(1) }]));
    const lines = renderBlindSpots(result.blindSpots);
    expect(lines.some((l) => l.includes('leave no record') && l.includes('claude-code-hook path sees every call'))).toBe(true);
    expect(lines.some((l) => l.includes('interrupted call'))).toBe(true);
    expect(lines.some((l) => l.includes('mcp_tool'))).toBe(true);
  });
});

import { emptyRecordBatch } from '../../src/otlp/records.js';
import type { RecordBatch } from '../../src/otlp/records.js';
import { otlpRequestToRecords } from '../../src/otlp/otlp.js';
import { replayRecords } from '../../src/replay/replay.js';
import type { GuardMode } from '../../src/core/failure/types.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A Claude Code conformance scenario, as far as the hook tests read it. */
export interface ClaudeHookScenario {
  readonly name: string;
  readonly mode: GuardMode;
  readonly hooks?: 'none' | 'guard';
  readonly expectedDecisions: ({ readonly prompt?: number; readonly batch: number; readonly decision: string } & Record<string, unknown>)[];
}

/** The guard-hook scenarios (`hooks: "guard"`) of conformance/claude-code/scenarios, by name. */
export function claudeHookScenarios(): ClaudeHookScenario[] {
  const dir = 'conformance/claude-code/scenarios';
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as ClaudeHookScenario)
    .filter((s) => s.hooks === 'guard');
}

/** The hook inputs the real CLI sent in a scenario (fixtures/claude-code-2.1.328/<name>.hooks.jsonl), in arrival order. */
export function recordedHookInputs(name: string): Record<string, unknown>[] {
  return readFileSync(join('fixtures/claude-code-2.1.328', `${name}.hooks.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { input: Record<string, unknown> }).input);
}

/**
 * Claude Code 2.1.328 telemetry as the CLI sends it over OTLP/HTTP JSON (shapes observed in the
 * conformance captures, fixtures/claude-code-2.1.328): log events with body `claude_code.<event>`,
 * attribute `event.name` = `<event>`, scope `com.anthropic.claude_code.events`; beta spans in scope
 * `com.anthropic.claude_code.tracing`; resource `service.name=claude-code`.
 *
 * A call: `tool` (default `Bash`), `ok` (success) or `errorType` (default `ShellError`), `reject`
 * (tool_decision reject, no tool_result). `mcp`: an MCP call, logged as `tool_name=mcp_tool`,
 * `tool_source=mcp` (2.1.328 without `OTEL_LOG_TOOL_DETAILS`); with `details` its logs also carry
 * `tool_parameters` naming server and tool; with `toolSpan` a `claude_code.tool` span carries its
 * registered name `mcp__<server>__<tool>`. `interrupted`: the `claude_code.tool.execution` span
 * failed without `error.type` (2.1.328's interrupt), the log still says `ShellError`.
 *
 * A request: `calls` logged after its `api_request`, or before it (`callsFirst`), or `apiAfter` of
 * them before it (a streamed response whose first calls run before the log); `noApi`: no
 * `api_request` at all; `llmSpan`: a `claude_code.llm_request` span that starts before the calls,
 * with that `stop_reason`.
 */
export type Call = {
  tool?: string;
  ok?: true;
  errorType?: string;
  reject?: true;
  mcp?: { server: string; tool: string };
  details?: true;
  toolSpan?: true;
  interrupted?: true;
};
export type Step =
  | { prompt: string; session?: string }
  | {
      request: string;
      prompt: string;
      querySource?: string;
      calls?: Call[];
      callsFirst?: boolean;
      apiAfter?: number;
      noApi?: true;
      llmSpan?: string;
    }
  | { span: 'interaction_end'; prompt: string }
  /** Nothing for `millis` (the next record comes that much later). */
  | { wait: number }
  | { hook: string; prompt: string; blocking: number };

const SESSION = 'sess-1';

type Kv = { key: string; value: { intValue: number } | { stringValue: string } | { boolValue: boolean } };
const kv = (key: string, v: string | number | boolean): Kv => ({
  key,
  value: typeof v === 'number' ? { intValue: v } : typeof v === 'boolean' ? { boolValue: v } : { stringValue: v },
});

/** Builds the records of a list of {@link Step}s, 10 ms apart. */
export class Wire {
  private t = 1_800_000_000_000;
  private seq = 0;
  private spanSeq = 0;
  private readonly logs: unknown[] = [];
  private readonly spans: unknown[] = [];
  private readonly traces = new Map<string, string>();
  /** Each prompt's session (its user_prompt's), for its spans: 2.1.328 writes session.id on every span and event. */
  private readonly sessions = new Map<string, string>();

  private trace(prompt: string): string {
    let id = this.traces.get(prompt);
    if (id === undefined) {
      id = (this.traces.size + 1).toString(16).padStart(32, 'a');
      this.traces.set(prompt, id);
    }
    return id;
  }

  log(event: string, prompt: string, attrs: Record<string, string>, session = this.sessions.get(prompt) ?? SESSION): void {
    this.t += 10;
    if (!this.sessions.has(prompt)) this.sessions.set(prompt, session);
    this.logs.push({
      timeUnixNano: `${this.t}000000`,
      body: { stringValue: `claude_code.${event}` },
      attributes: [kv('session.id', session), kv('event.name', event), kv('event.sequence', this.seq++), kv('prompt.id', prompt), ...Object.entries(attrs).map(([k, v]) => kv(k, v))],
      traceId: this.trace(prompt),
      spanId: 'bbbbbbbbbbbbbbbb',
    });
  }

  /** A span from `start` to now; a child of the interaction unless `root`. */
  span(name: string, prompt: string, start: number, attrs: Record<string, string | number | boolean>, root = false): void {
    this.t += 10;
    this.spans.push({
      name,
      traceId: this.trace(prompt),
      spanId: (++this.spanSeq).toString(16).padStart(16, 'c'),
      ...(root ? {} : { parentSpanId: 'dddddddddddddddd' }),
      startTimeUnixNano: `${start}000000`,
      endTimeUnixNano: `${this.t}000000`,
      attributes: [kv('session.id', this.sessions.get(prompt) ?? SESSION), ...Object.entries(attrs).map(([k, v]) => kv(k, v))],
    });
  }

  interaction(prompt: string): void {
    this.span('claude_code.interaction', prompt, this.t + 5, {}, true);
  }

  private call(request: string, prompt: string, c: Call, i: number): void {
    const callId = `${request}_${i}`;
    const start = this.t + 1;
    const name = c.mcp === undefined ? (c.tool ?? 'Bash') : 'mcp_tool';
    const base: Record<string, string> = { request_id: request, tool_use_id: callId, tool_name: name };
    if (c.mcp !== undefined) {
      base.tool_source = 'mcp';
      if (c.details) base.tool_parameters = JSON.stringify({ mcp_server_name: c.mcp.server, mcp_tool_name: c.mcp.tool });
    }
    this.log('tool_decision', prompt, { ...base, decision: c.reject ? 'reject' : 'accept', source: c.reject ? 'hook' : 'config' });
    if (c.reject) return;
    if (c.interrupted) this.span('claude_code.tool.execution', prompt, start, { tool_use_id: callId, success: false, error_class: 'ShellError' });
    this.log('tool_result', prompt, c.ok ? { ...base, success: 'true' } : { ...base, success: 'false', error_type: c.errorType ?? 'ShellError' });
    if (c.toolSpan && c.mcp !== undefined) this.span('claude_code.tool', prompt, start, { tool_use_id: callId, tool_name: `mcp__${c.mcp.server}__${c.mcp.tool}` });
  }

  run(steps: readonly Step[]): RecordBatch {
    for (const s of steps) {
      if ('wait' in s) this.t += s.wait;
      else if ('span' in s) this.interaction(s.prompt);
      else if ('hook' in s) this.log('hook_execution_complete', s.prompt, { hook_event: s.hook, hook_name: s.hook, num_blocking: String(s.blocking) });
      else if ('request' in s) {
        const llmStart = this.t + 1;
        const api = () => {
          if (s.noApi) return;
          this.log('api_request', s.prompt, { request_id: s.request, query_source: s.querySource ?? 'sdk' });
          if (s.llmSpan !== undefined) {
            this.span('claude_code.llm_request', s.prompt, llmStart, { request_id: s.request, stop_reason: s.llmSpan, 'llm_request.context': 'interaction' });
          }
        };
        const calls = s.calls ?? [];
        const before = s.callsFirst ? calls.length : (s.apiAfter ?? 0);
        calls.forEach((c, i) => {
          if (i === before) api();
          this.call(s.request, s.prompt, c, i);
        });
        if (before >= calls.length) api();
      } else this.log('user_prompt', s.prompt, {}, s.session);
    }
    const resource = { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] };
    const records = emptyRecordBatch();
    otlpRequestToRecords({ resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'com.anthropic.claude_code.events' }, logRecords: this.logs }] }] }, records);
    if (this.spans.length > 0) {
      otlpRequestToRecords({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'com.anthropic.claude_code.tracing' }, spans: this.spans }] }] }, records);
    }
    return records;
  }
}

/** `n` failing calls of one tool and error type. */
export const fail = (n: number, errorType = 'ShellError', tool = 'Bash'): Call[] => Array.from({ length: n }, () => ({ tool, errorType }));

/**
 * One model response a round, then the response that ends the turn (no calls): in 2.1.328 the
 * model is always asked again after a batch, unless the turn was cut (an interrupt, a cap).
 */
export const rounds = (prompt: string, perRound: readonly Call[][], querySource = 'sdk'): Step[] => [
  ...perRound.map((calls, i) => ({ request: `req_${prompt}_${i + 1}`, prompt, querySource, calls })),
  { request: `req_${prompt}_end`, prompt, querySource },
];

/** Replays the steps (profile detected) and renders each decision but `none` as `<prompt>/<batch>:<decision>[:<reset reason>]`. */
export async function decide(steps: readonly Step[], mode: GuardMode = 'shadow', records = new Wire().run(steps)) {
  const r = await replayRecords(records, { mode });
  return {
    records,
    result: r,
    compact: r.decisions
      .filter((d) => d.outcome.decision !== 'none')
      .map((d) => `${d.promptId}/${d.batch}:${d.outcome.decision}${d.outcome.resetReason ? `:${d.outcome.resetReason}` : ''}`),
  };
}

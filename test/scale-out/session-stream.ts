/**
 * A generated multi-session qwen-code stream for the scale-out test and bench: many ACP sessions
 * running at once, each with its own trace per prompt, written with the record shapes of the real
 * qwen-code 0.24.4 captures (fixtures/qwen-code-0.24.4): a `qwen-code.user_prompt` log, an
 * interaction span, per model round an interaction `qwen-code.llm_request` span, and per tool call
 * a `qwen-code.tool` span, its `qwen-code.tool.execution` child and a `qwen-code.tool_call` log.
 * Every span and log carries `session.id`, as qwen-code's do.
 *
 * Deterministic: the same seed gives the same stream.
 */
import type { SpanContext } from '@opentelemetry/api';
import { RecordedSpan } from '../../src/otlp/records.js';
import type { RecordBatch, RecordedLog } from '../../src/otlp/records.js';

/** What one session's prompt does, batch by batch. */
export type PromptScript = 'loop' | 'loop_long' | 'recovers' | 'mixed' | 'short';

/** Options of {@link generateSessionStream}. */
export interface SessionStreamOptions {
  /** Sessions in the stream. */
  readonly sessions: number;
  /** PRNG seed. */
  readonly seed: number;
  /** Event time of the first record, in milliseconds since the epoch. */
  readonly startMillis: number;
  /** Gap between two sessions' starts, in milliseconds: small gaps interleave the sessions. @defaultValue 150 */
  readonly staggerMillis?: number;
}

/** One session of the stream. */
export interface GeneratedSession {
  readonly sessionId: string;
  readonly promptIds: readonly string[];
  readonly scripts: readonly PromptScript[];
}

/** The stream. */
export interface SessionStream {
  readonly sessions: readonly GeneratedSession[];
  /** Every record; spans and logs are not in any particular order. */
  readonly records: RecordBatch;
  /** Event time of the last record, in milliseconds since the epoch. */
  readonly endMillis: number;
}

/** A small deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hex(rand: () => number, chars: number): string {
  let s = '';
  while (s.length < chars) s += Math.floor(rand() * 0x100000000).toString(16).padStart(8, '0');
  return s.slice(0, chars);
}

function uuid(rand: () => number): string {
  const h = hex(rand, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const hr = (millis: number): [number, number] => [Math.floor(millis / 1000), Math.round((millis % 1000) * 1_000_000)];

interface Call {
  readonly tool: string;
  /** `undefined`: success. */
  readonly errorType: string | undefined;
}

const FAIL_READ: Call = { tool: 'read_file', errorType: 'file_not_found' };
const FAIL_SHELL: Call = { tool: 'run_shell_command', errorType: 'shell_execute_error' };
const OK_READ: Call = { tool: 'read_file', errorType: undefined };

/** The batches of one prompt, by script. */
function batchesOf(script: PromptScript, rand: () => number): Call[][] {
  const width = 1 + Math.floor(rand() * 3);
  const same = (n: number, call: Call): Call[][] => Array.from({ length: n }, () => Array.from({ length: width }, () => call));
  switch (script) {
    case 'loop':
      // the design's loop: the same failure until would_warn and would_stop
      return same(Math.max(5, Math.ceil(8 / width) + 2), FAIL_READ);
    case 'loop_long':
      // keeps failing after it latched (shadow lets the agent go on)
      return same(Math.ceil(8 / width) + 5, FAIL_SHELL);
    case 'recovers':
      return [...same(2 + Math.floor(rand() * 2), FAIL_READ), [OK_READ], ...same(2, FAIL_READ)];
    case 'mixed':
      return [[FAIL_READ, FAIL_SHELL], ...same(3, FAIL_SHELL), [FAIL_READ, FAIL_READ]];
    case 'short':
      return same(1 + Math.floor(rand() * 2), FAIL_READ);
    default: {
      const exhaustive: never = script;
      return exhaustive;
    }
  }
}

const SCRIPTS: readonly PromptScript[] = ['loop', 'loop_long', 'recovers', 'mixed', 'short'];

/**
 * Generate the stream: session `i` starts `i * staggerMillis` after `startMillis` and runs one or
 * two prompts back to back; a model round takes 300 ms and a tool call 40 ms, so dozens of sessions
 * are active at any time.
 */
export function generateSessionStream(options: SessionStreamOptions): SessionStream {
  const rand = prng(options.seed);
  const stagger = options.staggerMillis ?? 150;
  const spans: RecordedSpan[] = [];
  const logs: RecordedLog[] = [];
  const sessions: GeneratedSession[] = [];
  let endMillis = options.startMillis;
  for (let i = 0; i < options.sessions; i++) {
    const sessionId = uuid(rand);
    const promptCount = 1 + Math.floor(rand() * 2);
    const promptIds: string[] = [];
    const scripts: PromptScript[] = [];
    let t = options.startMillis + i * stagger;
    for (let p = 1; p <= promptCount; p++) {
      const script = SCRIPTS[(i + p) % SCRIPTS.length] as PromptScript;
      const promptId = `${sessionId}########${p}`;
      promptIds.push(promptId);
      scripts.push(script);
      t = prompt({ spans, logs, rand, sessionId, promptId, start: t, batches: batchesOf(script, rand) }) + 200;
    }
    endMillis = Math.max(endMillis, t);
    sessions.push({ sessionId, promptIds, scripts });
  }
  return { sessions, records: { spans, logs, metricCount: 0, ignoredCount: 0 }, endMillis };
}

interface PromptInput {
  readonly spans: RecordedSpan[];
  readonly logs: RecordedLog[];
  readonly rand: () => number;
  readonly sessionId: string;
  readonly promptId: string;
  readonly start: number;
  readonly batches: readonly (readonly Call[])[];
}

/** Write one prompt's records; returns the end of its interaction span. */
function prompt(p: PromptInput): number {
  const traceId = hex(p.rand, 32);
  const ctx = (): SpanContext => ({ traceId, spanId: hex(p.rand, 16), traceFlags: 1 });
  const interaction = ctx();
  const session = { 'session.id': p.sessionId };
  const log = (millis: number, parent: SpanContext, attributes: Record<string, unknown>, body: string): void => {
    p.logs.push({
      hrTime: hr(millis),
      attributes: { ...session, ...attributes, 'event.timestamp': new Date(millis).toISOString() },
      spanContext: parent,
      eventName: undefined,
      instrumentationScope: { name: 'qwen-code' },
      body,
    });
  };
  const span = (name: string, c: SpanContext, parent: SpanContext | undefined, from: number, to: number, attributes: Record<string, unknown>): void => {
    p.spans.push(
      new RecordedSpan({ name, attributes: { ...session, ...attributes }, spanContext: c, parentSpanContext: parent, startTime: hr(from), endTime: hr(to), scopeName: 'qwen-code' }),
    );
  };
  log(p.start + 2, interaction, { 'event.name': 'qwen-code.user_prompt', prompt_length: 22, prompt_id: p.promptId, auth_type: 'openai' }, 'User prompt. Length: 22.');
  let t = p.start + 10;
  const modelRound = (): void => {
    span('qwen-code.llm_request', ctx(), interaction, t, t + 300, { 'qwen-code.prompt_id': p.promptId, 'llm_request.context': 'interaction', 'gen_ai.operation.name': 'chat' });
    t += 310;
  };
  p.batches.forEach((calls, b) => {
    modelRound();
    calls.forEach((call, k) => {
      const callId = `call_${b + 1}_${k}`;
      const tool = ctx();
      const failed = call.errorType !== undefined;
      const outcome = failed ? { execution_status: 'error', error_type: call.errorType } : { execution_status: 'success' };
      span('qwen-code.tool.execution', ctx(), tool, t + 5, t + 35, { 'gen_ai.tool.name': call.tool, 'tool.call_id': callId, success: !failed, ...outcome });
      span('qwen-code.tool', tool, interaction, t, t + 40, { 'tool.call_id': callId, 'gen_ai.tool.call.id': callId, call_id: callId, 'gen_ai.tool.name': call.tool, 'gen_ai.operation.name': 'execute_tool' });
      log(t + 40, tool, {
        'event.name': 'qwen-code.tool_call',
        call_id: callId,
        function_name: call.tool,
        status: failed ? 'error' : 'success',
        success: !failed,
        prompt_id: p.promptId,
        tool_type: 'native',
        ...outcome,
      }, `Tool call: ${call.tool}. Success: ${String(!failed)}. Duration: 40ms.`);
      t += 50;
    });
  });
  modelRound();
  span('qwen-code.interaction', interaction, undefined, p.start, t, {
    'qwen-code.prompt_id': p.promptId,
    'qwen-code.message_type': 'acp_prompt',
    'gen_ai.operation.name': 'invoke_agent',
    'qwen-code.turn_status': 'ok',
  });
  return t;
}

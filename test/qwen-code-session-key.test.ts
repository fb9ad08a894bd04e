/**
 * The qwen-code profile's session key: `session.id`, else the part of the prompt id before
 * `########` (wire reference §1.1). Once a session's interaction `llm_request` spans are seen, they
 * alone are its batch boundaries, and its `api_request` logs are not (a subagent's or side query's
 * would split batches). The profile keeps each prompt's key as the prompt's note so that it is not
 * built and hashed again for every record; these tests hold that to the rule.
 */
import { describe, expect, it } from 'vitest';
import { RecordedSpan } from '../src/otlp/records.js';
import type { RecordBatch, RecordedLog } from '../src/otlp/records.js';
import { isSessionKeyOf, sessionKeyOf } from '../src/profiles/qwen-code/prompt-id.js';
import { replayRecords } from '../src/replay/replay.js';

describe('isSessionKeyOf is sessionKeyOf compared without building the key', () => {
  const sessions = [undefined, '', 'sess-A', 'sess-B'];
  const prompts = ['sess-A########1', 'sess-A########12', 'sess-B########1', 'plain-id', '########3', 'sess-A#agent-c1#2'];
  const keys = ['sess-A', 'sess-B', 'sess-A#', 'sess', 'plain-id', '########3', '', 'sess-A#agent-c1#2'];
  const cases = sessions.flatMap((s) => prompts.flatMap((p) => keys.map((k) => ({ s, p, k }))));
  it.each(cases)('key $k, session.id $s, prompt $p', ({ s, p, k }) => {
    expect(isSessionKeyOf(k, s, p)).toBe(k === sessionKeyOf(s, p));
  });
});

const T0 = 1_800_000_000;
const at = (ms: number): [number, number] => [T0 + Math.floor(ms / 1000), (ms % 1000) * 1_000_000];
const hex = (n: number, len: number): string => n.toString(16).padStart(len, '0');
let nextSpanId = 0;

/** A failing `read_file` call's `tool_call` log attributes (`session.id` only when given). */
function failingCall(promptId: string, callId: string, sessionId: string | undefined): Record<string, unknown> {
  return {
    'event.name': 'qwen-code.tool_call',
    prompt_id: promptId,
    call_id: callId,
    function_name: 'read_file',
    status: 'error',
    execution_status: 'error',
    error_type: 'file_not_found',
    tool_type: 'native',
    ...(sessionId === undefined ? {} : { 'session.id': sessionId }),
  };
}

/** A span of trace `traceId` that starts and ends at `ms`. */
function spanAt(name: string, ms: number, attributes: Record<string, unknown>, traceId: string): RecordedSpan {
  return new RecordedSpan({
    name,
    attributes,
    spanContext: { traceId, spanId: hex(++nextSpanId, 16), traceFlags: 1 },
    parentSpanContext: undefined,
    startTime: at(ms),
    endTime: at(ms),
    scopeName: 'qwen-code',
  });
}

/** A log record at `ms`, in a span of trace `traceId` when one is given. */
function logAt(ms: number, attributes: Record<string, unknown>, traceId?: string): RecordedLog {
  return {
    hrTime: at(ms),
    attributes: attributes as RecordedLog['attributes'],
    spanContext: traceId === undefined ? undefined : { traceId, spanId: hex(++nextSpanId, 16), traceFlags: 1 },
    eventName: undefined,
    instrumentationScope: { name: 'qwen-code' },
    body: undefined,
    resource: undefined,
  };
}

/**
 * Session S's prompt 1 makes model requests (spans) while `others` other sessions start, then a new
 * prompt 2 of S is seen only through its logs (its spans late or lost): two `api_request` logs and
 * failing `tool_call` logs between them.
 */
function sessionThenLogsOnlyPrompt(others: number, withSessionId: boolean): RecordBatch {
  const spans: RecordedSpan[] = [];
  const logs: RecordedLog[] = [];
  const span = (name: string, ms: number, attributes: Record<string, unknown>, trace: number): RecordedSpan => spanAt(name, ms, attributes, hex(trace, 32));
  const log = (ms: number, attributes: Record<string, unknown>): RecordedLog => logAt(ms, attributes);
  const session = (s: string): Record<string, unknown> => (withSessionId ? { 'session.id': s } : {});
  const llm = (ms: number, prompt: string, s: string, trace: number): RecordedSpan =>
    span('qwen-code.llm_request', ms, { 'qwen-code.prompt_id': prompt, 'llm_request.context': 'interaction', ...session(s) }, trace);
  let t = 0;
  spans.push(llm(t, 'S########1', 'S', 1));
  for (let i = 0; i < others; i++) {
    t += 1;
    const p = `T${i}########1`;
    spans.push(span('qwen-code.interaction', t, { 'qwen-code.prompt_id': p, ...session(`T${i}`) }, 100 + i), llm(t, p, `T${i}`, 100 + i));
    if (i % 4000 === 3999) spans.push(llm(t, 'S########1', 'S', 1)); // prompt 1 is still working
  }
  const call = (ms: number, id: string): RecordedLog => log(ms, failingCall('S########2', id, withSessionId ? 'S' : undefined));
  const api = (ms: number): RecordedLog => log(ms, { 'event.name': 'qwen-code.api_request', prompt_id: 'S########2', ...session('S') });
  logs.push(api(t + 1), call(t + 2, 'c1'), call(t + 3, 'c2'), api(t + 4), call(t + 5, 'c3'), call(t + 6, 'c4'), api(t + 7));
  return { spans, logs, metricCount: 0, ignoredCount: 0 };
}

describe('a session whose llm_request spans are seen keeps its api_request logs from being boundaries', () => {
  // 16,400 other sessions: more than the profile's bounded set of span sessions forgets at once, so
  // the session must stay remembered because its prompt keeps making requests.
  it.each([
    { others: 10, withSessionId: true },
    { others: 16_400, withSessionId: true },
    { others: 16_400, withSessionId: false },
  ])('$others other sessions, session.id on the records: $withSessionId', async ({ others, withSessionId }) => {
    const result = await replayRecords(sessionThenLogsOnlyPrompt(others, withSessionId), { profile: 'qwen-code', mode: 'shadow' });
    // Its api_request logs are no boundaries, so prompt 2 has no batch judged from them.
    expect(result.decisions.filter((d) => d.promptId === 'S########2')).toEqual([]);
  }, 60_000);

  it('the same logs in a session with no span seen are boundaries (the check can fail)', async () => {
    const records = sessionThenLogsOnlyPrompt(10, true);
    const withoutSpans: RecordBatch = { ...records, spans: [] };
    const result = await replayRecords(withoutSpans, { profile: 'qwen-code', mode: 'shadow' });
    expect(result.decisions.filter((d) => d.promptId === 'S########2').map((d) => d.outcome.decision)).toEqual(['tracked', 'tracked']);
  });
});

/**
 * Prompt P's interaction model requests carry `session.id` `S1` (or none: then the key is cut from the
 * prompt id, `P`), so its session is a span session. Between them come failing `tool_call` logs and
 * an `api_request` log of the same trace with `session.id` `apiSession`. The profile keeps the key of
 * a trace's records beside the trace (so it is not derived again for every record); a record with
 * another `session.id` must get that value's key, not the kept one.
 */
function traceWithApiRequestOf(llmSession: string | undefined, apiSession: string | undefined): RecordBatch {
  const traceId = hex(7, 32);
  const withSession = (s: string | undefined): Record<string, unknown> => (s === undefined ? {} : { 'session.id': s });
  const llm = (ms: number): RecordedSpan =>
    spanAt('qwen-code.llm_request', ms, { 'qwen-code.prompt_id': 'P########1', 'llm_request.context': 'interaction', ...withSession(llmSession) }, traceId);
  const log = (ms: number, attributes: Record<string, unknown>): RecordedLog => logAt(ms, attributes, traceId);
  const call = (ms: number, id: string): RecordedLog => log(ms, failingCall('P########1', id, llmSession));
  const api = log(40, { 'event.name': 'qwen-code.api_request', prompt_id: 'P########1', ...withSession(apiSession) });
  return {
    spans: [llm(10), llm(70)],
    logs: [call(20, 'c1'), call(30, 'c2'), api, call(50, 'c3'), call(60, 'c4')],
    metricCount: 0,
    ignoredCount: 0,
  };
}

describe("a trace's records are keyed by their own session.id, whatever key the trace keeps", () => {
  // An api_request log of a span session is no boundary: c1..c4 are one batch. One of another
  // session is: c1, c2 and c3, c4 are two batches (design: a batch is the calls between two model
  // requests of the prompt; wire reference §8: api_request logs are boundaries for logs-only sessions).
  it.each([
    { llmSession: 'S1', apiSession: 'S1', decisions: ['tracked'] },
    { llmSession: 'S1', apiSession: 'S2', decisions: ['tracked', 'tracked'] },
    { llmSession: 'S1', apiSession: undefined, decisions: ['tracked', 'tracked'] },
    { llmSession: undefined, apiSession: undefined, decisions: ['tracked'] },
    { llmSession: undefined, apiSession: 'P', decisions: ['tracked'] },
    { llmSession: undefined, apiSession: 'S2', decisions: ['tracked', 'tracked'] },
  ])('model requests of session $llmSession, api_request of session $apiSession', async ({ llmSession, apiSession, decisions }) => {
    const result = await replayRecords(traceWithApiRequestOf(llmSession, apiSession), { profile: 'qwen-code', mode: 'shadow' });
    const forP = result.decisions.filter((d) => d.promptId === 'P########1');
    expect(forP.map((d) => d.outcome.decision)).toEqual(decisions);
    expect(forP.map((d) => d.receipt.observations.map((o) => o.callId))).toEqual(decisions.length === 1 ? [['c1', 'c2', 'c3', 'c4']] : [['c1', 'c2'], ['c3', 'c4']]);
  });
});

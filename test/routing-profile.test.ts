import { describe, expect, it } from 'vitest';
import { FailureEngine } from '../src/engine/failure-engine.js';
import { RepetitionEngine } from '../src/engine/repetition-engine.js';
import { resolveRepetitionConfig } from '../src/core/repetition/config.js';
import { RecordedSpan } from '../src/otlp/records.js';
import type { RecordedLog } from '../src/otlp/records.js';
import { detectWireProfiles, WIRE_PROFILE_PRECEDENCE, WIRE_PROFILES } from '../src/profiles/registry.js';
import type { WireProfileName } from '../src/profiles/registry.js';
import { RoutingProfile } from '../src/profiles/router/routing-profile.js';
import type { RoutingProfileOptions, UnreadProducer } from '../src/profiles/router/routing-profile.js';
import type { ResourceView } from '../src/profiles/wire-profile.js';
import { engineSettings } from './helpers/engine-settings.js';

const resource = (serviceName?: string, extra: Record<string, unknown> = {}): ResourceView => ({
  attributes: { ...(serviceName === undefined ? {} : { 'service.name': serviceName }), ...extra },
});

let seq = 0;
function span(name: string, r: ResourceView | undefined, scopeName = '', attributes: Record<string, unknown> = {}): RecordedSpan {
  seq++;
  return new RecordedSpan({
    name,
    attributes,
    spanContext: { traceId: 'a'.repeat(32), spanId: seq.toString(16).padStart(16, '0'), traceFlags: 1 },
    parentSpanContext: undefined,
    startTime: [1_800_000_000, seq],
    endTime: [1_800_000_000, seq + 1],
    scopeName,
    resource: r,
  });
}

function log(eventName: string, r: ResourceView | undefined, scopeName = ''): RecordedLog {
  return { hrTime: [1_800_000_000, 0], attributes: { 'event.name': eventName }, spanContext: undefined, eventName, instrumentationScope: { name: scopeName }, body: undefined, resource: r };
}

function router(options: RoutingProfileOptions = {}): { routing: RoutingProfile; unread: UnreadProducer[] } {
  const engine = new FailureEngine(engineSettings({ mode: 'shadow' }));
  const repetition = new RepetitionEngine({
    mode: 'shadow',
    config: resolveRepetitionConfig({}).config,
    maxSessions: 100,
    sessionIdleMillis: 60_000,
    telemetryCanAct: true,
    now: () => 0,
    reportError: (e) => {
      throw e;
    },
  });
  const unread: UnreadProducer[] = [];
  return { routing: new RoutingProfile(engine, repetition, { onUnread: (p) => unread.push(p), ...options }), unread };
}

type Rec = { span: RecordedSpan } | { log: RecordedLog };
const feed = (routing: RoutingProfile, recs: readonly Rec[]): void => {
  for (const r of recs) {
    if ('span' in r) {
      routing.onSpanStart(r.span);
      routing.onSpanEnd(r.span);
    } else routing.onLogRecord(r.log);
  }
};

// Each row: one producer's records, the profile that reads it after them (wire names from the
// registry's declarations: qwen-code 0.24.4, Claude Code 2.1.328, the GenAI conventions, the design's batch span).
const QWEN = resource('qwen-code', { 'service.version': '0.24.4' });
const CLAUDE = resource('claude-code', { 'service.version': '2.1.328' });
const cases: { desc: string; records: () => Rec[]; expected: WireProfileName | undefined }[] = [
  { desc: 'qwen-code by service.name, on a record with no qwen-code name', records: () => [{ log: log('session.start', QWEN, 'qwen-code') }], expected: 'qwen-code' },
  { desc: 'qwen-code by span name, under another service name', records: () => [{ span: span('qwen-code.interaction', resource('my-build')) }], expected: 'qwen-code' },
  { desc: 'qwen-code by event name, with no Resource', records: () => [{ log: log('qwen-code.tool_call', undefined) }], expected: 'qwen-code' },
  { desc: 'claude-code by service.name', records: () => [{ log: log('claude_code.tool_result', CLAUDE) }], expected: 'claude-code' },
  { desc: 'claude-code by scope, with no Resource', records: () => [{ log: log('tool_result', undefined, 'com.anthropic.claude_code.events') }], expected: 'claude-code' },
  { desc: 'genai by operation span name', records: () => [{ span: span('execute_tool read_file', resource('in-house-agent')) }], expected: 'genai' },
  {
    desc: 'genai by gen_ai.operation.name and gen_ai.tool.name on a span',
    records: () => [{ span: span('tool', resource('in-house-agent'), '', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'x' }) }],
    expected: 'genai',
  },
  { desc: 'qwen-code spans named like GenAI operations stay qwen-code', records: () => [{ log: log('session.start', QWEN) }, { span: span('chat qwen3', QWEN) }], expected: 'qwen-code' },
  { desc: 'Claude Code beta spans named like GenAI operations stay claude-code', records: () => [{ span: span('execute_tool Bash', CLAUDE) }], expected: 'claude-code' },
  {
    desc: 'a producer first seen as genai moves to qwen-code when its qwen-code names arrive',
    records: () => [{ span: span('chat qwen3', resource('unnamed')) }, { span: span('qwen-code.tool_call', resource('unnamed')) }],
    expected: 'qwen-code',
  },
  { desc: 'a qwen-code producer that writes the design batch span moves to batch-span', records: () => [{ log: log('qwen-code.user_prompt', QWEN) }, { span: span('runToolCalls', QWEN) }], expected: 'batch-span' },
  {
    desc: 'OpenInference conventions (span kind attribute) are read by openinference',
    records: () => [{ span: span('ChatCompletion', resource('oi-agent'), '', { 'openinference.span.kind': 'LLM', 'tool.name': 'x' }) }],
    expected: 'openinference',
  },
  {
    desc: 'an OpenInference instrumentation scope alone is read by openinference',
    records: () => [{ span: span('ChatCompletion', resource('oi-agent'), 'openinference.instrumentation.openai') }],
    expected: 'openinference',
  },
  {
    desc: 'a producer of neither agent names nor conventions is read by no profile',
    records: () => [{ span: span('handle_request', resource('web-app'), 'com.example.web', { 'http.route': '/x' }) }],
    expected: undefined,
  },
];

describe('RoutingProfile: each producer read by the profile of the agent that produced it', () => {
  it.each(cases)('$desc', ({ records, expected }) => {
    const { routing } = router();
    const recs = records();
    feed(routing, recs);
    const last = recs[recs.length - 1] as Rec;
    const r = 'span' in last ? last.span.resource : last.log.resource;
    expect(routing.profileOf(r)).toBe(expected);
  });

  it('producers interleaved in one stream are each read by their own profile', () => {
    const { routing, unread } = router();
    const OI = resource('oi-agent');
    const WEB = resource('web-app');
    const GENAI = resource('in-house-agent');
    feed(routing, [
      { log: log('qwen-code.user_prompt', QWEN) },
      { log: log('claude_code.user_prompt', CLAUDE) },
      { span: span('invoke_agent helper', GENAI) },
      { span: span('qwen-code.interaction', QWEN) },
      { span: span('ChatCompletion', OI, 'openinference.instrumentation.openai') },
      { span: span('handle_request', WEB, 'com.example.web') },
      { span: span('execute_tool read_file', GENAI) },
    ]);
    expect([QWEN, CLAUDE, GENAI, OI, WEB].map((r) => routing.profileOf(r))).toEqual(['qwen-code', 'claude-code', 'genai', 'openinference', undefined]);
    expect(routing.profilesInUse).toEqual(['qwen-code', 'claude-code', 'openinference', 'genai']);
    // Unread records are named by their producer's service and scope names only (a span once, at its end).
    expect(unread).toEqual([{ serviceName: 'web-app', scopeName: 'com.example.web' }]);
    expect(routing.unreadRecords).toEqual({ spans: 1, logs: 0 });
    expect(routing.unreadProducers()).toEqual([
      { serviceName: 'web-app', scopeName: 'com.example.web', scopeNames: ['com.example.web'], records: 1, spans: 1 },
    ]);
  });

  it('a producer whose profile is known beforehand is read by it from its first record', () => {
    const { routing } = router({ producerProfile: (r) => (r?.attributes['service.name'] === 'qwen-code' ? 'batch-span' : undefined) });
    feed(routing, [{ log: log('qwen-code.user_prompt', QWEN) }]);
    expect(routing.profileOf(QWEN)).toBe('batch-span');
  });
});

describe('registry: how each profile is recognised', () => {
  it('every entry declares at least one name it is recognised by', () => {
    for (const [name, d] of Object.entries(WIRE_PROFILES)) {
      const r = d.recognise as Record<string, unknown>;
      const declared = ['serviceNames', 'scopeNames', 'scopeNamePrefixes', 'spanNamePrefixes', 'spanNames', 'spanNamePattern', 'spanAttributeKeys', 'eventNamePrefixes'].filter((k) => r[k] !== undefined);
      expect(declared.length, name).toBeGreaterThan(0);
    }
  });

  it('precedence: agent profiles in registry order, conventions (fallback) profiles after them', () => {
    const fallback = (n: WireProfileName): boolean => (WIRE_PROFILES[n].recognise as { fallback?: boolean }).fallback === true;
    const firstFallback = WIRE_PROFILE_PRECEDENCE.findIndex(fallback);
    expect(firstFallback).toBeGreaterThan(0);
    expect(WIRE_PROFILE_PRECEDENCE.slice(firstFallback).every(fallback)).toBe(true);
    expect(WIRE_PROFILE_PRECEDENCE.filter((n) => !fallback(n))).toEqual(Object.keys(WIRE_PROFILES).filter((n) => !fallback(n as WireProfileName)));
  });

  it('names only: a sample of names detects as before (qwen-code before genai, batch-span before qwen-code)', () => {
    const sample = (o: Partial<Record<'serviceNames' | 'scopeNames' | 'spanNames' | 'eventNames' | 'spanAttributeKeys', string[]>>) => ({
      serviceNames: new Set(o.serviceNames),
      scopeNames: new Set(o.scopeNames),
      spanNames: new Set(o.spanNames),
      eventNames: new Set(o.eventNames),
      spanAttributeKeys: new Set(o.spanAttributeKeys),
    });
    expect(detectWireProfiles(sample({ spanNames: ['qwen-code.interaction', 'chat qwen3'] }))).toEqual(['qwen-code', 'genai']);
    expect(detectWireProfiles(sample({ serviceNames: ['qwen-code'], spanNames: ['runToolCalls'] }))).toEqual(['batch-span', 'qwen-code']);
    expect(detectWireProfiles(sample({ scopeNames: ['com.anthropic.claude_code.events'] }))).toEqual(['claude-code']);
    expect(detectWireProfiles(sample({ spanAttributeKeys: ['gen_ai.operation.name'] }))).toEqual([]);
    expect(detectWireProfiles(sample({ spanAttributeKeys: ['gen_ai.operation.name', 'gen_ai.tool.name'] }))).toEqual(['genai']);
  });
});

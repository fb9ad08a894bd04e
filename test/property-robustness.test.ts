/**
 * R1: arbitrary span and log streams never make the host's `span.end()`, `logger.emit()`, the
 * control hook, `parseTelemetryText()` (except with `TelemetryParseError`) or `replayRecords()`
 * throw. Real SDK providers, as in test/helpers/setup.ts.
 */
import fc from 'fast-check';
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Attributes, Context, Span } from '@opentelemetry/api';
import type { HostLogRecord } from './helpers/setup.js';
import { setGlobalErrorHandler } from '@opentelemetry/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { GuardMode } from '../src/core/failure/types.js';
import { auditInvariants } from '../src/replay/audit.js';
import { parseTelemetryText, TelemetryParseError } from '../src/otlp/telemetry-file.js';
import { replayRecords } from '../src/replay/replay.js';
import { arbAttributes, arbQwenStream, guardedSdk } from './helpers/generators.js';
import type { SpanRef, StreamCommand } from './helpers/generators.js';

function sdk(mode: GuardMode, limits: { maxOpenPrompts: number; maxCallsPerBatch: number }) {
  return guardedSdk({ mode, ...limits });
}

const INVALID_PARENT = trace.setSpanContext(ROOT_CONTEXT, { traceId: 'not-a-trace', spanId: '', traceFlags: 1 });

/** A span or log view the SDK would never produce: missing fields, wrong types. */
function rawView(c: Extract<StreamCommand, { kind: 'raw' }>): Record<string, unknown> {
  const good = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
  return {
    name: c.name,
    attributes: c.attributes,
    spanContext: () => (c.badContext ? { traceId: 42, spanId: null } : good),
    parentSpanContext: c.badContext ? { spanId: 7 } : undefined,
    startTime: c.badContext ? undefined : [1, 2],
    endTime: c.badContext ? [Number.NaN, Number.NaN] : [2, 3],
    hrTime: c.badContext ? undefined : [1, 5],
    instrumentationScope: c.badContext ? undefined : { name: 'qwen-code' },
    eventName: c.badContext ? 42 : undefined,
  };
}

/** Execute a stream; every host-facing call must return normally. Returns the number of raw commands run. */
function play(s: ReturnType<typeof sdk>, commands: readonly StreamCommand[]): number {
  const spans: Span[] = [];
  const labels = new Map<string, Span>();
  const pick = (ref: SpanRef): Span | undefined =>
    typeof ref === 'string' ? labels.get(ref) : spans.length === 0 ? undefined : spans[ref % spans.length];
  let raws = 0;
  for (const c of commands) {
    switch (c.kind) {
      case 'start': {
        let ctx: Context = context.active();
        let root = false;
        if (c.parent === 'root') root = true;
        else if (c.parent === 'invalid') ctx = INVALID_PARENT;
        else if (c.parent !== 'none') {
          const p = pick(c.parent);
          if (p !== undefined) ctx = trace.setSpan(ROOT_CONTEXT, p);
        }
        const attributes = c.attributes as Attributes;
        let span: Span | undefined;
        expect(() => {
          span = s.tracer.startSpan(c.name, { root, attributes }, ctx);
        }).not.toThrow();
        if (span !== undefined) {
          spans.push(span);
          if (c.label !== undefined) labels.set(c.label, span);
        }
        break;
      }
      case 'set':
        expect(() => pick(c.span)?.setAttributes(c.attributes as Attributes)).not.toThrow();
        break;
      case 'status':
        expect(() => pick(c.span)?.setStatus({ code: 2, message: c.message })).not.toThrow();
        break;
      case 'end':
        // children may end after parents, spans may end twice, some never end
        expect(() => pick(c.span)?.end()).not.toThrow();
        break;
      case 'log': {
        const p = c.span === 'none' ? undefined : pick(c.span);
        expect(() =>
          s.logger.emit({
            eventName: c.eventName,
            attributes: c.attributes as HostLogRecord['attributes'],
            body: c.body as HostLogRecord['body'],
            context: p === undefined ? undefined : trace.setSpan(ROOT_CONTEXT, p),
          }),
        ).not.toThrow();
        break;
      }
      case 'hook': {
        const action = s.guard.control.afterToolBatch(c as never);
        expect(['none', 'remind', 'stop']).toContain(action.type);
        break;
      }
      case 'raw': {
        raws++;
        const v = rawView(c);
        if (c.which === 'start') expect(() => s.guard.spanProcessor.onStart(v as never, ROOT_CONTEXT)).not.toThrow();
        else if (c.which === 'end') expect(() => s.guard.spanProcessor.onEnd(v as never)).not.toThrow();
        else expect(() => s.guard.logRecordProcessor.onEmit(v as never)).not.toThrow();
        break;
      }
    }
  }
  return raws;
}

describe('R1: robustness of the in-process processors (fast-check, real SDK)', () => {
  afterEach(() => setGlobalErrorHandler(() => undefined));

  it('arbitrary span/log streams and hook calls never throw into the host, and Phase 1 invariants hold', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<GuardMode>('shadow', 'warn', 'enforce', 'off'),
        fc.record({ maxOpenPrompts: fc.integer({ min: 1, max: 4 }), maxCallsPerBatch: fc.integer({ min: 1, max: 4 }) }),
        arbQwenStream(),
        async (mode, limits, commands) => {
          const errors: unknown[] = [];
          setGlobalErrorHandler((e) => errors.push(e));
          const s = sdk(mode, limits);
          const raws = play(s, commands);
          expect(() => s.guard.sweep()).not.toThrow();
          await expect(s.shutdown()).resolves.toBeUndefined();
          // Records the SDK produced never make the guard fail internally (only hand-made views may).
          if (raws === 0) expect(errors).toEqual([]);
          const held = auditInvariants(s.decisions, [], { promptIds: new Set(), sessionIds: new Set() }).filter((r) => r.id !== 'no_sensitive_telemetry');
          for (const r of held) expect(r.violations, r.id).toEqual([]);
          for (const d of s.decisions) seen.add(d.outcome.decision);
          if (mode === "shadow") expect(s.decisions.every((d) => d.outcome.action.type === 'none')).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
    // not vacuous: the streams do reach the guard's decisions
    expect(seen.has('tracked')).toBe(true);
    expect(seen.has('warned') || seen.has('would_warn')).toBe(true);
  });

  it('huge values, duplicate ids and parents that never end are handled', () => {
    const errors: unknown[] = [];
    setGlobalErrorHandler((e) => errors.push(e));
    const s = sdk('enforce', { maxOpenPrompts: 3, maxCallsPerBatch: 2 });
    const huge = 'p'.repeat(1_000_000);
    const interaction = s.tracer.startSpan('qwen-code.interaction', { root: true, attributes: { 'qwen-code.prompt_id': huge } });
    const ctx = trace.setSpan(ROOT_CONTEXT, interaction);
    for (let i = 0; i < 50; i++) {
      const llm = s.tracer.startSpan('qwen-code.llm_request', { attributes: { 'qwen-code.prompt_id': huge } }, ctx);
      llm.end();
      for (let j = 0; j < 5; j++) {
        const tool = s.tracer.startSpan('qwen-code.tool', { attributes: { 'tool.call_id': 'dup', 'gen_ai.tool.name': huge } }, ctx);
        s.logger.emit({
          attributes: { 'event.name': 'qwen-code.tool_call', prompt_id: huge, call_id: 'dup', status: 'error', execution_status: 'error', error_type: huge, function_args: huge },
          context: trace.setSpan(ROOT_CONTEXT, tool),
        });
        expect(() => tool.end()).not.toThrow();
      }
      expect(s.guard.control.afterToolBatch({ promptId: huge, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true })).toEqual({ type: 'none' });
    }
    // the interaction span never ends
    expect(errors).toEqual([]);
    expect(s.guard.engine.openPromptCount).toBeLessThanOrEqual(3);
  });
});

// ---------------------------------------------------------------------------------------------
// parseTelemetryText / replayRecords
// ---------------------------------------------------------------------------------------------

const hr = fc.oneof(
  fc.tuple(fc.integer({ min: 1_795_976_000, max: 1_795_976_010 }), fc.integer({ min: 0, max: 999_999_999 })),
  fc.constantFrom<unknown>([0, 0], [], ['1', 2], null, [1e300, -5]),
);
const hexId = (n: number) => fc.oneof(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n }), fc.constantFrom('', 'zz', 42, null));
const ctxArb = fc.record({ traceId: fc.oneof(fc.constantFrom('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'), hexId(32)), spanId: hexId(16), traceFlags: fc.constantFrom(1, 0, 'x') });
const jsonAttributes = arbAttributes().map((a) => JSON.parse(JSON.stringify(a, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))) as Record<string, unknown>);

const sdkSpan = fc.record(
  {
    _spanContext: ctxArb,
    parentSpanContext: fc.option(ctxArb, { nil: undefined }),
    name: fc.constantFrom('qwen-code.interaction', 'qwen-code.llm_request', 'qwen-code.tool', 'qwen-code.tool.execution', 'qwen-code.subagent', 'POST'),
    attributes: jsonAttributes,
    startTime: hr,
    endTime: hr,
    status: fc.record({ code: fc.constantFrom(0, 1, 2), message: fc.string({ maxLength: 12 }) }),
  },
  { requiredKeys: ['name', 'endTime'] },
);
const sdkLog = fc.record(
  {
    attributes: jsonAttributes,
    _hrTime: hr,
    _spanContext: fc.option(ctxArb, { nil: undefined }),
    _body: fc.jsonValue({ maxDepth: 2 }),
    instrumentationScope: fc.constantFrom({ name: 'qwen-code' }, { name: 'repeated-tool-failure-guard' }, {}, null),
  },
  { requiredKeys: ['_hrTime'] },
);
const otlpValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ stringValue: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('qwen-code.tool_call', 'p1', 'error', 'file_not_found')) }),
    fc.record({ intValue: fc.oneof(fc.integer(), fc.constantFrom('12', 'x', '99999999999999999999')) }),
    fc.record({ boolValue: fc.jsonValue({ maxDepth: 0 }) }),
    fc.record({ bytesValue: fc.constantFrom('AAEC', '', '!!!') }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('v'), { maxLength: 3 }) }) }),
    fc.record({ kvlistValue: fc.record({ values: fc.array(fc.record({ key: fc.string({ maxLength: 4 }), value: tie('v') }), { maxLength: 3 }) }) }),
    fc.jsonValue({ maxDepth: 1 }),
  ),
})).v;
const otlpKvs = fc.array(
  fc.record({ key: fc.constantFrom('event.name', 'prompt_id', 'call_id', 'status', 'execution_status', 'error_type', 'qwen-code.prompt_id', 'tool.call_id', 'x'), value: otlpValue }),
  { maxLength: 6 },
);
const nanos = fc.oneof(fc.constantFrom('1795976000000000000', '0', '', 'abc', '-5'), fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String), fc.record({ low: fc.integer(), high: fc.integer() }));
const otlpRequest = fc.oneof(
  fc.record({
    resourceSpans: fc.array(
      fc.record({
        scopeSpans: fc.array(
          fc.record({
            scope: fc.record({ name: fc.constantFrom('qwen-code', 'repeated-tool-failure-guard') }),
            spans: fc.array(
              fc.record({ traceId: hexId(32), spanId: hexId(16), parentSpanId: hexId(16), name: fc.constantFrom('qwen-code.tool', 'qwen-code.llm_request', 'qwen-code.interaction', 'qwen-code.tool.execution'), attributes: otlpKvs, startTimeUnixNano: nanos, endTimeUnixNano: nanos }),
              { maxLength: 4 },
            ),
          }),
          { maxLength: 2 },
        ),
      }),
      { maxLength: 2 },
    ),
  }),
  fc.record({
    resourceLogs: fc.oneof(
      fc.array(
        fc.record({
          scopeLogs: fc.array(
            fc.record({ logRecords: fc.array(fc.record({ timeUnixNano: nanos, observedTimeUnixNano: nanos, attributes: otlpKvs, body: otlpValue, traceId: hexId(32), eventName: fc.jsonValue({ maxDepth: 0 }) }), { maxLength: 4 }) }),
            { maxLength: 2 },
          ),
        }),
        { maxLength: 2 },
      ),
      fc.jsonValue({ maxDepth: 1 }),
    ),
  }),
);
const anyObject = fc.oneof({ weight: 4, arbitrary: sdkSpan }, { weight: 4, arbitrary: sdkLog }, { weight: 2, arbitrary: otlpRequest }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });

/** Parse, and replay when it parsed; only TelemetryParseError may escape parsing. */
async function parseAndReplay(text: string, mode?: GuardMode): Promise<void> {
  let records;
  try {
    records = parseTelemetryText(text, 'gen.json');
  } catch (err) {
    if (!(err instanceof TelemetryParseError)) throw new Error(`parseTelemetryText threw ${String(err)}`, { cause: err });
    return;
  }
  await replayRecords(records, mode === undefined ? {} : { mode });
}

describe('R1: robustness of parseTelemetryText and replayRecords (fast-check)', () => {
  afterEach(() => setGlobalErrorHandler(() => undefined));

  it('arbitrary text: parse throws only TelemetryParseError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: fc.constantFrom(...'{}[]"\\\n ,:0a'), maxLength: 200 })), (text) =>
        parseAndReplay(text),
      ),
      { numRuns: 300 },
    );
  });

  it('arbitrary SDK-outfile and OTLP objects, pretty or compact, truncated or spliced: parse throws only TelemetryParseError; replay never throws', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(anyObject, { minLength: 1, maxLength: 12 }),
        fc.constantFrom<'pretty' | 'compact' | 'lines'>('pretty', 'compact', 'lines'),
        fc.option(fc.tuple(fc.nat(), fc.constantFrom('', '}', '{', '"', '\\', 'x', '\n}\n')), { nil: undefined }),
        fc.constantFrom<GuardMode | undefined>(undefined, 'shadow', 'warn', 'enforce'),
        async (objects, format, damage, mode) => {
          let text = objects.map((o) => (format === 'pretty' ? JSON.stringify(o, null, 2) : JSON.stringify(o))).join(format === 'compact' ? '' : '\n');
          if (damage !== undefined) {
            const at = damage[0] % (text.length + 1);
            text = text.slice(0, at) + damage[1] + (damage[1] === '' ? '' : text.slice(at));
          }
          await parseAndReplay(text, mode);
        },
      ),
      { numRuns: 250 },
    );
  });

  // Regression: `anyValue` once recursed without limit, so a deeply nested OTLP AnyValue overflowed the
  // stack (a RangeError, not a TelemetryParseError). Nesting is now cut at a fixed depth.
  it('a deeply nested OTLP AnyValue gives records or TelemetryParseError, never a RangeError', async () => {
    const depth = 20_000;
    const value = '{"arrayValue":{"values":['.repeat(depth) + '{"stringValue":"x"}' + ']}}'.repeat(depth);
    const text = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1","attributes":[{"key":"a","value":${value}}]}]}]}]}`;
    await parseAndReplay(text);
  });
});

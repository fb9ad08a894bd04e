/**
 * Options never throw (issue 13 item 4; issue 12 items 6 and 7): one validation pass, an invalid
 * value → its default plus one diagnostic; the mode parsed like the environment variable
 * (case-insensitive, invalid → shadow); every emitted `mode` label from the closed vocabulary; and
 * the diagnostic visible in the README Quickstart order with a real NodeSDK.
 */
import { spawnSync } from 'node:child_process';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS, validateOptions } from '../src/otel/config.js';
import { flushGuardDiagnostics, GUARD_WARNING_TYPE } from '../src/otel/diagnostics.js';
import { createRepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';
import { guardedSdk, modelRequest, startInteraction, toolCall } from './helpers/generators.js';
import { WIRE_PROFILES } from '../src/profiles/registry.js';

const ENV_VAR = 'QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD';
const MODES = ['off', 'shadow', 'warn', 'enforce'];

interface Case {
  readonly desc: string;
  readonly options: unknown;
  /** Expected resolved fields. */
  readonly expected: Record<string, unknown>;
  /** Diagnostics expected: each must match one, in order. */
  readonly diagnostics: readonly RegExp[];
}

const cases: Case[] = [
  { desc: 'no options', options: undefined, expected: { mode: 'shadow' }, diagnostics: [] },
  { desc: 'options = null', options: null, expected: { mode: 'shadow', namespace: 'qwen-code' }, diagnostics: [/options must be an object/] },
  { desc: "options = 'enforce' (a string)", options: 'enforce', expected: { mode: 'shadow' }, diagnostics: [/options must be an object/] },
  { desc: "mode 'ENFORCE' is enforce", options: { mode: 'ENFORCE' }, expected: { mode: 'enforce', repetitionMode: 'enforce' }, diagnostics: [] },
  { desc: "mode ' Warn ' is warn", options: { mode: ' Warn ' }, expected: { mode: 'warn' }, diagnostics: [] },
  { desc: "mode 'bogus' → shadow", options: { mode: 'bogus' }, expected: { mode: 'shadow', repetitionMode: 'shadow' }, diagnostics: [/^mode must be one of off, shadow, warn, enforce/] },
  { desc: 'mode 3 → shadow', options: { mode: 3 }, expected: { mode: 'shadow' }, diagnostics: [/^mode must be/] },
  { desc: "mode '' → shadow", options: { mode: '' }, expected: { mode: 'shadow' }, diagnostics: [/^mode must be/] },
  { desc: 'mode null → shadow', options: { mode: null }, expected: { mode: 'shadow' }, diagnostics: [/^mode must be/] },
  { desc: "mode 'bogus' does not fall back to the environment", options: { mode: 'bogus', env: { [ENV_VAR]: 'enforce' } }, expected: { mode: 'shadow' }, diagnostics: [/^mode must be/] },
  { desc: 'env mode, any case', options: { env: { [ENV_VAR]: 'Enforce' } }, expected: { mode: 'enforce' }, diagnostics: [] },
  { desc: 'env mode invalid → shadow', options: { env: { [ENV_VAR]: 'loud' } }, expected: { mode: 'shadow' }, diagnostics: [/invalid value/] },
  { desc: 'non-string env value', options: { env: { [ENV_VAR]: 5 } }, expected: { mode: 'shadow' }, diagnostics: [/must be a string/] },
  { desc: 'env = null', options: { env: null }, expected: { mode: 'shadow' }, diagnostics: [/env must be an object/] },
  { desc: "repetition.mode 'WARN'", options: { mode: 'shadow', repetition: { mode: 'WARN' } }, expected: { repetitionMode: 'warn' }, diagnostics: [] },
  { desc: "repetition.mode 'x' → the guard's mode", options: { mode: 'enforce', repetition: { mode: 'x' } }, expected: { repetitionMode: 'enforce' }, diagnostics: [/^repetition.mode must be/] },
  { desc: 'repetition = 7', options: { repetition: 7 }, expected: { repetition: { enabled: true, warn: 3, abort: 5, windowSize: 0 } }, diagnostics: [/repetition must be an object/] },
  { desc: "repetition.warn '3'", options: { repetition: { warn: '3' } }, expected: { repetition: { enabled: true, warn: 3, abort: 5, windowSize: 0 } }, diagnostics: [/warn must be an integer/] },
  { desc: 'namespace: 5', options: { namespace: 5 }, expected: { namespace: 'qwen-code' }, diagnostics: [/^namespace must be/] },
  { desc: "namespace '  my-agent '", options: { namespace: '  my-agent ' }, expected: { namespace: 'my-agent' }, diagnostics: [] },
  { desc: "namespace 'a b{c}'", options: { namespace: 'a b{c}' }, expected: { namespace: 'qwen-code' }, diagnostics: [/^namespace must be/] },
  { desc: "profile: 'bogus'", options: { profile: 'bogus' }, expected: { profile: 'auto' }, diagnostics: [new RegExp(`^profile must be one of auto, ${Object.keys(WIRE_PROFILES).join(', ')} or a factory function; using auto$`)] },
  { desc: "profile: '__proto__'", options: { profile: '__proto__' }, expected: { profile: 'auto' }, diagnostics: [/^profile must be/] },
  { desc: 'profile: 5', options: { profile: 5 }, expected: { profile: 'auto' }, diagnostics: [/^profile must be/] },
  { desc: "profile: 'auto'", options: { profile: 'auto' }, expected: { profile: 'auto', namespace: 'qwen-code' }, diagnostics: [] },
  { desc: 'producers: 5', options: { producers: 5 }, expected: { producers: undefined }, diagnostics: [/^producers must be a ProducerRecognizer/] },
  { desc: "offMessageTypes: 'acp_prompt' (a string)", options: { offMessageTypes: 'acp_prompt' }, expected: { offMessageTypes: ['cron'] }, diagnostics: [/^offMessageTypes must be an array of strings/] },
  { desc: 'offMessageTypes: [1]', options: { offMessageTypes: [1] }, expected: { offMessageTypes: ['cron'] }, diagnostics: [/^offMessageTypes must be/] },
  { desc: "offMessageTypes: ['cron', 'notification']", options: { offMessageTypes: ['cron', 'notification'] }, expected: { offMessageTypes: ['cron', 'notification'] }, diagnostics: [] },
  { desc: 'maxOpenPrompts: -1', options: { maxOpenPrompts: -1 }, expected: { maxOpenPrompts: 10_000 }, diagnostics: [/^maxOpenPrompts must be an integer >= 1; using 10000/] },
  { desc: "maxOpenPrompts: '5'", options: { maxOpenPrompts: '5' }, expected: { maxOpenPrompts: 10_000 }, diagnostics: [/^maxOpenPrompts must be/] },
  { desc: 'maxOpenPrompts: null', options: { maxOpenPrompts: null }, expected: { maxOpenPrompts: 10_000 }, diagnostics: [/^maxOpenPrompts must be/] },
  { desc: 'maxCallsPerBatch: 1.5', options: { maxCallsPerBatch: 1.5 }, expected: { maxCallsPerBatch: 1024 }, diagnostics: [/^maxCallsPerBatch must be/] },
  { desc: 'promptIdleMillis: NaN', options: { promptIdleMillis: Number.NaN }, expected: { promptIdleMillis: 7_200_000 }, diagnostics: [/^promptIdleMillis must be an integer >= 1000/] },
  { desc: 'sweepIntervalMillis: Infinity', options: { sweepIntervalMillis: Number.POSITIVE_INFINITY }, expected: { sweepIntervalMillis: 60_000 }, diagnostics: [/^sweepIntervalMillis must be/] },
  { desc: 'evictedPromptFilterBytes: 8', options: { evictedPromptFilterBytes: 8 }, expected: { evictedPromptFilterBytes: 1_048_576 }, diagnostics: [/^evictedPromptFilterBytes must be an integer >= 64/] },
  { desc: "clock: 'x'", options: { clock: 'x' }, expected: { clock: Date.now }, diagnostics: [/^clock must be a function/] },
  { desc: "controlHookRequired: 'no'", options: { controlHookRequired: 'no' }, expected: { controlHookRequired: true }, diagnostics: [/^controlHookRequired must be a boolean/] },
  { desc: 'meterProvider: {}', options: { meterProvider: {} }, expected: { meterProvider: undefined }, diagnostics: [/^meterProvider must be a MeterProvider/] },
  { desc: 'loggerProvider: 1', options: { loggerProvider: 1 }, expected: { loggerProvider: undefined }, diagnostics: [/^loggerProvider must be a LoggerProvider/] },
  { desc: 'batchSpan: "runToolCalls"', options: { batchSpan: 'runToolCalls' }, expected: { batchSpan: {} }, diagnostics: [/^batchSpan must be an object/] },
  {
    desc: 'several invalid options: one diagnostic each',
    options: { namespace: 5, profile: 'bogus', maxOpenPrompts: 0, mode: 'bogus' },
    expected: { mode: 'shadow', profile: 'auto', namespace: 'qwen-code', maxOpenPrompts: 10_000 },
    diagnostics: [/^mode/, /^profile/, /^namespace/, /^maxOpenPrompts/],
  },
];

describe('validateOptions', () => {
  it.each(cases)('$desc', ({ options, expected, diagnostics }) => {
    const saved = process.env[ENV_VAR];
    delete process.env[ENV_VAR];
    try {
      const v = validateOptions(options, () => undefined);
      for (const [key, value] of Object.entries(expected)) expect((v.options as unknown as Record<string, unknown>)[key], key).toEqual(value);
      expect(v.diagnostics).toHaveLength(diagnostics.length);
      diagnostics.forEach((re, i) => expect(v.diagnostics[i]).toMatch(re));
      expect(MODES).toContain(v.options.mode);
      expect(MODES).toContain(v.options.repetitionMode);
    } finally {
      if (saved !== undefined) process.env[ENV_VAR] = saved;
    }
  });

  it('a diagnostic never repeats the invalid value', () => {
    const secret = 'hunter2 secret!';
    const v = validateOptions({ mode: secret, namespace: secret, profile: secret, env: { [ENV_VAR]: secret }, offMessageTypes: secret, clock: secret }, () => undefined);
    expect(v.diagnostics.length).toBeGreaterThanOrEqual(5);
    for (const d of v.diagnostics) expect(d).not.toContain(secret);
  });

  it('a throwing getter is an invalid option, not an exception', () => {
    const options = Object.defineProperty({}, 'mode', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const v = validateOptions(options, () => undefined);
    expect(v.options.mode).toBe(DEFAULT_OPTIONS.mode);
    expect(v.diagnostics).toEqual(['mode could not be read; using its default']);
  });

  it('a clock returning NaN is replaced by Date.now for that reading, reported once', () => {
    const reported: string[] = [];
    const v = validateOptions({ clock: () => Number.NaN }, (m) => reported.push(m));
    const before = Date.now();
    expect(v.options.clock()).toBeGreaterThanOrEqual(before);
    expect(v.options.clock()).toBeGreaterThanOrEqual(before);
    expect(reported).toHaveLength(1);
  });
});

describe('the guard with invalid options', () => {
  const seen: string[] = [];
  beforeEach(() => {
    const note = (m: string) => void seen.push(m);
    diag.setLogger({ error: note, warn: note, info: note, debug: note, verbose: note }, DiagLogLevel.WARN);
  });
  afterEach(() => {
    flushGuardDiagnostics();
    diag.disable();
  });

  it.each(cases)('never throws, one diag line a diagnostic: $desc', async ({ options, diagnostics }) => {
    const saved = process.env[ENV_VAR];
    delete process.env[ENV_VAR];
    seen.length = 0;
    try {
      const guard = createRepeatedToolFailureGuard(options as never);
      expect(MODES).toContain(guard.mode);
      await guard.shutdown();
      expect(seen).toHaveLength(diagnostics.length);
      for (const line of seen) expect(line).toMatch(/^RepeatedToolFailureGuard: /);
    } finally {
      if (saved !== undefined) process.env[ENV_VAR] = saved;
    }
  });

  it("mode 'ENFORCE' acts like enforce and labels its telemetry 'enforce'", async () => {
    const s = guardedSdk({ mode: 'ENFORCE' }, false);
    const span = startInteraction(s.tracer, 'p1');
    const actions: string[] = [];
    for (let b = 0; b < 5; b++) {
      modelRequest(s.tracer, s.logger, span, 'p1');
      toolCall(s.tracer, s.logger, span, 'p1', { callId: `c${2 * b}` });
      toolCall(s.tracer, s.logger, span, 'p1', { callId: `c${2 * b + 1}` });
      actions.push(s.guard.control.afterToolBatch({ promptId: 'p1', hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true }).type);
    }
    expect(actions).toEqual(['none', 'none', 'none', 'remind', 'stop']);
    const labels = s.guardLogs
      .getFinishedLogRecords()
      .filter((r) => r.attributes['event.name'] === 'qwen-code.repeated_tool_failure_guard')
      .map((r) => r.attributes.mode);
    expect(labels.length).toBeGreaterThan(0);
    expect(new Set(labels)).toEqual(new Set(['enforce']));
    await s.shutdown();
  });

  it("mode 'bogus' runs in shadow and every emitted mode label is 'shadow'", async () => {
    const s = guardedSdk({ mode: 'bogus' }, false);
    const span = startInteraction(s.tracer, 'p1');
    for (let b = 0; b < 5; b++) {
      modelRequest(s.tracer, s.logger, span, 'p1');
      toolCall(s.tracer, s.logger, span, 'p1', { callId: `c${2 * b}` });
      toolCall(s.tracer, s.logger, span, 'p1', { callId: `c${2 * b + 1}` });
    }
    span.end();
    const logs = s.guardLogs.getFinishedLogRecords();
    expect(logs.map((r) => r.attributes.decision)).toContain('would_stop');
    expect(new Set(logs.map((r) => r.attributes.mode))).toEqual(new Set(['shadow']));
    const points = await s.metricPoints();
    expect(points.length).toBeGreaterThan(0);
    for (const p of points) if ('mode' in p.attributes) expect(p.attributes.mode).toBe('shadow');
    await s.shutdown();
  });

  it("offMessageTypes as a string does not turn acp_prompt off", async () => {
    const s = guardedSdk({ offMessageTypes: 'acp_prompt' as never }, false);
    const span = startInteraction(s.tracer, 'p1');
    for (let b = 0; b < 5; b++) {
      modelRequest(s.tracer, s.logger, span, 'p1');
      toolCall(s.tracer, s.logger, span, 'p1', { callId: `c${2 * b}` });
      toolCall(s.tracer, s.logger, span, 'p1', { callId: `c${2 * b + 1}` });
    }
    span.end();
    expect(s.decisions.map((d) => d.outcome.decision)).toContain('would_warn');
    await s.shutdown();
  });

  it("clock: 'x' still judges, and a NaN clock keeps every diagnostic log with a valid timestamp", async () => {
    for (const clock of ['x', () => Number.NaN]) {
      const s = guardedSdk({ clock: clock as never }, false);
      const span = startInteraction(s.tracer, 'p1');
      for (let b = 0; b < 5; b++) {
        modelRequest(s.tracer, s.logger, span, 'p1');
        toolCall(s.tracer, s.logger, span, 'p1', { callId: `c${2 * b}` });
        toolCall(s.tracer, s.logger, span, 'p1', { callId: `c${2 * b + 1}` });
      }
      span.end();
      const logs = s.guardLogs.getFinishedLogRecords().filter((r) => r.attributes['event.name'] === 'qwen-code.repeated_tool_failure_guard');
      expect(logs.map((r) => r.attributes.decision)).toEqual(['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop']);
      for (const r of logs) expect(r.hrTime[0]).toBeGreaterThan(1_600_000_000);
      await s.shutdown();
    }
  });
});

describe('the invalid-mode diagnostic in the README Quickstart order (guard, then NodeSDK), in a real Node process', () => {
  // `npm test` builds first (pretest): the script imports the package as a user's agent does.
  const ENTRY = new URL('../dist/index.js', import.meta.url).href;
  const SCRIPT = `
    import { NodeSDK } from '@opentelemetry/sdk-node';
    import { trace } from '@opentelemetry/api';
    import { createRepeatedToolFailureGuard } from ${JSON.stringify(ENTRY)};
    const guard = createRepeatedToolFailureGuard({ mode: 'bogus' });
    const sdk = new NodeSDK({ spanProcessors: [guard.spanProcessor], logRecordProcessors: [guard.logRecordProcessor] });
    sdk.start();
    trace.getTracer('agent').startActiveSpan('work', (span) => span.end());
    await sdk.shutdown();
    process.stdout.write('mode=' + guard.mode);
  `;
  function quickstart(env: Record<string, string>) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      encoding: 'utf8',
      timeout: 30_000,
      cwd: new URL('..', import.meta.url).pathname,
      env: { PATH: process.env.PATH ?? '', OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none', ...env },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  const MESSAGE = 'RepeatedToolFailureGuard: mode must be one of off, shadow, warn, enforce';

  it('with OTEL_LOG_LEVEL=warn, NodeSDK installs its diag logger after the guard is created, and the diagnostic reaches it once', () => {
    const r = quickstart({ OTEL_LOG_LEVEL: 'warn' });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('mode=shadow');
    expect(r.stderr.split(MESSAGE)).toHaveLength(2);
    expect(r.stderr).not.toContain(GUARD_WARNING_TYPE);
  });

  it('without a diag logger, it is a Node process warning on stderr, once', () => {
    const r = quickstart({});
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('mode=shadow');
    expect(r.stderr).toContain(`${GUARD_WARNING_TYPE}: ${MESSAGE}`);
    expect(r.stderr.split(MESSAGE)).toHaveLength(2);
  });
});

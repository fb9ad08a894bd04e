import { setGlobalErrorHandler } from '@opentelemetry/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setup, twoFailures } from './helpers/setup.js';
import type { ToolCallSpec } from './helpers/setup.js';

const P = 'sess-1########1';
const decisionsOf = (s: ReturnType<typeof setup>) => s.decisions.map((d) => d.outcome.decision);

describe('qwen-code profile, in-process with a real SDK', () => {
  afterEach(() => setGlobalErrorHandler(() => undefined));

  it('closes a batch at the next interaction llm_request and at the interaction end', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    s.agent.batch(P, twoFailures());
    expect(s.decisions).toHaveLength(0);
    s.agent.batch(P, twoFailures());
    expect(s.decisions.map((d) => d.batch)).toEqual([1]);
    s.agent.endPrompt(P);
    expect(s.decisions.map((d) => [d.batch, d.outcome.decision, d.outcome.failureCount])).toEqual([
      [1, 'tracked', 2],
      [2, 'tracked', 4],
    ]);
    await s.shutdown();
  });

  it('issue #10887: nine failing git calls over three batches give tracked -> would_warn -> would_stop in shadow, with no action', async () => {
    const s = setup();
    const git = (): ToolCallSpec => ({ name: 'run_shell_command', errorType: 'shell_execute_error', errorText: 'fatal: not a git repository (or any of the parent directories): .git' });
    s.agent.startPrompt(P);
    s.agent.batch(P, [git(), git(), git(), git()]);
    s.agent.batch(P, [git(), git(), git(), git()]);
    s.agent.batch(P, [git()]);
    s.agent.modelRequest(P); // the ninth result still reaches the main continuation
    s.agent.endPrompt(P);
    expect(decisionsOf(s)).toEqual(['tracked', 'would_warn', 'would_stop']);
    expect(s.decisions.every((d) => d.outcome.action.type === 'none')).toBe(true);
    expect(s.guardEvents().map((r) => r.attributes.decision)).toEqual(['tracked', 'would_warn', 'would_stop']);
    expect(s.guardEvents()[2]?.attributes).toMatchObject({
      'event.name': 'qwen-code.repeated_tool_failure_guard',
      prompt_id: P,
      route: 'acp_foreground',
      mode: 'shadow',
      phase_before: 'warned',
      phase_after: 'latched',
      failure_count_bucket: '8+',
      batch_count_bucket: '3+',
      candidate_ordinal: 1,
      terminal_status: 'error',
      execution_status: 'error',
      execution_error_type: 'shell_execute_error',
      tool_type: 'native',
    });
    expect(s.loopEvents()).toHaveLength(0);
    expect(s.guard.control.afterToolBatch({ promptId: P, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true })).toEqual({ type: 'none' });
    await s.shutdown();
  });

  it('reads spans and logs in either order (log after the tool span ended, or first)', async () => {
    for (const logFirst of [true, false]) {
      const s = setup();
      s.agent.startPrompt(P);
      s.agent.batch(P, [{ logFirst }, { logFirst }]);
      s.agent.batch(P, [{ logFirst }, { logFirst }]);
      s.agent.endPrompt(P);
      expect(decisionsOf(s)).toEqual(['tracked', 'tracked']);
      expect(s.decisions.every((d) => d.receipt.complete)).toBe(true);
      await s.shutdown();
    }
  });

  it('prefers the execution span error type over the terminal error type of the log', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    s.agent.modelRequest(P);
    // A post-execution step replaced the terminal error type; the frozen execution type wins.
    s.agent.toolCall(P, { errorType: 'file_not_found' });
    s.agent.endPrompt(P);
    expect(s.decisions[0]?.receipt.observations[0]).toMatchObject({ executionErrorType: 'file_not_found', policyToolName: 'read_file', toolType: 'native' });
    await s.shutdown();
  });

  it('a call whose tool_call log is in is settled, even when its tool span ends after the next model request starts', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    s.agent.batch(P, twoFailures());
    s.agent.modelRequest(P);
    const end = s.agent.toolCall(P, { leaveOpen: true, logFirst: true });
    s.agent.modelRequest(P); // boundary while the call is still running
    end(); // the span end after the batch was judged: dropped as late
    s.agent.endPrompt(P);
    // Design: a receipt is complete when every admitted call has its settled record (the tool_call
    // log); the span end's order against the next request must not decide it (issue 12, item 1).
    expect(s.decisions.map((d) => [d.outcome.decision, d.outcome.resetReason, d.receipt.complete, d.outcome.failureCount])).toEqual([
      ['tracked', undefined, true, 2],
      ['tracked', undefined, true, 3],
    ]);
    expect(s.guard.engine.lateRecords).toBeGreaterThan(0);
    await s.shutdown();
  });

  it('a call with a span but no tool_call log makes the batch incomplete', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    s.agent.batch(P, twoFailures());
    s.agent.batch(P, [{}, { noLog: true }]);
    s.agent.endPrompt(P);
    expect(s.decisions.map((d) => d.outcome.resetReason)).toEqual([undefined, 'incomplete']);
    await s.shutdown();
  });

  it('interleaved prompts do not mix', async () => {
    const s = setup();
    const Q = 'sess-2########1';
    s.agent.startPrompt(P);
    s.agent.startPrompt(Q);
    for (let i = 0; i < 5; i++) {
      s.agent.modelRequest(P);
      s.agent.modelRequest(Q);
      s.agent.toolCall(P, {});
      s.agent.toolCall(Q, { name: 'glob', status: 'success' });
      s.agent.toolCall(P, {});
    }
    s.agent.endPrompt(P);
    s.agent.endPrompt(Q);
    const p = s.decisions.filter((d) => d.promptId === P).map((d) => d.outcome.decision);
    const q = s.decisions.filter((d) => d.promptId === Q).map((d) => d.outcome.decision);
    expect(p).toEqual(['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop']);
    expect(q).toEqual(['none', 'none', 'none', 'none', 'none']);
    await s.shutdown();
  });

  it('other-tool successes in the batch are neutral; a same-tool success resets', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    s.agent.batch(P, [{}, { name: 'glob', status: 'success' }, {}]);
    s.agent.batch(P, [{ name: 'glob', status: 'success' }]);
    s.agent.batch(P, [{ status: 'success' }]);
    s.agent.endPrompt(P);
    expect(s.decisions.map((d) => [d.outcome.decision, d.outcome.resetReason])).toEqual([
      ['tracked', undefined],
      ['none', undefined],
      ['reset', 'success'],
    ]);
    await s.shutdown();
  });

  it('subagent-internal calls and side-query requests are out of scope', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    s.agent.batch(P, twoFailures());
    s.agent.modelRequest(P, 'subagent'); // not a boundary
    s.agent.toolCall(P, {});
    s.agent.endPrompt(P);
    expect(s.decisions.map((d) => [d.batch, d.receipt.observations.length])).toEqual([[1, 3]]);
    await s.shutdown();
  });

  it('cron prompts are off: no decision, no telemetry', async () => {
    const s = setup();
    s.agent.startPrompt(P, 'cron');
    for (let i = 0; i < 6; i++) s.agent.batch(P, twoFailures());
    s.agent.endPrompt(P);
    expect(s.decisions).toHaveLength(0);
    expect(s.guardLogs.getFinishedLogRecords()).toHaveLength(0);
    await s.shutdown();
  });

  it('headless prompts are reported on the headless route', async () => {
    const s = setup();
    s.agent.startPrompt(P, 'userQuery');
    s.agent.batch(P, twoFailures());
    s.agent.endPrompt(P);
    expect(s.guardEvents()[0]?.attributes.route).toBe('headless');
    await s.shutdown();
  });

  it('a final batch that holds a cancelled call (the turn ended on a permission cancel) is not reduced', async () => {
    const s = setup();
    const unjudged: string[] = [];
    s.guard.addListener({ onUnjudgedBatch: (_p, reason) => unjudged.push(reason) });
    s.agent.startPrompt(P);
    s.agent.batch(P, twoFailures());
    s.agent.batch(P, [{ name: 'write_file', status: 'cancelled', executionStatus: 'not_started' }]);
    s.agent.endPrompt(P);
    expect(decisionsOf(s)).toEqual(['tracked']);
    expect(unjudged).toEqual(['cancelled_call']);
    await s.shutdown();
  });

  it('a turn stopped by another loop protection records nothing for its final batch', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    s.agent.batch(P, twoFailures());
    s.agent.batch(P, twoFailures());
    s.agent.loopDetected(P, 'turn_tool_call_cap');
    s.agent.endPrompt(P, 'error');
    expect(decisionsOf(s)).toEqual(['tracked']);
    await s.shutdown();
  });
});

describe('the control hook (warn and enforce)', () => {
  afterEach(() => setGlobalErrorHandler(() => undefined));
  const drainOk = { hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true };

  function loop(mode: 'warn' | 'enforce', batches: number, drain = drainOk) {
    const s = setup({ mode });
    s.agent.startPrompt(P);
    const actions = [];
    for (let i = 0; i < batches; i++) {
      s.agent.batch(P, twoFailures());
      actions.push(s.guard.control.afterToolBatch({ promptId: P, ...drain }));
    }
    return { s, actions };
  }

  it('warn injects exactly one reminder per candidate and never stops', async () => {
    const { s, actions } = loop('warn', 6);
    expect(actions.map((a) => a.type)).toEqual(['none', 'none', 'none', 'remind', 'none', 'none']);
    expect(decisionsOf(s)).toEqual(['tracked', 'tracked', 'tracked', 'warned', 'would_stop', 'none']);
    expect(s.loopEvents()).toHaveLength(0);
    await s.shutdown();
  });

  it('enforce reminds, then stops after the post-reminder batch settles, with one loop event kept out of RUM', async () => {
    const { s, actions } = loop('enforce', 5);
    expect(actions.map((a) => a.type)).toEqual(['none', 'none', 'none', 'remind', 'stop']);
    expect(actions[3]).toEqual({
      type: 'remind',
      text: 'System: the same tool execution has failed repeatedly for the same classified reason. Do not repeat the same approach. Inspect the returned result, change the approach or required preconditions, or explain the blocker.',
    });
    expect(actions[4]).toEqual({
      type: 'stop',
      text: 'System: Automatic continuation stopped because the same tool execution failure continued after a corrective reminder. New user input is required to continue.',
    });
    const loops = s.loopEvents();
    expect(loops).toHaveLength(1);
    expect(loops[0]?.attributes).toMatchObject({
      'event.name': 'loop_detected',
      loop_type: 'repeated_tool_execution_failure',
      prompt_id: P,
      'session.id': 'sess-1',
      'qwen-code.rum.exclude': true,
    });
    expect(loops[0]?.instrumentationScope.name).toBe('repeated-tool-failure-guard');
    // the model requests after the stop never happen; the prompt ends
    s.agent.endPrompt(P, 'error');
    expect(decisionsOf(s)).toEqual(['tracked', 'tracked', 'tracked', 'warned', 'stopped']);
    await s.shutdown();
  });

  it('queued input takes precedence over the stop', async () => {
    const s = setup({ mode: 'enforce' });
    s.agent.startPrompt(P);
    const actions = [];
    for (let i = 0; i < 4; i++) {
      s.agent.batch(P, twoFailures());
      actions.push(s.guard.control.afterToolBatch({ promptId: P, ...drainOk }));
    }
    s.agent.batch(P, twoFailures());
    actions.push(s.guard.control.afterToolBatch({ promptId: P, hasExternalInput: false, hasQueuedPrompt: true, inputReliable: true }));
    expect(actions.map((a) => a.type)).toEqual(['none', 'none', 'none', 'remind', 'none']);
    expect(s.decisions[4]?.outcome.resetReason).toBe('queued_prompt');
    await s.shutdown();
  });

  it('cancellation takes precedence over the stop', async () => {
    const s = setup({ mode: 'enforce' });
    s.agent.startPrompt(P);
    for (let i = 0; i < 4; i++) {
      s.agent.batch(P, twoFailures());
      s.guard.control.afterToolBatch({ promptId: P, ...drainOk });
    }
    s.agent.batch(P, [{}, { status: 'cancelled', executionStatus: 'cancelled' }]);
    expect(s.guard.control.afterToolBatch({ promptId: P, ...drainOk })).toEqual({ type: 'none' });
    expect(s.decisions[4]?.outcome.resetReason).toBe('cancelled');
    await s.shutdown();
  });

  it('an unreliable drain resets once and disables enforcement for the prompt', async () => {
    const { s, actions } = loop('enforce', 6, { hasExternalInput: false, hasQueuedPrompt: false, inputReliable: false });
    expect(actions.every((a) => a.type === 'none')).toBe(true);
    expect(s.guardEvents().map((r) => [r.attributes.decision, r.attributes.reset_reason, r.attributes.phase_before, r.attributes.phase_after])).toEqual([
      ['reset', 'unreliable_input', 'idle', 'idle'],
    ]);
    await s.shutdown();
  });

  it('a Session that never calls the hook gets no action: the batch counts as an unreliable drain', async () => {
    const s = setup({ mode: 'enforce' });
    s.agent.startPrompt(P);
    for (let i = 0; i < 6; i++) s.agent.batch(P, twoFailures());
    s.agent.endPrompt(P);
    expect(s.decisions.every((d) => d.outcome.action.type === 'none')).toBe(true);
    expect(s.decisions[0]?.outcome).toMatchObject({ decision: 'reset', resetReason: 'unreliable_input' });
    expect(s.decisions.slice(1).every((d) => d.outcome.decision === 'none')).toBe(true);
    await s.shutdown();
  });

  it('channel prompts are forced off', async () => {
    const s = setup({ mode: 'enforce' });
    s.agent.startPrompt(P);
    const actions = [];
    for (let i = 0; i < 5; i++) {
      s.agent.batch(P, twoFailures());
      actions.push(s.guard.control.afterToolBatch({ promptId: P, ...drainOk, channelPrompt: true }));
    }
    expect(actions.every((a) => a.type === 'none')).toBe(true);
    expect(s.decisions).toHaveLength(0);
    expect(s.guardLogs.getFinishedLogRecords()).toHaveLength(0);
    await s.shutdown();
  });

  it('malformed hook input is an unreliable drain, never a throw', async () => {
    const s = setup({ mode: 'enforce' });
    s.agent.startPrompt(P);
    s.agent.batch(P, twoFailures());
    const bad = { promptId: P, hasExternalInput: 'no', hasQueuedPrompt: null, inputReliable: 1 } as never;
    expect(s.guard.control.afterToolBatch(bad)).toEqual({ type: 'none' });
    expect(s.decisions[0]?.outcome.resetReason).toBe('unreliable_input');
    expect(s.guard.control.afterToolBatch(null as never)).toEqual({ type: 'none' });
    expect(s.guard.control.afterToolBatch({ promptId: 'unknown', ...drainOk })).toEqual({ type: 'none' });
    await s.shutdown();
  });
});

describe('guard telemetry', () => {
  afterEach(() => setGlobalErrorHandler(() => undefined));

  it('metric labels are the design\'s low-cardinality set: never prompt id, ordinal or error type', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    for (let i = 0; i < 5; i++) s.agent.batch(P, twoFailures());
    s.agent.batch(P, [{ status: 'success' }]);
    s.agent.endPrompt(P);
    const points = (await s.metricPoints()).filter((p) => p.name === 'qwen-code.repeated_tool_failure_guard.count');
    expect(points.length).toBeGreaterThan(0);
    const allowed = new Set(['route', 'mode', 'phase_before', 'phase_after', 'decision', 'failure_count_bucket', 'batch_count_bucket', 'reset_reason', 'terminal_status', 'execution_status', 'tool_type']);
    for (const p of points) {
      for (const k of Object.keys(p.attributes)) expect(allowed.has(k), k).toBe(true);
      expect(JSON.stringify(p.attributes)).not.toContain(P);
    }
    const total = points.reduce((n, p) => n + Number(p.value), 0);
    expect(total).toBe(s.guardEvents().length);
    const tracked = points.find((p) => p.attributes.decision === 'tracked' && p.attributes.batch_count_bucket === '1');
    expect(tracked?.attributes).toEqual({
      route: 'acp_foreground',
      mode: 'shadow',
      phase_before: 'idle',
      phase_after: 'tracking',
      decision: 'tracked',
      failure_count_bucket: '1-2',
      batch_count_bucket: '1',
      terminal_status: 'error',
      execution_status: 'error',
      tool_type: 'native',
    });
    await s.shutdown();
  });

  it('no argument, result, path or raw error text reaches any emitted record', async () => {
    const secret = 'SECRET-9f2c/home/alice/.ssh/id_rsa';
    const s = setup({ mode: 'enforce' });
    s.agent.startPrompt(P);
    for (let i = 0; i < 5; i++) {
      s.agent.batch(P, [{ args: `{"file_path":"${secret}"}`, errorText: `File not found: ${secret}` }, { errorType: `bad ${secret}` }]);
      s.guard.control.afterToolBatch({ promptId: P, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true });
    }
    s.agent.endPrompt(P);
    const emitted = JSON.stringify([s.guardLogs.getFinishedLogRecords().map((r) => [r.attributes, r.body]), await s.metricPoints()]);
    expect(s.guardLogs.getFinishedLogRecords().length).toBeGreaterThan(0);
    expect(emitted).not.toContain('SECRET-9f2c');
    expect(emitted).not.toContain('/home/alice');
    await s.shutdown();
  });

  it('a throwing meter and logger never reach span.end() or logger.emit(), and never change the decision', async () => {
    const handler = vi.fn();
    setGlobalErrorHandler(handler);
    const boom = () => {
      throw new Error('exporter down');
    };
    const s = setup({
      mode: 'enforce',
      meterProvider: { getMeter: boom } as never,
      loggerProvider: { getLogger: boom } as never,
    });
    s.agent.startPrompt(P);
    const actions = [];
    for (let i = 0; i < 5; i++) {
      expect(() => s.agent.batch(P, twoFailures())).not.toThrow();
      actions.push(s.guard.control.afterToolBatch({ promptId: P, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true }));
    }
    expect(actions.map((a) => a.type)).toEqual(['none', 'none', 'none', 'remind', 'stop']);
    expect(handler).toHaveBeenCalled();
    await s.shutdown();
  });

  it('a throwing profile never reaches the host', async () => {
    const handler = vi.fn();
    setGlobalErrorHandler(handler);
    const s = setup({
      profile: () => ({
        name: 'broken',
        onSpanStart: () => {
          throw new Error('a');
        },
        onSpanEnd: () => {
          throw new Error('b');
        },
        onLogRecord: () => {
          throw new Error('c');
        },
      }),
    });
    expect(() => {
      s.agent.startPrompt(P);
      s.agent.batch(P, twoFailures());
      s.agent.endPrompt(P);
    }).not.toThrow();
    expect(handler).toHaveBeenCalled();
    await s.shutdown();
  });

  it('the guard\'s own records are not read back as input', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    s.agent.modelRequest(P);
    const own = {
      hrTime: [Math.floor(Date.now() / 1000), 0],
      attributes: { 'event.name': 'qwen-code.tool_call', call_id: 'x1', prompt_id: P, status: 'error', execution_status: 'error', error_type: 'file_not_found', function_name: 'read_file' },
      instrumentationScope: { name: 'repeated-tool-failure-guard' },
    };
    s.guard.logRecordProcessor.onEmit(own as never);
    s.agent.endPrompt(P);
    expect(s.decisions).toHaveLength(0);
    await s.shutdown();
  });
});

describe('bounded state', () => {
  it('evicts beyond maxOpenPrompts, counts it, and an evicted prompt never comes back to enforce', async () => {
    const s = setup({ mode: 'enforce', maxOpenPrompts: 2 });
    const ids = ['a########1', 'b########1', 'c########1'];
    for (const id of ids) s.agent.startPrompt(id);
    for (let i = 0; i < 5; i++) {
      for (const id of ids) {
        s.agent.batch(id, twoFailures());
        s.guard.control.afterToolBatch({ promptId: id, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true });
      }
    }
    expect(s.guard.engine.openPromptCount).toBeLessThanOrEqual(2);
    expect(s.decisions.some((d) => d.promptId === 'a########1' && d.outcome.action.type !== 'none')).toBe(false);
    const evictions = (await s.metricPoints()).filter((p) => p.name === 'qwen-code.repeated_tool_failure_guard.evicted_prompts');
    expect(evictions.reduce((n, p) => n + Number(p.value), 0)).toBeGreaterThan(0);
    await s.shutdown();
  });

  it('evicts idle prompts on sweep', async () => {
    let now = 1_000_000;
    const s = setup({ promptIdleMillis: 1000, clock: () => now });
    s.agent.startPrompt(P);
    s.agent.batch(P, twoFailures());
    expect(s.guard.engine.openPromptCount).toBe(1);
    now += 10_000;
    s.guard.sweep();
    expect(s.guard.engine.openPromptCount).toBe(0);
    await s.shutdown();
  });

  it('a batch larger than maxCallsPerBatch is incomplete', async () => {
    const s = setup({ maxCallsPerBatch: 3 });
    s.agent.startPrompt(P);
    s.agent.batch(P, twoFailures());
    s.agent.batch(P, [{}, {}, {}, {}]);
    s.agent.endPrompt(P);
    expect(s.decisions.map((d) => d.outcome.resetReason)).toEqual([undefined, 'incomplete']);
    await s.shutdown();
  });
});

import { describe, expect, it } from 'vitest';
import { createPiExtension, piCallOutcome, PI_MODE_FLAG } from '../src/pi.js';
import type { PiExtensionApi, PiExtensionContext } from '../src/pi.js';
import { REPEATED_TOOL_FAILURE_REMINDER } from '../src/core/failure/reducer.js';
import { REPETITION_ABORT_TEXT, REPETITION_WARNING_TEXT } from '../src/core/repetition/reducer.js';

describe('pi: how a call that ran ended (table)', () => {
  // Only the exit code of pi 0.73.1's bash rejection ("Command exited with code N") is kept.
  const rows: Array<[string, string, boolean, unknown, unknown]> = [
    ['success', 'bash', false, [{ type: 'text', text: 'ok' }], { kind: 'success' }],
    ['bash exit 128', 'bash', true, [{ type: 'text', text: 'fatal: not a git repository: /secret\n\nCommand exited with code 128' }], { kind: 'error', errorType: 'exit_128' }],
    ['bash exit 1, no output', 'bash', true, [{ type: 'text', text: 'Command exited with code 1' }], { kind: 'error', errorType: 'exit_1' }],
    ['bash timeout', 'bash', true, [{ type: 'text', text: 'out\n\nCommand timed out after 5 seconds' }], { kind: 'error', errorType: 'timeout' }],
    ['bash aborted', 'bash', true, [{ type: 'text', text: 'Command aborted' }], { kind: 'cancelled' }],
    ['bash, other error text', 'bash', true, [{ type: 'text', text: 'Working directory does not exist: /x' }], { kind: 'error', errorType: undefined }],
    ['the code must end the text', 'bash', true, [{ type: 'text', text: 'Command exited with code 2\nmore' }], { kind: 'error', errorType: undefined }],
    ['another tool: no class', 'read', true, [{ type: 'text', text: 'ENOENT: no such file' }], { kind: 'error', errorType: undefined }],
  ];
  it.each(rows)('%s', (_label, tool, isError, content, want) => {
    expect(piCallOutcome(tool, isError, content)).toEqual(want);
  });
});

/** A fake pi host: registers handlers, emits events in pi 0.73.1's order. */
function fakePi(mode: string) {
  const handlers = new Map<string, (event: never, ctx: PiExtensionContext) => unknown>();
  let aborts = 0;
  const api: PiExtensionApi = {
    on: (event, handler) => void handlers.set(event, handler),
    registerFlag: () => undefined,
    getFlag: (name) => (name === PI_MODE_FLAG ? mode : undefined),
  };
  const ctx: PiExtensionContext = { abort: () => void (aborts += 1), hasUI: false };
  createPiExtension({ sweepIntervalMillis: 0 })(api);
  const emit = (event: string, payload: object): unknown => handlers.get(event)?.(payload as never, ctx);
  return { emit, aborts: () => aborts };
}

describe('pi extension on a fake host', () => {
  it('enforce: a git exit-128 loop gets the reminder once in the fifth request and is aborted before the sixth', () => {
    const pi = fakePi('enforce');
    pi.emit('agent_start', {});
    const messages: object[] = [{ role: 'user', content: 'go' }];
    const injected: boolean[] = [];
    for (let round = 1; round <= 6; round++) {
      const out = pi.emit('context', { messages }) as { messages?: object[] } | undefined;
      injected.push(JSON.stringify(out?.messages ?? []).includes(REPEATED_TOOL_FAILURE_REMINDER));
      if (pi.aborts() > 0) break;
      messages.push({ role: 'assistant', content: [] });
      for (const [i, command] of ['git status', 'git log -1'].entries()) {
        const toolCallId = `r${round}-${i}`;
        expect(pi.emit('tool_call', { toolCallId, toolName: 'bash', input: { command } })).toBeUndefined();
        const content = [{ type: 'text', text: 'fatal: not a git repository\n\nCommand exited with code 128' }];
        pi.emit('tool_result', { toolCallId, toolName: 'bash', isError: true, content });
        messages.push({ role: 'toolResult', toolCallId, toolName: 'bash', isError: true, content });
      }
    }
    expect(injected).toEqual([false, false, false, false, true, false]);
    expect(pi.aborts()).toBe(1);
  });

  it('enforce: the third identical call gets the warning on its result; the fifth is blocked and the turn aborted', () => {
    const pi = fakePi('enforce');
    pi.emit('agent_start', {});
    const results: unknown[] = [];
    for (let n = 1; n <= 5; n++) {
      const verdict = pi.emit('tool_call', { toolCallId: `c${n}`, toolName: 'acp_status', input: { view: 'ranges', scope: 'uncompressed' } });
      if (verdict !== undefined) {
        results.push(verdict);
        break;
      }
      results.push(pi.emit('tool_result', { toolCallId: `c${n}`, toolName: 'acp_status', isError: false, content: [{ type: 'text', text: `${n}` }] }));
    }
    expect(results.slice(0, 2)).toEqual([undefined, undefined]);
    expect(results[2]).toEqual({ content: [{ type: 'text', text: '3' }, { type: 'text', text: REPETITION_WARNING_TEXT }] });
    expect(results[3]).toBeUndefined();
    expect(results[4]).toEqual({ block: true, reason: REPETITION_ABORT_TEXT });
    expect(pi.aborts()).toBe(1);
  });

  it('shadow (the default): nothing is blocked, appended or aborted', () => {
    const pi = fakePi('');
    pi.emit('agent_start', {});
    for (let n = 1; n <= 6; n++) {
      expect(pi.emit('tool_call', { toolCallId: `c${n}`, toolName: 'ls', input: { path: '.' } })).toBeUndefined();
      expect(pi.emit('tool_result', { toolCallId: `c${n}`, toolName: 'ls', isError: false, content: [] })).toBeUndefined();
    }
    expect(pi.aborts()).toBe(0);
  });
});

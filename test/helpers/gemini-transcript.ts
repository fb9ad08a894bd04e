/**
 * A gemini-cli 0.61.0 session transcript written the way the real CLI writes it (its
 * `ChatRecordingService`, as recorded by the conformance run: one JSON record a line, appended; a
 * model turn appended first without and then again, same `id`, with `toolCalls` once every call of
 * the turn settled, before the next model request), from the hook inputs a test sends, plus the
 * calls gemini-cli refuses before they run, which fire no hook ({@link refused}).
 */
import { appendFileSync, writeFileSync } from 'node:fs';

/** A call gemini-cli refused: with no hook at all (`none`), or after its `BeforeTool` (`beforeTool`). */
export interface RefusedCall {
  readonly refused: true;
  readonly tool: string;
  /** gemini-cli's status for it: `error` (invalid arguments, unknown tool, policy or hook denial), `cancelled` (a user's rejection). */
  readonly status: 'error' | 'cancelled';
  /** Which hooks fired for it: none (validation, unknown tool), or `BeforeTool` only (policy, hook denial, rejection). */
  readonly hooks: 'none' | 'beforeTool';
}

/** A refused call, as a step of a hook-input sequence. */
export function refused(tool: string, status: RefusedCall['status'], hooks: RefusedCall['hooks']): RefusedCall {
  return { refused: true, tool, status, hooks };
}

export function isRefused(step: unknown): step is RefusedCall {
  return typeof step === 'object' && step !== null && (step as { refused?: unknown }).refused === true;
}

interface PendingCall {
  readonly name: string;
  status: 'success' | 'error' | 'cancelled' | 'executing';
  readonly viaHook: boolean;
}

/** The transcript file of one session; {@link observe} each step before the hook gets it. */
export class GeminiTranscript {
  private pending: PendingCall[] = [];
  private turns = 0;

  constructor(
    readonly path: string,
    sessionId: string,
  ) {
    writeFileSync(path, `${JSON.stringify({ sessionId, projectHash: 'f'.repeat(64), startTime: '2026-12-02T05:00:00.000Z', lastUpdated: '2026-12-02T05:00:00.000Z', kind: 'main' })}\n`);
  }

  private append(record: object): void {
    appendFileSync(this.path, `${JSON.stringify(record)}\n`);
    appendFileSync(this.path, `${JSON.stringify({ $set: { lastUpdated: '2026-12-02T05:00:01.000Z' } })}\n`);
  }

  /** What gemini-cli writes before this step reaches the hooks. */
  observe(step: unknown): void {
    if (isRefused(step)) {
      // With `beforeTool`, its BeforeTool was observed first: that call is the one refused.
      const started = step.hooks === 'beforeTool' ? [...this.pending].reverse().find((c) => c.viaHook && c.status === 'executing' && c.name === step.tool) : undefined;
      if (started !== undefined) started.status = step.status;
      else this.pending.push({ name: step.tool, status: step.status, viaHook: false });
      return;
    }
    const input = step as { hook_event_name?: string; tool_name?: string; tool_response?: { error?: unknown } };
    switch (input.hook_event_name ?? '') {
      case 'BeforeAgent':
        this.append({ id: `user-${this.turns}`, timestamp: '2026-12-02T05:00:01.000Z', type: 'user', content: [{ text: 'fix /work/secret-project/config.yaml' }] });
        break;
      case 'BeforeTool':
        this.pending.push({ name: String(input.tool_name), status: 'executing', viaHook: true });
        break;
      case 'AfterTool': {
        const call = this.pending.find((c) => c.viaHook && c.status === 'executing' && c.name === input.tool_name);
        if (call !== undefined) call.status = input.tool_response?.error === undefined ? 'success' : 'error';
        break;
      }
      case 'BeforeModel':
      case 'AfterAgent':
        if (this.pending.length > 0) this.closeTurn();
        break;
      default:
        break;
    }
  }

  private closeTurn(): void {
    this.turns += 1;
    const id = `5e2c0a3d-0000-4000-8000-${String(this.turns).padStart(12, '0')}`;
    const turn = { id, timestamp: '2026-12-02T05:00:02.000Z', type: 'gemini', content: '', thoughts: [], tokens: { input: 10, output: 5, cached: 0, thoughts: 0, tool: 0, total: 15 }, model: 'gemini-2.5-flash' };
    this.append(turn);
    const toolCalls = this.pending.map((c, i) => ({
      id: `${c.name}__call_${this.turns}_${i}`,
      name: c.name,
      args: { file_path: '/work/secret-project/missing.txt' },
      result: [{ functionResponse: { id: `${c.name}__call_${this.turns}_${i}`, name: c.name, response: c.status === 'success' ? { output: 'secret contents' } : { error: 'File not found: /work/secret-project/missing.txt' } } }],
      // A call whose AfterTool never came (a policy denial after its BeforeTool) is an error.
      status: c.status === 'executing' ? 'error' : c.status,
      timestamp: '2026-12-02T05:00:02.000Z',
      resultDisplay: 'File not found: /work/secret-project/missing.txt',
      description: '',
      displayName: c.name,
      renderOutputAsMarkdown: false,
    }));
    this.append({ ...turn, toolCalls });
    this.append({ id: `user-after-${this.turns}`, timestamp: '2026-12-02T05:00:02.000Z', type: 'user', content: toolCalls.map((c) => c.result[0]) });
    this.pending = [];
  }
}

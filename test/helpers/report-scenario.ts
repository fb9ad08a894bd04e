/**
 * Synthetic qwen-code 0.24.4 telemetry (logs only, OTLP JSON lines as a collector's file exporter
 * writes them) for report tests: prompts made of model rounds, each round a model request, its
 * response with token counts, and the tool calls of the batch it produced. The last round of a
 * prompt answers with text (no calls).
 *
 * Shapes follow wire reference §2 (`qwen-code.api_request` / `api_response` / `tool_call`).
 */

/** One tool call of a round. */
export interface ScenarioCall {
  readonly tool: string;
  readonly ok: boolean;
  /** ToolErrorType of a failure. @defaultValue `'file_not_found'` */
  readonly errorType?: string;
  readonly args?: Record<string, unknown>;
  /** Raw error text (to plant canaries). */
  readonly errorText?: string;
}

/** One prompt. */
export interface ScenarioPrompt {
  readonly sessionId: string;
  /** Turn number in the ACP prompt id `<session>########<turn>`. */
  readonly turn: number;
  /** Tool batches, in order; the prompt makes `batches.length + 1` model requests. */
  readonly batches: readonly (readonly ScenarioCall[])[];
  /** Input and output tokens of request `i` (0-based). */
  readonly tokens: (request: number) => readonly [number, number];
  /** Start, in milliseconds since the epoch. */
  readonly startMillis: number;
  /** Milliseconds between two model requests. @defaultValue `100` */
  readonly roundMillis?: number;
}

/** Resource of the scenario. */
export interface ScenarioResource {
  readonly 'service.version'?: string;
  readonly 'deployment.environment'?: string;
  /** Any other Resource attribute (an owner id, the cohort's mode). */
  readonly [key: string]: string | undefined;
}

type Attr = { key: string; value: Record<string, unknown> };

function attrs(o: Record<string, unknown>): Attr[] {
  return Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .map(([key, v]) => ({ key, value: typeof v === 'number' ? (Number.isInteger(v) ? { intValue: v } : { doubleValue: v }) : typeof v === 'boolean' ? { boolValue: v } : { stringValue: String(v) } }));
}

const nanos = (ms: number): string => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

/** The prompt id of a scenario prompt. */
export function promptIdOf(p: ScenarioPrompt): string {
  return `${p.sessionId}########${p.turn}`;
}

/** One OTLP JSON line: a logs export request holding every prompt. */
export function scenarioOtlpJsonLines(prompts: readonly ScenarioPrompt[], resource: ScenarioResource = { 'service.version': '0.24.4' }): string {
  const logs: Record<string, unknown>[] = [];
  for (const p of prompts) {
    const promptId = promptIdOf(p);
    const round = p.roundMillis ?? 100;
    const base = { 'session.id': p.sessionId, prompt_id: promptId };
    const log = (t: number, name: string, extra: Record<string, unknown>, body: string): void => {
      logs.push({ timeUnixNano: nanos(t), observedTimeUnixNano: nanos(t), body: { stringValue: body }, attributes: attrs({ 'event.name': name, 'event.timestamp': new Date(t).toISOString(), ...base, ...extra }) });
    };
    log(p.startMillis, 'qwen-code.user_prompt', { prompt_length: 20 }, 'User prompt.');
    for (let i = 0; i <= p.batches.length; i++) {
      const t = p.startMillis + 10 + i * round;
      const [input, output] = p.tokens(i);
      log(t, 'qwen-code.api_request', { model: 'fake-model' }, 'API request.');
      log(t + 30, 'qwen-code.api_response', { model: 'fake-model', status_code: 200, duration_ms: 30, input_token_count: input, output_token_count: output, response_id: `chatcmpl-${p.turn}-${i}` }, 'API response.');
      const batch = p.batches[i] ?? [];
      batch.forEach((c, j) => {
        const callId = `call_${p.turn}_${i}_${j}`;
        const at = t + 40 + j * 5;
        const errorType = c.errorType ?? 'file_not_found';
        log(
          at,
          'qwen-code.tool_call',
          {
            call_id: callId,
            function_name: c.tool,
            function_args: JSON.stringify(c.args ?? {}, null, 2),
            duration_ms: 3,
            status: c.ok ? 'success' : 'error',
            execution_status: c.ok ? 'success' : 'error',
            success: c.ok,
            ...(c.ok ? { content_length: 42 } : { error: c.errorText ?? 'failed', error_type: errorType, 'error.message': c.errorText ?? 'failed', 'error.type': errorType }),
            tool_type: 'native',
          },
          `Tool call: ${c.tool}.`,
        );
      });
    }
  }
  const res = { attributes: attrs({ 'service.name': 'qwen-code', ...resource }) };
  return `${JSON.stringify({ resourceLogs: [{ resource: res, scopeLogs: [{ scope: { name: 'qwen-code' }, logRecords: logs }] }] })}\n`;
}

/** `n` failing batches of `perBatch` `read_file` calls (file_not_found), fresh arguments each time. */
export function failingBatches(n: number, perBatch = 2, canary = ''): ScenarioCall[][] {
  return Array.from({ length: n }, (_, i) =>
    Array.from({ length: perBatch }, (_, j) => ({ tool: 'read_file', ok: false, args: { file_path: `/workspace/${canary}missing-${i}-${j}.txt` }, errorText: `File not found: /workspace/${canary}missing-${i}-${j}.txt` })),
  );
}

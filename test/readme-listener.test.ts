/**
 * README's in-process quick start (a listener, no infrastructure), run as a user copies it: the
 * block as printed (its imports name the package, here resolved to the built entry), in a real Node
 * process with the NodeSDK, a looping agent, then `sdk.shutdown()`. Nothing
 * is configured in the environment (no `OTEL_METRICS_EXPORTER=none`); the only OTLP endpoint is a
 * loopback server of this test, so any export the example still makes is seen here.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const ENTRY = new URL('../dist/index.js', import.meta.url).href;

/** The first ```js block under the in-process quick start, its package import pointed at the build. */
function listenerBlock(): string {
  const at = README.indexOf('\n## Quick start: in process\n');
  expect(at).toBeGreaterThan(-1);
  const m = /```js\n([\s\S]*?)```/.exec(README.slice(at));
  expect(m).not.toBeNull();
  const block = (m as RegExpExecArray)[1] as string;
  expect(block).toContain("from 'repeated-tool-failure-guard';");
  return block.replace("from 'repeated-tool-failure-guard';", `from ${JSON.stringify(ENTRY)};`);
}

/** A qwen-code prompt looping on the same failing read_file call, 2 calls a batch, 6 batches. */
const LOOP = `
const tracer = trace.getTracer('qwen-code');
const logger = logs.getLogger('qwen-code');
const interaction = tracer.startSpan('qwen-code.interaction', { root: true, attributes: { 'qwen-code.prompt_id': 'p1', 'qwen-code.message_type': 'acp_prompt', 'session.id': 's1' } });
const inPrompt = trace.setSpan(context.active(), interaction);
for (let b = 0; b < 6; b++) {
  tracer.startSpan('qwen-code.llm_request', { attributes: { 'qwen-code.prompt_id': 'p1', 'llm_request.context': 'interaction' } }, inPrompt).end();
  for (let c = 0; c < 2; c++) {
    const id = 'call-' + b + '-' + c;
    const tool = tracer.startSpan('qwen-code.tool', { attributes: { 'tool.call_id': id, 'gen_ai.tool.name': 'read_file', 'session.id': 's1' } }, inPrompt);
    const inTool = trace.setSpan(context.active(), tool);
    tracer.startSpan('qwen-code.tool.execution', { attributes: { 'gen_ai.tool.name': 'read_file', 'tool.call_id': id, execution_status: 'error', error_type: 'file_not_found' } }, inTool).end();
    logger.emit({ context: inTool, attributes: { 'event.name': 'qwen-code.tool_call', call_id: id, function_name: 'read_file', status: 'error', execution_status: 'error', error_type: 'file_not_found', success: false, prompt_id: 'p1', tool_type: 'native' } });
    tool.end();
  }
}
interaction.end();
`;

describe('README: the in-process quick start (a listener, no infrastructure)', () => {
  it('prints the decisions and shuts down without exporting anywhere (no OTEL_* variable set)', async () => {
    const requests: string[] = [];
    const receiver = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const { port } = receiver.address() as AddressInfo;
    const script = [
      listenerBlock(),
      "import { context, trace } from '@opentelemetry/api';",
      "import { logs } from '@opentelemetry/api-logs';",
      LOOP,
      'await sdk.shutdown();',
      "process.stdout.write('shut down');",
    ].join('\n');
    try {
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
          cwd: new URL('..', import.meta.url).pathname,
          // Where the SDK's OTLP exporters would go by default, made observable.
          env: { PATH: process.env.PATH ?? '', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
      expect(run.stderr).toContain('guard: p1 batch 4: would_warn');
      expect(run.stderr).toContain('guard: p1 batch 5: would_stop');
      expect(run.stdout).toBe('shut down');
      expect(run.code).toBe(0);
      // Before the fix NodeSDK's default OTLP metrics exporter posted the guard's counters here
      // (and, with nothing listening, retried them for ~8 s at shutdown).
      expect(requests).toEqual([]);
    } finally {
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});

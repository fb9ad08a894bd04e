/* global console, process */
// A host on one OpenTelemetry JS line, set up as a user does it (scripts/test-real-hosts.sh copies
// this file into a scratch project that installed `@opentelemetry/sdk-node` of that line and then
// the packed tarball, with npm's default peer resolution). The guard is registered in the real
// NodeSDK as README's in-process quick start shows (a listener, no exporter); the agent writes telemetry shaped
// like qwen-code 0.24.4 through the SDK's global providers: one prompt in which every model round
// asks for `read_file` calls that fail with `file_not_found`.
//
// Expected (the design): round 1 brings 8 failures in 1 batch, `tracked` (the threshold needs at
// least 2 batches); round 2 (9 failures, 2 batches) `would_warn`; round 3 `would_stop`. The guard's
// own decision logs must reach the LoggerProvider the SDK registered globally (the logs API moved
// from `@opentelemetry/api-logs` on 2.x into `@opentelemetry/api` 1.10 on 3.x).
//
// Prints one JSON line; exits 0 when everything matched, 1 otherwise.
import * as api from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemoryLogRecordExporter, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { createRepeatedToolFailureGuard } from 'repeated-tool-failure-guard';

const guard = createRepeatedToolFailureGuard({ mode: 'shadow' });
const decisions = [];
const unjudged = [];
guard.addListener({
  onDecision: (d) => decisions.push({ batch: d.batch, decision: d.outcome.decision }),
  onUnjudgedBatch: (promptId, reason, batch) => unjudged.push({ batch, reason }),
});
const ownLogs = new InMemoryLogRecordExporter();
const ownLogsProcessor = new SimpleLogRecordProcessor({ exporter: ownLogs });
const sdk = new NodeSDK({
  spanProcessors: [guard.spanProcessor],
  logRecordProcessors: [guard.logRecordProcessor, ownLogsProcessor],
  metricReaders: [],
});
sdk.start();

// The agent's side: the global tracer and logger, from the logs API of this line.
const logsApi = api.logs ?? (await import('@opentelemetry/api-logs')).logs;
const tracer = api.trace.getTracer('qwen-code', '0.24.4');
const logger = logsApi.getLogger('qwen-code', '0.24.4');
const PROMPT = 'real-host-prompt-1';
const SESSION = 'real-host-session';

const interaction = tracer.startSpan('qwen-code.interaction', {
  root: true,
  attributes: { 'qwen-code.prompt_id': PROMPT, 'qwen-code.message_type': 'acp_prompt', 'session.id': SESSION },
});
const inPrompt = api.trace.setSpan(api.context.active(), interaction);
let seq = 0;

function modelRequest() {
  const s = tracer.startSpan('qwen-code.llm_request', { attributes: { 'qwen-code.prompt_id': PROMPT, 'llm_request.context': 'interaction' } }, inPrompt);
  logger.emit({ attributes: { 'event.name': 'qwen-code.api_request', prompt_id: PROMPT }, context: api.trace.setSpan(api.context.active(), s) });
  s.setAttribute('finish_reason', 'tool_calls');
  s.end();
}

function failingReadFile() {
  const callId = `call_${++seq}`;
  const tool = tracer.startSpan('qwen-code.tool', { attributes: { 'tool.call_id': callId, call_id: callId, 'gen_ai.tool.name': 'read_file', 'session.id': SESSION } }, inPrompt);
  const toolCtx = api.trace.setSpan(api.context.active(), tool);
  const exec = tracer.startSpan('qwen-code.tool.execution', { attributes: { 'gen_ai.tool.name': 'read_file', 'tool.call_id': callId } }, toolCtx);
  exec.setAttributes({ execution_status: 'error', success: false, error_type: 'file_not_found', 'error.type': 'file_not_found', error: 'tool_error' });
  exec.end();
  logger.emit({
    body: 'Tool call: read_file. Success: false.',
    attributes: {
      'event.name': 'qwen-code.tool_call', 'session.id': SESSION, call_id: callId, function_name: 'read_file',
      function_args: '{"file_path":"/workspace/missing.txt"}', status: 'error', execution_status: 'error', success: false,
      prompt_id: PROMPT, tool_type: 'native', error: 'File not found: /workspace/missing.txt', 'error.message': 'File not found: /workspace/missing.txt',
      error_type: 'file_not_found', 'error.type': 'file_not_found',
    },
    context: toolCtx,
  });
  tool.setAttributes({ error: 'File not found: /workspace/missing.txt', 'error.type': 'tool_error', success: false });
  tool.end();
}

for (const calls of [8, 1, 1]) {
  modelRequest();
  for (let i = 0; i < calls; i++) failingReadFile();
}
modelRequest(); // the next round closes the third batch
interaction.setAttribute('qwen-code.turn_status', 'ok');
interaction.end();

const made = decisions.filter((d) => d.decision !== 'none').map((d) => d.decision);
// The default resource detectors settle asynchronously, and the processor exports after them.
// Read before shutdown: an in-memory exporter forgets its records when it is shut down.
await ownLogsProcessor.forceFlush();
const logged = ownLogs
  .getFinishedLogRecords()
  .filter((r) => r.attributes['event.name'] === 'qwen-code.repeated_tool_failure_guard')
  .map((r) => r.attributes.decision);
await sdk.shutdown();
const expected = ['tracked', 'would_warn', 'would_stop'];
const ok = JSON.stringify(made) === JSON.stringify(expected) && JSON.stringify(logged) === JSON.stringify(expected) && unjudged.length === 0;
console.log(JSON.stringify({ node: process.version, api: api.logs ? '>=1.10 (logs in @opentelemetry/api)' : '<1.10 (logs in @opentelemetry/api-logs)', decisions: made, guardLogs: logged, unjudged, ok }));
process.exitCode = ok ? 0 : 1;

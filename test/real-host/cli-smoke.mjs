/* global console, process, fetch, setTimeout, clearTimeout */
// The installed command in a host project (scripts/test-real-hosts.sh runs it from the project, under
// each Node it checks): `replay --compare` of the embedded qwen-code capture (README's main job),
// `serve` receiving one OTLP/HTTP request on loopback and stopping on SIGTERM, and the Claude Code
// hook in enforce mode over two failing batches (the second must bring the reminder: 8 failures of
// the same tool and failure class across 2 batches). Every child is bounded by a timeout.
//
//   node cli-smoke.mjs <capture.outfile.json>
// Prints one line per check; exits 1 when one fails.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = join(process.cwd(), 'node_modules/.bin/repeated-tool-failure-guard');
const capture = process.argv[2];
let failed = 0;

function run(args, { input = '', env = process.env, timeoutMs = 60_000, onStderr } = {}) {
  return new Promise((resolve) => {
    const child = spawn(BIN, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => {
      stderr += b;
      onStderr?.(stderr, child);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

function check(name, ok, detail) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${process.version} ${name}${ok ? '' : `: ${detail}`}`);
  if (!ok) failed++;
}

// replay --compare: the capture's in-tree guard agrees batch by batch.
const replay = await run(['replay', '--compare', capture]);
check('replay --compare (agreement: 6/6 batches)', replay.code === 0 && /agreement: 6\/6 batches/.test(replay.stdout), `exit ${replay.code}: ${replay.stderr.slice(-300)}`);

// serve: listens on a free loopback port, accepts an OTLP/JSON request, stops on SIGTERM.
let status;
const serve = await run(['serve', '--port', '0'], {
  timeoutMs: 30_000,
  onStderr: (text, child) => {
    const m = /receiving OTLP\/HTTP on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
    if (m === null || status !== undefined) return;
    status = 'pending';
    fetch(`${m[1]}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resourceSpans":[]}' })
      .then((r) => (status = r.status))
      .catch((e) => (status = String(e)))
      .finally(() => child.kill('SIGTERM'));
  },
});
check('serve (OTLP/HTTP 200, clean stop on SIGTERM)', status === 200 && serve.code === 0 && /serve: stopped/.test(serve.stderr), `status ${status}, exit ${serve.code}/${serve.signal}: ${serve.stderr.slice(-300)}`);

// claude-code-hook, enforce: batch 1 (4 failures) says nothing, batch 2 (8 failures, 2 batches) reminds.
const state = mkdtempSync(join(tmpdir(), 'rtfg-hook-'));
const env = { ...process.env, RTFG_CLAUDE_CODE_STATE_DIR: state };
const common = { session_id: 's1', transcript_path: '/tmp/t.jsonl', cwd: '/tmp', prompt_id: 'p1', permission_mode: 'default' };
const outputs = [];
for (const round of [1, 2]) {
  const ids = [1, 2, 3, 4].map((i) => `toolu_${round}_${i}`);
  for (const id of ids) {
    const r = await run(['claude-code-hook', '--mode', 'enforce'], {
      env,
      input: JSON.stringify({ ...common, hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: { command: 'git status' }, tool_use_id: id, error: 'Exit code 128', is_interrupt: false, duration_ms: 5 }),
    });
    if (r.code !== 0) outputs.push(`failure hook exit ${r.code}`);
  }
  const b = await run(['claude-code-hook', '--mode', 'enforce'], {
    env,
    input: JSON.stringify({ ...common, hook_event_name: 'PostToolBatch', tool_calls: ids.map((id) => ({ tool_name: 'Bash', tool_input: { command: 'git status' }, tool_use_id: id, tool_response: 'Exit code 128' })) }),
  });
  outputs.push(b.code === 0 ? b.stdout.trim() : `batch hook exit ${b.code}`);
}
rmSync(state, { recursive: true, force: true });
const reminder = outputs[1] ? JSON.parse(outputs[1]) : undefined;
check(
  'claude-code-hook --mode enforce (silent, then the reminder as PostToolBatch additionalContext)',
  outputs.length === 2 && outputs[0] === '' && typeof reminder?.hookSpecificOutput?.additionalContext === 'string',
  JSON.stringify(outputs).slice(0, 300),
);

process.exitCode = failed === 0 ? 0 : 1;

#!/usr/bin/env node
/* global URL */
// H1 for the Codex hook: one `codex-hook` invocation per hook event against `node -e 0` in the
// same run (bench/hook-events.mjs). Inputs are shaped as Codex 0.169.0 sends them; the transcript
// each names holds a realistic turn so far (20 responses of 3 shell calls, their items and
// outputs: about 90 kB), which the hook reads on every tool event and at Stop; mode `enforce`.
//
//   npm run build && node bench/codex-hook.mjs [--runs 21]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchHookEvents } from './hook-events.mjs';

const cli = fileURLToPath(new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url));
const { values } = parseArgs({ options: { runs: { type: 'string', default: '21' } } });
const runs = Math.max(3, Number(values.runs));

const turn = 'bench-turn';
const transcript = join(mkdtempSync(join(tmpdir(), 'rtfg-codex-hook-bench-')), 'rollout.jsonl');
const lines = [{ type: 'event_msg', payload: { type: 'task_started', turn_id: turn } }];
for (let r = 0; r < 20; r++) {
  const ids = [0, 1, 2].map((i) => `call_${r}_${i}`);
  for (const id of ids) lines.push({ type: 'response_item', payload: { type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd: `ls /missing-${id}` }), call_id: id } });
  lines.push({ type: 'token_usage_record', payload: { info: { total_token_usage: { input_tokens: 1000, output_tokens: 50 } } } });
  for (const id of ids) {
    lines.push({ type: 'event_msg', payload: { type: 'item_completed', item: { type: 'CommandExecution', id, status: 'failed', exit_code: 2, aggregated_output: `ls: cannot access '/missing-${id}': No such file or directory\n`.repeat(8) } } });
    lines.push({ type: 'response_item', payload: { type: 'function_call_output', call_id: id, output: `Process exited with code 2\nOutput:\nls: cannot access '/missing-${id}'\n`.repeat(8) } });
  }
}
lines.push({ type: 'response_item', payload: { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls /missing-last"}', call_id: 'call_last' } });
lines.push({ type: 'token_usage_record', payload: {} });
lines.push({ type: 'event_msg', payload: { type: 'item_completed', item: { type: 'CommandExecution', id: 'call_last', status: 'failed', exit_code: 2 } } });
writeFileSync(transcript, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));

const base = (event) => ({ session_id: 'bench-session', turn_id: turn, transcript_path: transcript, cwd: tmpdir(), hook_event_name: event, model: 'gpt-5.1-codex', permission_mode: 'bypassPermissions' });
const call = { tool_name: 'Bash', tool_input: { command: 'ls /missing-last' }, tool_use_id: 'call_last' };
const EVENTS = {
  UserPromptSubmit: () => ({ ...base('UserPromptSubmit'), prompt: 'fix it' }),
  PreToolUse: () => ({ ...base('PreToolUse'), ...call }),
  PostToolUse: () => ({ ...base('PostToolUse'), ...call, tool_response: "ls: cannot access '/missing-last'" }),
  Stop: () => ({ ...base('Stop'), stop_hook_active: false, last_assistant_message: 'done' }),
};

benchHookEvents('codex-hook', (stateDir) => [cli, 'codex-hook', '--mode', 'enforce', '--state-dir', stateDir], EVENTS, runs);

#!/usr/bin/env node
/* global URL */
// H1 for the gemini-cli hook: the wall time of one `gemini-cli-hook` invocation per hook event, as
// the RATIO of its median to the median of `node -e 0` measured in the same run, interleaved (goal:
// ≤ 1.2x, issue #32's H1 for the Claude Code hook). Inputs are shaped as gemini-cli 0.61.0 sends
// them; the state directory is fresh per event kind, the mode `enforce` (the most work).
//
//   npm run build && node bench/gemini-cli-hook.mjs [--runs 21]
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchHookEvents } from './hook-events.mjs';

const cli = fileURLToPath(new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url));
const { values } = parseArgs({ options: { runs: { type: 'string', default: '21' } } });
const runs = Math.max(3, Number(values.runs));
const session = 'bench-session';
const at = () => new Date().toISOString();
const base = (event) => ({ session_id: session, transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: event, timestamp: at() });
const EVENTS = {
  BeforeAgent: () => ({ ...base('BeforeAgent'), prompt: 'fix it' }),
  BeforeModel: () => ({ ...base('BeforeModel'), llm_request: { model: 'gemini-2.5-flash', messages: [] } }),
  BeforeTool: () => ({ ...base('BeforeTool'), tool_name: 'read_file', tool_input: { file_path: '/tmp/missing.txt' } }),
  AfterTool: () => ({
    ...base('AfterTool'),
    tool_name: 'read_file',
    tool_input: { file_path: '/tmp/missing.txt' },
    tool_response: { llmContent: 'x', returnDisplay: 'File not found.', error: { message: 'File not found', type: 'file_not_found' } },
  }),
  AfterAgent: () => ({ ...base('AfterAgent'), prompt: 'fix it', prompt_response: 'done', stop_hook_active: false }),
};

benchHookEvents('gemini-cli-hook', (stateDir) => [cli, 'gemini-cli-hook', '--mode', 'enforce', '--state-dir', stateDir], EVENTS, runs);

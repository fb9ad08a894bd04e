// @ts-check
/* global Buffer */
/**
 * A scripted OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI offline
 * (`[model_providers.<id>] base_url = "http://127.0.0.1:<port>/v1"`, `wire_api = "responses"`).
 *
 * `POST /v1/responses` streams server-sent events: `response.created`, then for each output item
 * `response.output_item.added` and `response.output_item.done`, then `response.completed` with a
 * usage block. Every other path answers 404 (Codex 0.169 also posts analytics; it ignores the 404).
 *
 * Scripts. A scenario has prompts; prompt P's text carries `[rtfg-prompt P]`. A request belongs
 * to the last prompt whose marker is in a user message of its `input`; it answers round N of that
 * prompt with the function calls of `prompts[P-1].rounds[N-1]` (call ids `call_p<P>r<N>_<i>`,
 * MCP tools as `{name, namespace}`), then the prompt's final text. N is one more than the highest
 * round already answered in the input, so a retried request gets the same round again.
 *
 * Recorded per request: the prompt and round answered, the occurrences of the design's reminder and
 * stop texts in the input (hook context reaches the model as input text), and the number of
 * `function_call_output` items of the last round.
 */
import { createServer } from 'node:http';
import { REPETITION_WARNING_TEXT } from '../claude-code/fake-anthropic.mjs';
import { listenOnLoopback } from '../loopback.mjs';

/** The design's reminder (what warn and enforce inject). */
export const REMINDER_TEXT =
  'System: the same tool execution has failed repeatedly for the same classified reason. Do not repeat the same approach. ' +
  'Inspect the returned result, change the approach or required preconditions, or explain the blocker.';
/** The design's stop text. */
export const STOP_TEXT =
  'System: Automatic continuation stopped because the same tool execution failure continued after a corrective reminder. ' +
  'New user input is required to continue.';

/**
 * One scripted call.
 * @typedef {object} CallSpec
 * @property {string} name Tool name as the model calls it (`exec_command`, or the MCP tool's own name).
 * @property {string} [namespace] `mcp__<server>` for an MCP tool.
 * @property {unknown} args Arguments object, or a string sent verbatim (a malformed call).
 */

/**
 * @typedef {object} PromptScript
 * @property {string} text
 * @property {CallSpec[][]} rounds
 * @property {string} [finalText]
 */

/**
 * @typedef {object} RecordedRequest
 * @property {number} seq
 * @property {number | undefined} prompt
 * @property {number | undefined} round
 * @property {number} reminderExact
 * @property {number} stopTextExact
 * @property {number} repetitionWarningExact Occurrences of the identical-call breaker's warning.
 * @property {string[]} callIds
 */

const PROMPT_MARKER = /\[rtfg-prompt (\d+)\]/g;
const CALL_ID = /^call_p(\d+)r(\d+)_\d+$/;

/** @param {string} text @param {string} needle */
function count(text, needle) {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** @param {any} item @returns {string} */
function textOf(item) {
  if (typeof item?.content === 'string') return item.content;
  if (Array.isArray(item?.content)) return item.content.map((c) => (typeof c?.text === 'string' ? c.text : '')).join('\n');
  return '';
}

/**
 * Starts the server.
 * @param {{ prompts: PromptScript[] }} scenario
 * @returns {Promise<{ port: number, baseUrl: string, requests: RecordedRequest[], close: () => Promise<void> }>}
 */
export async function startFakeResponses(scenario) {
  /** @type {RecordedRequest[]} */
  const requests = [];
  const server = createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !(req.url ?? '').split('?')[0]?.endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      /** @type {any} */
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const input = Array.isArray(body.input) ? body.input : [];
      let prompt;
      let markerIndex = -1;
      input.forEach((/** @type {any} */ item, /** @type {number} */ i) => {
        if (item?.type !== 'message' || item.role !== 'user') return;
        for (const m of textOf(item).matchAll(PROMPT_MARKER)) {
          prompt = Number(m[1]);
          markerIndex = i;
        }
      });
      let answered = 0;
      for (const item of input.slice(markerIndex + 1)) {
        const m = item?.type === 'function_call' ? CALL_ID.exec(String(item.call_id)) : null;
        if (m && Number(m[1]) === prompt) answered = Math.max(answered, Number(m[2]));
      }
      const allText = JSON.stringify(input);
      const script = prompt === undefined ? undefined : scenario.prompts[prompt - 1];
      const round = script === undefined ? undefined : answered + 1;
      const calls = script !== undefined && round !== undefined ? (script.rounds[round - 1] ?? []) : [];
      const seq = requests.length + 1;
      /** @type {any[]} */
      const items = calls.map((c, i) => ({
        type: 'function_call',
        id: `fc_p${prompt}r${round}_${i}`,
        call_id: `call_p${prompt}r${round}_${i}`,
        name: c.name,
        ...(c.namespace ? { namespace: c.namespace } : {}),
        arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args ?? {}),
        status: 'completed',
      }));
      if (items.length === 0) {
        const text = script?.finalText ?? 'Done.';
        items.push({ type: 'message', id: `msg_${seq}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
      }
      requests.push({
        seq,
        prompt,
        round,
        reminderExact: count(allText, JSON.stringify(REMINDER_TEXT).slice(1, -1)),
        stopTextExact: count(allText, JSON.stringify(STOP_TEXT).slice(1, -1)),
        repetitionWarningExact: count(allText, JSON.stringify(REPETITION_WARNING_TEXT).slice(1, -1)),
        callIds: calls.length > 0 ? items.map((i) => i.call_id) : [],
      });
      const id = `resp_${seq}`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      /** @param {Record<string, unknown>} ev */
      const send = (ev) => res.write(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`);
      send({ type: 'response.created', response: { id } });
      items.forEach((item, i) => {
        send({ type: 'response.output_item.added', output_index: i, item });
        send({ type: 'response.output_item.done', output_index: i, item });
      });
      const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 };
      send({ type: 'response.completed', response: { id, status: 'completed', output: items, usage } });
      res.end();
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return { port, baseUrl: `http://127.0.0.1:${port}/v1`, requests, close };
}

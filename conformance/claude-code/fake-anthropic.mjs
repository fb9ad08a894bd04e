// @ts-check
/* global process, console, Buffer, setTimeout */
/**
 * A scripted Anthropic Messages API on 127.0.0.1 for driving the real Claude Code CLI offline.
 *
 * `POST /v1/messages` (with or without `?beta=true`) answers with server-sent events
 * (`message_start`, `content_block_*`, `message_delta`, `message_stop`) or, when `stream` is not
 * true, with one JSON message. Every answer carries a `request-id` header: Claude Code reports it
 * as `request_id` on `claude_code.api_request`, `claude_code.tool_decision`,
 * `claude_code.tool_result` and the `claude_code.llm_request` span, which is the batch key of the
 * `claude-code` wire profile. `POST /v1/messages/count_tokens` answers a fixed count.
 *
 * Scripts. A scenario has one or more prompts; prompt P's text carries the marker
 * `[rtfg-prompt P]`. A main request belongs to the last prompt whose marker is in a user text
 * block of its history, and answers round N of that prompt with the tool calls of
 * `prompts[P-1].rounds[N-1]` (ids `toolu_p<P>r<N>_<i>`, `stop_reason: "tool_use"`), then the
 * prompt's final text (`stop_reason: "end_turn"`). N is one more than the highest round of that
 * prompt already in the history, so a retried request gets the same round again.
 *
 * Subagents: a round may call the `Task`/`Agent` tool with a prompt holding
 * `[rtfg-subagent script=<name> tag=<tag>]`. A request with that marker in a user text block (a
 * subagent sees only its task prompt, never the main conversation) walks
 * `subagentScripts[<name>]` with ids `toolu_sub_<tag>_s<k>_<i>`, then answers a report text.
 * Everything else (no marker at all) is a side request: a short text, no scenario step.
 *
 * The round expansion (`{round}`, `{i}`, `{cwd}` placeholders, `count`) is the qwen-code harness's
 * `expandRound`.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { expandRound, REMINDER_TEXT } from '../fake-provider.mjs';
import { listenOnLoopback } from '../loopback.mjs';

/**
 * One prompt of a scenario: the user text (the marker is added by the driver) and its rounds.
 * @typedef {object} PromptScript
 * @property {string} text
 * @property {import('../fake-provider.mjs').ToolCallSpec[][]} rounds
 * @property {string} [finalText]
 * @property {{ round: number, afterMillis: number }} [interrupt] The user interrupts the turn
 *   `afterMillis` after the calls of `round` were streamed (the driver sends the prompt through
 *   stream-json input and an `interrupt` control request).
 * @property {number} [streamGapMillis] Pause between two server-sent events of this prompt's
 *   streamed answers (default 0: the whole answer in one write). A real model streams: Claude Code
 *   starts a call as soon as its `tool_use` block is complete, before the message ends, so with a
 *   gap the first calls of a response run before its `api_request` log is emitted.
 */

/**
 * What the server recorded about one request.
 * @typedef {object} RecordedMessagesRequest
 * @property {number} seq 1-based arrival order.
 * @property {'main' | 'subagent' | 'side'} kind
 * @property {number | undefined} prompt Main requests: the 1-based prompt.
 * @property {number | undefined} round Main: the round answered (`rounds.length + 1` is the final
 *   text); subagent: the script round.
 * @property {string | undefined} subagentTag
 * @property {boolean} stream
 * @property {string} model
 * @property {string[]} tools Declared tool names.
 * @property {number} messageCount
 * @property {string} requestId The `request-id` header sent back.
 * @property {string[]} callIds Tool-use ids returned.
 * @property {number} reminderExact Occurrences of the design's reminder text anywhere in the
 *   request's messages (tool results included).
 * @property {number} stopTextExact Occurrences of the design's stop text in the messages.
 * @property {number} repetitionWarningExact Occurrences of the identical-call breaker's warning.
 * @property {number} errorResults `tool_result` blocks with `is_error: true` in the last user message.
 * @property {number} timeMillis
 */

/** The design's stop text (the hook never sends it to the model; counted to prove that). */
export const STOP_TEXT =
  'System: Automatic continuation stopped because the same tool execution failure continued after a ' +
  'corrective reminder. New user input is required to continue.';

/** The identical-call breaker's warning (`REPETITION_WARNING_TEXT`), given on PreToolUse as additionalContext. */
export const REPETITION_WARNING_TEXT =
  'System: you have issued this identical tool call repeatedly and it is not making progress. ' +
  'Stop issuing it: change the arguments or the approach, or stop and explain the blocker.';

export { REMINDER_TEXT };

const PROMPT_MARKER = /\[rtfg-prompt (\d+)\]/g;
const SUBAGENT_MARKER = /\[rtfg-subagent script=([\w-]+) tag=([\w-]+)\]/;

/**
 * The text of every user text block (tool results excluded) of a message list, in order.
 * @param {any[]} messages
 * @returns {string[]}
 */
function userTexts(messages) {
  /** @type {string[]} */
  const out = [];
  for (const m of messages) {
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') out.push(m.content);
    else if (Array.isArray(m.content)) {
      for (const b of m.content) if (b?.type === 'text' && typeof b.text === 'string') out.push(b.text);
    }
  }
  return out;
}

/**
 * All text in the messages, tool results and tool inputs included (for counting injected texts).
 * @param {any} value
 * @returns {string}
 */
function allText(value) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(allText).join('\n');
  if (value && typeof value === 'object') {
    if (typeof value.text === 'string') return value.text;
    if (value.content !== undefined) return allText(value.content);
  }
  return '';
}

/**
 * @param {string} text
 * @param {string} needle
 */
function occurrences(text, needle) {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/**
 * The highest round with ids `<prefix><round>_<i>` among the history's tool_use blocks.
 * @param {any[]} messages
 * @param {string} prefix
 */
function lastRound(messages, prefix) {
  const re = new RegExp(`^${prefix}(\\d+)_\\d+$`);
  let last = 0;
  for (const m of messages) {
    if (m?.role !== 'assistant' || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      const match = b?.type === 'tool_use' && typeof b.id === 'string' ? re.exec(b.id) : null;
      if (match) last = Math.max(last, Number(match[1]));
    }
  }
  return last;
}

/**
 * Classifies a Messages request.
 * @param {any} body
 * @returns {{ kind: 'main', prompt: number } | { kind: 'subagent', script: string, tag: string } | { kind: 'side' }}
 */
export function classifyMessagesRequest(body) {
  const texts = userTexts(Array.isArray(body?.messages) ? body.messages : []);
  let prompt = 0;
  for (const t of texts) {
    for (const m of t.matchAll(PROMPT_MARKER)) prompt = Math.max(prompt, Number(m[1]));
  }
  if (prompt > 0) return { kind: 'main', prompt };
  for (const t of texts) {
    const m = SUBAGENT_MARKER.exec(t);
    if (m) return { kind: 'subagent', script: /** @type {string} */ (m[1]), tag: /** @type {string} */ (m[2]) };
  }
  return { kind: 'side' };
}

/**
 * The server-sent events of one assistant message, one string an event.
 * @param {{ id: string, model: string, text: string | undefined, calls: { id: string, name: string, arguments: string }[] }} m
 * @returns {string[]}
 */
function sseEvents({ id, model, text, calls }) {
  /** @type {string[]} */
  const out = [];
  /** @param {string} type @param {object} data */
  const ev = (type, data) => out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  });
  let index = 0;
  if (text !== undefined) {
    ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
    ev('content_block_delta', { index, delta: { type: 'text_delta', text } });
    ev('content_block_stop', { index });
    index++;
  }
  for (const c of calls) {
    ev('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
    ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: c.arguments } });
    ev('content_block_stop', { index });
    index++;
  }
  ev('message_delta', {
    delta: { stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  ev('message_stop', {});
  return out;
}

/**
 * Writes the events, `gapMillis` apart (all at once when 0), then ends the response.
 * @param {import('node:http').ServerResponse} res
 * @param {string[]} events
 * @param {number} gapMillis
 */
function streamEvents(res, events, gapMillis) {
  if (gapMillis <= 0) {
    res.end(events.join(''));
    return;
  }
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (i === events.length - 1) {
      res.end(events[i]);
      return;
    }
    res.write(events[i++]);
    setTimeout(next, gapMillis);
  };
  next();
}

/**
 * Starts the server on 127.0.0.1 with an ephemeral port.
 * @param {{ prompts: PromptScript[], vars?: Record<string, string>, subagentScripts?: Record<string, import('../fake-provider.mjs').ToolCallSpec[][]>, subagentFinalText?: string, dumpDir?: string }} options
 * @returns {Promise<{ port: number, baseUrl: string, requests: RecordedMessagesRequest[], close: () => Promise<void> }>}
 */
export async function startFakeAnthropic(options) {
  const { prompts, vars = {}, subagentScripts = {}, subagentFinalText = 'Subagent report: the files do not exist.' } = options;
  const dumpDir = options.dumpDir ?? process.env.FAKE_PROVIDER_DUMP;
  /** @type {RecordedMessagesRequest[]} */
  const requests = [];
  let sideSeq = 0;

  const server = createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_count_${requests.length}` });
        res.end(JSON.stringify({ input_tokens: 10 }));
        return;
      }
      if (req.method !== 'POST' || path !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${path}` } }));
        return;
      }
      /** @type {any} */
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'invalid JSON' } }));
        return;
      }
      const messages = Array.isArray(body.messages) ? body.messages : [];
      const model = typeof body.model === 'string' ? body.model : 'claude-sonnet-4-5';
      const cls = classifyMessagesRequest(body);
      /** @type {{ id: string, name: string, arguments: string }[]} */
      let calls = [];
      /** @type {string | undefined} */
      let text;
      /** @type {number | undefined} */
      let round;
      let requestId;
      if (cls.kind === 'main') {
        const script = prompts[cls.prompt - 1];
        const prefix = `toolu_p${cls.prompt}r`;
        round = lastRound(messages, prefix) + 1;
        const specs = script?.rounds[round - 1];
        if (specs) calls = expandRound(specs, round, vars, prefix);
        else text = script?.finalText ?? 'I could not complete the task.';
        requestId = `req_p${cls.prompt}r${round}`;
      } else if (cls.kind === 'subagent') {
        const prefix = `toolu_sub_${cls.tag}_s`;
        round = lastRound(messages, prefix) + 1;
        const specs = subagentScripts[cls.script]?.[round - 1];
        if (specs) calls = expandRound(specs, round, { ...vars, tag: cls.tag }, prefix);
        else text = subagentFinalText;
        requestId = `req_sub_${cls.tag}_s${round}`;
      } else {
        text = 'OK.';
        requestId = `req_side_${++sideSeq}`;
      }
      const last = messages.at(-1);
      const everything = allText(messages);
      requests.push({
        seq: requests.length + 1,
        kind: cls.kind,
        prompt: cls.kind === 'main' ? cls.prompt : undefined,
        round,
        subagentTag: cls.kind === 'subagent' ? cls.tag : undefined,
        stream: body.stream === true,
        model,
        tools: Array.isArray(body.tools) ? body.tools.map((/** @type {any} */ t) => String(t?.name)) : [],
        messageCount: messages.length,
        requestId,
        callIds: calls.map((c) => c.id),
        reminderExact: occurrences(everything, REMINDER_TEXT),
        stopTextExact: occurrences(everything, STOP_TEXT),
        repetitionWarningExact: occurrences(everything, REPETITION_WARNING_TEXT),
        errorResults:
          last?.role === 'user' && Array.isArray(last.content)
            ? last.content.filter((/** @type {any} */ b) => b?.type === 'tool_result' && b.is_error === true).length
            : 0,
        timeMillis: Date.now(),
      });
      if (dumpDir) {
        writeFileSync(join(dumpDir, `request-${String(requests.length).padStart(3, '0')}.json`), JSON.stringify(body, null, 2));
      }
      if (process.env.FAKE_PROVIDER_DEBUG) {
        console.error(`[fake-anthropic] #${requests.length} ${cls.kind} round=${round} stream=${body.stream} calls=${calls.length}`);
      }
      const id = `msg_${String(requests.length).padStart(4, '0')}`;
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId });
        res.end(
          JSON.stringify({
            id,
            type: 'message',
            role: 'assistant',
            model,
            content: [
              ...(text !== undefined ? [{ type: 'text', text }] : []),
              ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments) })),
            ],
            stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 10, output_tokens: 5 },
          }),
        );
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'request-id': requestId,
      });
      const gap = cls.kind === 'main' ? (prompts[cls.prompt - 1]?.streamGapMillis ?? 0) : 0;
      streamEvents(res, sseEvents({ id, model, text, calls }), gap);
    });
  });

  const { port, close } = await listenOnLoopback(server);
  return { port, baseUrl: `http://127.0.0.1:${port}`, requests, close };
}

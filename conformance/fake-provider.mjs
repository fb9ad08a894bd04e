// @ts-check
/* global process, console, Buffer */
/**
 * A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 for driving the real qwen-code
 * CLI offline.
 *
 * Every request is classified as part of the main conversation or as a side request (session
 * title, prompt suggestion, memory extraction, next-speaker check, ...). Main requests walk the
 * scenario: round N answers with the tool calls of `rounds[N-1]` and `finish_reason: "tool_calls"`,
 * and once the rounds are used up the answer is a final text with `finish_reason: "stop"`. Side
 * requests get a short text answer and never advance the scenario.
 *
 * The round is derived from the conversation itself (the highest `call_r<round>_<i>` id already in
 * the request's assistant messages), so a retried request gets the same round again instead of
 * skipping one.
 *
 * Subagents: a main round may call the `agent` tool with a prompt that carries the marker
 * `[rtfg-subagent script=<name> tag=<tag>]`. The subagent's own model requests (another system
 * prompt, none of the main conversation, the marker in a user message) walk the scenario's
 * `subagentScripts[<name>]` the same way, with ids `sub_<tag>_s<k>_<i>`, and then answer with
 * text. They never advance the main scenario.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { listenOnLoopback } from './loopback.mjs';

/**
 * One tool call of a round, as written in a scenario file.
 * @typedef {object} ToolCallSpec
 * @property {string} name Tool name as the model sends it (e.g. `read_file`).
 * @property {Record<string, unknown>} args Arguments object. String values may contain the
 *   placeholders `{cwd}`, `{round}` and `{i}` (the call's index within its round).
 * @property {number} [count] How many copies of this call to emit; default 1.
 */

/**
 * What the provider recorded about one HTTP request.
 * @typedef {object} RecordedRequest
 * @property {number} seq 1-based arrival order.
 * @property {string} path
 * @property {boolean} main Whether it was classified as a main-conversation request.
 * @property {'main' | 'side' | 'subagent'} kind `subagent`: a request of a subagent started by a
 *   main round's `agent` call (see {@link subagentOf}); `side`: every other non-main request.
 * @property {string} reason Why it was classified that way.
 * @property {number | undefined} round Scenario round answered (1-based), `undefined` for side
 *   requests and for the final answer it is `rounds.length + 1`.
 * @property {boolean} stream Whether the request asked for SSE streaming.
 * @property {number} toolCount Number of tool declarations in the request.
 * @property {number} messageCount
 * @property {string} systemHead First 80 characters of the system prompt.
 * @property {boolean} hasAgentTool Whether the `agent` tool is declared.
 * @property {string[]} roles Message roles, in order.
 * @property {string | undefined} subagentScript Subagent requests: the script name.
 * @property {string | undefined} subagentTag Subagent requests: the tag of the launching call.
 * @property {number | undefined} subagentRound Subagent requests: the script round answered
 *   (1-based; `script.length + 1` is the final text).
 * @property {string} lastUserHead First 120 characters of the last user message's text.
 * @property {string} responseId The `id` the answer carried: `chatcmpl-<round>` for main requests
 *   (the final answer is round `rounds.length + 1`), `chatcmpl-side-<n>` for side requests,
 *   `chatcmpl-sub-<tag>-<k>` for subagent requests.
 * @property {string[]} callIds Tool-call ids returned.
 * @property {number} reminderCount Messages in the request that carry the in-tree guard's
 *   corrective reminder (warn / enforce effect).
 * @property {number} reminderExact Occurrences of the reminder's full text (wire reference §5.4)
 *   in the request's messages.
 * @property {number} timeMillis `Date.now()` when the request arrived.
 */

/**
 * Options of {@link startFakeProvider}.
 * @typedef {object} FakeProviderOptions
 * @property {ToolCallSpec[][]} rounds Tool calls per main round.
 * @property {Record<string, string>} [vars] Placeholder values, e.g. `{ cwd: '/tmp/x' }`.
 * @property {string} [finalText] Final answer after the last round.
 * @property {Record<string, ToolCallSpec[][]>} [subagentScripts] Tool calls per subagent round, by
 *   script name (placeholders as in `rounds`, `{round}` being the subagent's round).
 * @property {string} [subagentFinalText] A subagent's final answer after its script.
 * @property {string} [model] Model name echoed back; default `fake-model`.
 */

/** Tools the main agent loop always declares (side requests declare none, or a reduced set). */
const MAIN_TOOL_MARKERS = ['read_file', 'run_shell_command', 'agent'];

/**
 * Tells a main-conversation request from a side request.
 *
 * Observed in 0.24.4: the main loop streams, declares the full tool set (`agent`, `read_file`,
 * `run_shell_command`, ...) and sends either the first user prompt (no assistant turn yet) or a
 * history ending in tool results (possibly followed by an appended user text part, such as the
 * guard's reminder). Side requests either declare a reduced tool set (the managed-memory
 * extraction subagent declares six tools and its own system prompt) or fork the main
 * conversation after the assistant's answer and append their own user instruction (the prompt
 * suggestion request, `[SUGGESTION MODE: ...]`, reuses the full tool set and system prompt).
 * @param {any} body Parsed request body.
 * @returns {{ main: boolean, reason: string }}
 */
export function classifyRequest(body) {
  const tools = Array.isArray(body?.tools) ? body.tools : [];
  if (tools.length === 0) return { main: false, reason: 'no tools' };
  const names = new Set(tools.map((/** @type {any} */ t) => t?.function?.name));
  if (!MAIN_TOOL_MARKERS.every((n) => names.has(n))) {
    return { main: false, reason: `reduced tool set (${tools.length})` };
  }
  if (body?.stream !== true) return { main: false, reason: 'not streaming' };
  const roles = (Array.isArray(body?.messages) ? body.messages : []).map((/** @type {any} */ m) => m?.role);
  const last = roles.at(-1);
  if (last === 'tool') return { main: true, reason: 'after tool results' };
  if (last !== 'user') return { main: false, reason: `last message is ${String(last)}` };
  let i = roles.length - 1;
  while (i >= 0 && roles[i] === 'user') i--;
  const before = roles[i];
  if (before === undefined || before === 'system') return { main: true, reason: 'first prompt' };
  if (before === 'tool') return { main: true, reason: 'tool results + user text' };
  return { main: false, reason: 'forked after an assistant answer' };
}

/** The marker a main round's `agent` prompt carries: `[rtfg-subagent script=<name> tag=<tag>]`. */
const SUBAGENT_MARKER = /\[rtfg-subagent script=([\w-]+) tag=([\w-]+)\]/;

/** How the main agent's system prompt starts in 0.24.4 (ACP); subagents have their own. */
const MAIN_SYSTEM_PREFIX = 'You are Qwen Code';

/**
 * Recognises a request of a subagent launched by a main round's `agent` call.
 *
 * Observed in 0.24.4 (general-purpose subagent, `run_in_background:false`): its requests stream,
 * declare the inherited tool set (including `agent`: nesting is allowed), have their own system
 * prompt ("You are a general-purpose subagent working for a parent agent. ...") and none of the
 * main conversation: the first user message holds the task prompt of the `agent` call, then the
 * subagent's own tool calls and results follow. The marker alone would also match a fork of the
 * main history (where it sits in an assistant tool call's arguments, never in a user message), so
 * both the foreign system prompt and a user message with the marker are required.
 * @param {any} body Parsed request body.
 * @returns {{ script: string, tag: string } | undefined}
 */
export function subagentOf(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const system = messages.find((/** @type {any} */ m) => m?.role === 'system');
  if (textOf(system?.content).startsWith(MAIN_SYSTEM_PREFIX)) return undefined;
  for (const m of messages) {
    if (m?.role !== 'user') continue;
    const match = SUBAGENT_MARKER.exec(textOf(m.content));
    if (match) return { script: /** @type {string} */ (match[1]), tag: /** @type {string} */ (match[2]) };
  }
  return undefined;
}

/**
 * The highest subagent round (ids `sub_<tag>_s<k>_<i>`) already in the conversation.
 * @param {any[]} messages
 * @param {string} tag
 * @returns {number}
 */
function lastSubagentRound(messages, tag) {
  const re = new RegExp(`^sub_${tag}_s(\\d+)_\\d+$`);
  let last = 0;
  for (const m of messages) {
    const ids = [
      ...(Array.isArray(m?.tool_calls) ? m.tool_calls.map((/** @type {any} */ t) => t?.id) : []),
      m?.tool_call_id,
    ];
    for (const id of ids) {
      const match = typeof id === 'string' ? re.exec(id) : null;
      if (match) last = Math.max(last, Number(match[1]));
    }
  }
  return last;
}

/** A fixed phrase of the in-tree guard's reminder (wire reference §5.4). */
const REMINDER_PHRASE = 'the same tool execution has failed repeatedly';

/** The in-tree guard's full reminder text in 0.24.4 (`REPEATED_TOOL_FAILURE_REMINDER`, wire reference §5.4). */
export const REMINDER_TEXT =
  'System: the same tool execution has failed repeatedly for the same classified reason. ' +
  'Do not repeat the same approach. Inspect the returned result, change the approach or required ' +
  'preconditions, or explain the blocker.';

/**
 * Non-overlapping occurrences of `needle` in `text`.
 * @param {string} text
 * @param {string} needle
 */
function occurrences(text, needle) {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/**
 * Replaces `{name}` placeholders in every string of a JSON value.
 * @param {unknown} value
 * @param {Record<string, string | number>} vars
 * @returns {unknown}
 */
function substitute(value, vars) {
  if (typeof value === 'string') {
    return value.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  }
  return value;
}

/**
 * Expands one scenario round into concrete calls with fresh ids `call_r<round>_<i>` (or another prefix).
 * @param {ToolCallSpec[]} specs
 * @param {number} round 1-based.
 * @param {Record<string, string>} vars
 * @param {string} [idPrefix] Ids are `<idPrefix><round>_<i>`; default `call_r`.
 * @returns {{ id: string, name: string, arguments: string }[]}
 */
export function expandRound(specs, round, vars, idPrefix = 'call_r') {
  /** @type {{ id: string, name: string, arguments: string }[]} */
  const calls = [];
  for (const spec of specs) {
    for (let c = 0; c < (spec.count ?? 1); c++) {
      const i = calls.length;
      const args = substitute(spec.args, { ...vars, round, i });
      calls.push({ id: `${idPrefix}${round}_${i}`, name: spec.name, arguments: JSON.stringify(args) });
    }
  }
  return calls;
}

/**
 * The highest scenario round whose calls already appear in the conversation.
 * @param {any[]} messages
 * @returns {number}
 */
function lastRoundInHistory(messages) {
  let last = 0;
  for (const m of messages) {
    const ids = [
      ...(Array.isArray(m?.tool_calls) ? m.tool_calls.map((/** @type {any} */ t) => t?.id) : []),
      m?.tool_call_id,
    ];
    for (const id of ids) {
      const match = typeof id === 'string' ? /^call_r(\d+)_\d+$/.exec(id) : null;
      if (match) last = Math.max(last, Number(match[1]));
    }
  }
  return last;
}

/**
 * Plain text of a chat message's content (string or parts).
 * @param {any} content
 * @returns {string}
 */
function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (typeof p === 'string' ? p : (p?.text ?? ''))).join('');
  }
  return '';
}

/**
 * Starts the server on 127.0.0.1 with an ephemeral port.
 * @param {FakeProviderOptions} options
 * @returns {Promise<{ port: number, baseUrl: string, requests: RecordedRequest[], close: () => Promise<void> }>}
 */
export async function startFakeProvider(options) {
  const {
    rounds,
    vars = {},
    finalText = 'Done: I could not finish the task.',
    model = 'fake-model',
    subagentScripts = {},
    subagentFinalText = 'Subagent report: the files do not exist.',
  } = options;
  /** @type {RecordedRequest[]} */
  const requests = [];
  let sideSeq = 0;

  const server = createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (req.method === 'GET' && /^(\/v1)?\/models$/.test(path)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model', owned_by: 'fake' }] }));
        return;
      }
      if (req.method !== 'POST' || !/^(\/v1)?\/chat\/completions$/.test(path)) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
        return;
      }
      /** @type {any} */
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'invalid JSON' } }));
        return;
      }
      const messages = Array.isArray(body.messages) ? body.messages : [];
      const sub = subagentOf(body);
      const { main, reason } = sub
        ? { main: false, reason: `subagent ${sub.script}/${sub.tag}` }
        : classifyRequest(body);
      const stream = body.stream === true;
      const round = main ? lastRoundInHistory(messages) + 1 : undefined;
      const subRound = sub ? lastSubagentRound(messages, sub.tag) + 1 : undefined;
      // Main answers are numbered by round so batch keys (headless `response_id`) are predictable.
      const responseId = sub
        ? `chatcmpl-sub-${sub.tag}-${subRound}`
        : round === undefined
          ? `chatcmpl-side-${++sideSeq}`
          : `chatcmpl-${round}`;
      /** @type {{ id: string, name: string, arguments: string }[]} */
      let calls = [];
      let text = 'OK.';
      if (round !== undefined) {
        const specs = rounds[round - 1];
        if (specs) calls = expandRound(specs, round, vars);
        else text = finalText;
      } else if (sub && subRound !== undefined) {
        const specs = subagentScripts[sub.script]?.[subRound - 1];
        if (specs) calls = expandRound(specs, subRound, { ...vars, tag: sub.tag }, `sub_${sub.tag}_s`);
        else text = subagentFinalText;
      } else if (body.response_format?.type === 'json_object' || body.response_format?.type === 'json_schema') {
        text = '{}';
      }
      const system = messages.find((/** @type {any} */ m) => m?.role === 'system');
      const lastUser = [...messages].reverse().find((/** @type {any} */ m) => m?.role === 'user');
      requests.push({
        seq: requests.length + 1,
        path,
        main,
        kind: sub ? 'subagent' : main ? 'main' : 'side',
        reason,
        round,
        stream,
        toolCount: Array.isArray(body.tools) ? body.tools.length : 0,
        messageCount: messages.length,
        systemHead: textOf(system?.content).slice(0, 80),
        hasAgentTool: Array.isArray(body.tools) && body.tools.some((/** @type {any} */ t) => t?.function?.name === 'agent'),
        roles: messages.map((/** @type {any} */ m) => String(m?.role)),
        subagentScript: sub?.script,
        subagentTag: sub?.tag,
        subagentRound: subRound,
        lastUserHead: textOf(lastUser?.content).slice(0, 120),
        responseId,
        callIds: calls.map((c) => c.id),
        reminderCount: messages.filter((/** @type {any} */ m) => textOf(m?.content).includes(REMINDER_PHRASE))
          .length,
        reminderExact: messages.reduce(
          (/** @type {number} */ n, /** @type {any} */ m) => n + occurrences(textOf(m?.content), REMINDER_TEXT),
          0,
        ),
        timeMillis: Date.now(),
      });
      if (process.env.FAKE_PROVIDER_DUMP) {
        writeFileSync(
          join(process.env.FAKE_PROVIDER_DUMP, `request-${String(requests.length).padStart(3, '0')}.json`),
          JSON.stringify(body, null, 2),
        );
      }
      if (process.env.FAKE_PROVIDER_DEBUG) {
        console.error(
          `[fake-provider] #${requests.length} main=${main} (${reason}) round=${round ?? subRound} stream=${stream}` +
            ` tools=${Array.isArray(body.tools) ? body.tools.length : 0} system=${JSON.stringify(textOf(system?.content).slice(0, 60))}`,
        );
      }
      const created = Math.floor(Date.now() / 1000);
      const finishReason = calls.length > 0 ? 'tool_calls' : 'stop';
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: responseId,
            object: 'chat.completion',
            created,
            model,
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: calls.length > 0 ? null : text,
                  ...(calls.length > 0
                    ? {
                        tool_calls: calls.map((c) => ({
                          id: c.id,
                          type: 'function',
                          function: { name: c.name, arguments: c.arguments },
                        })),
                      }
                    : {}),
                },
                finish_reason: finishReason,
              },
            ],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      /** @param {object} delta @param {string | null} finish @param {object} [extra] */
      const chunk = (delta, finish, extra = {}) =>
        `data: ${JSON.stringify({
          id: responseId,
          object: 'chat.completion.chunk',
          created,
          model,
          choices: [{ index: 0, delta, finish_reason: finish }],
          ...extra,
        })}\n\n`;
      let out = chunk({ role: 'assistant', content: '' }, null);
      if (calls.length > 0) {
        calls.forEach((c, index) => {
          out += chunk(
            { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }] },
            null,
          );
        });
      } else {
        out += chunk({ content: text }, null);
      }
      out += chunk({}, finishReason, { usage });
      out += 'data: [DONE]\n\n';
      res.end(out);
    });
  });

  const { port, close } = await listenOnLoopback(server);
  return { port, baseUrl: `http://127.0.0.1:${port}/v1`, requests, close };
}

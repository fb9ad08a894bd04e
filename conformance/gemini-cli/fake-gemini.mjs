// @ts-check
/* global process, console, Buffer */
/**
 * A scripted Gemini API (generativelanguage `v1beta`) on 127.0.0.1 for driving the real gemini-cli
 * offline through `GOOGLE_GEMINI_BASE_URL`.
 *
 * - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` answers server-sent events, one
 *   `data: <GenerateContentResponse>` event per chunk;
 * - `POST /v1beta/models/<model>:generateContent` answers one JSON response (gemini-cli's side
 *   requests: loop-detection checks, next-speaker checks, routing), always a short text or `{}`;
 * - `POST /v1beta/models/<model>:countTokens` answers a fixed count.
 *
 * Scripts. A scenario has one or more prompts; prompt P's text carries the marker
 * `[rtfg-prompt P]`. A streamed request that declares tools and whose history holds that marker
 * in a user text part answers round N of prompt P with the function calls of
 * `prompts[P-1].rounds[N-1]` (ids `call_p<P>r<N>_<i>`, `responseId` `resp_p<P>r<N>`), then the
 * prompt's final text. N is one more than the highest round of that prompt already in the
 * history's function calls, so a retried request gets the same round again. A prompt may also
 * say `recoverAfterReminder: true`: from the first request whose history holds the design's
 * reminder, it answers the final text (the model "changes approach").
 *
 * The round expansion (`{round}`, `{i}`, `{cwd}` placeholders, `count`) is the qwen-code
 * harness's `expandRound`.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { expandRound, REMINDER_TEXT } from '../fake-provider.mjs';
import { REPETITION_WARNING_TEXT, STOP_TEXT } from '../claude-code/fake-anthropic.mjs';
import { listenOnLoopback } from '../loopback.mjs';

export { REMINDER_TEXT, REPETITION_WARNING_TEXT, STOP_TEXT };

/**
 * One prompt of a scenario: the user text (the driver adds the marker) and its rounds.
 * @typedef {object} GeminiPromptScript
 * @property {string} text
 * @property {import('../fake-provider.mjs').ToolCallSpec[][]} rounds
 * @property {string} [finalText]
 * @property {boolean} [recoverAfterReminder] Answer the final text once the reminder is in the history.
 */

/**
 * What the server recorded about one request.
 * @typedef {object} RecordedGeminiRequest
 * @property {number} seq 1-based arrival order.
 * @property {'main' | 'side'} kind
 * @property {string} method `streamGenerateContent`, `generateContent` or `countTokens`.
 * @property {string} model
 * @property {number | undefined} prompt Main requests: the 1-based prompt.
 * @property {number | undefined} round Main: the round answered (`rounds.length + 1` is the final text).
 * @property {string} responseId
 * @property {string[]} tools Declared function names.
 * @property {number} contentCount
 * @property {string[]} callIds Function-call ids returned.
 * @property {number} reminderExact Occurrences of the design's reminder text anywhere in the request's contents.
 * @property {number} stopTextExact Occurrences of the design's stop text in the contents.
 * @property {number} repetitionWarningExact Occurrences of the identical-call breaker's warning.
 * @property {number} nonZeroExitResults Function responses in the last user content whose output
 *   says `Exit Code: N` with N ≠ 0 (how gemini-cli reports a shell command's failure to the model).
 * @property {number} timeMillis
 */

const PROMPT_MARKER = /\[rtfg-prompt (\d+)\]/g;

/**
 * Every string in a value, concatenated (for counting injected texts anywhere in the contents:
 * text parts and function responses alike).
 * @param {unknown} value
 * @returns {string}
 */
function allText(value) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(allText).join('\n');
  if (value && typeof value === 'object') return Object.values(value).map(allText).join('\n');
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
 * Function responses of one content whose output says `Exit Code: N` with N ≠ 0.
 * @param {any} content
 */
function nonZeroExits(content) {
  if (content?.role !== 'user' || !Array.isArray(content.parts)) return 0;
  return content.parts.filter((/** @type {any} */ p) => {
    const m = /Exit Code: (\d+)/.exec(allText(p?.functionResponse?.response));
    return m !== null && m[1] !== '0';
  }).length;
}

/**
 * The prompt a request belongs to: the highest `[rtfg-prompt P]` in a user text part.
 * @param {any[]} contents
 */
function promptOf(contents) {
  let prompt = 0;
  for (const c of contents) {
    if (c?.role !== 'user' || !Array.isArray(c.parts)) continue;
    for (const p of c.parts) {
      if (typeof p?.text !== 'string') continue;
      for (const m of p.text.matchAll(PROMPT_MARKER)) prompt = Math.max(prompt, Number(m[1]));
    }
  }
  return prompt;
}

/**
 * The highest round with ids `<prefix><round>_<i>` among the history's function calls.
 * @param {any[]} contents
 * @param {string} prefix
 */
function lastRound(contents, prefix) {
  const re = new RegExp(`^(?:[\\w-]+__)?${prefix}(\\d+)_\\d+$`);
  let last = 0;
  for (const c of contents) {
    if (!Array.isArray(c?.parts)) continue;
    for (const p of c.parts) {
      const id = p?.functionCall?.id ?? p?.functionResponse?.id;
      const match = typeof id === 'string' ? re.exec(id) : null;
      if (match) last = Math.max(last, Number(match[1]));
    }
  }
  return last;
}

/**
 * One GenerateContentResponse.
 * @param {{ responseId: string, model: string, text: string | undefined, calls: { id: string, name: string, arguments: string }[] }} m
 */
function responseOf({ responseId, model, text, calls }) {
  /** @type {any[]} */
  const parts = [];
  if (text !== undefined) parts.push({ text });
  for (const c of calls) parts.push({ functionCall: { id: c.id, name: c.name, args: JSON.parse(c.arguments) } });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: model,
    responseId,
  };
}

/**
 * Starts the server on 127.0.0.1 with an ephemeral port.
 * @param {{ prompts: GeminiPromptScript[], vars?: Record<string, string>, dumpDir?: string }} options
 * @returns {Promise<{ port: number, baseUrl: string, requests: RecordedGeminiRequest[], close: () => Promise<void> }>}
 */
export async function startFakeGemini(options) {
  const { prompts, vars = {} } = options;
  const dumpDir = options.dumpDir ?? process.env.FAKE_PROVIDER_DUMP;
  /** @type {RecordedGeminiRequest[]} */
  const requests = [];
  let sideSeq = 0;

  const server = createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      const route = /^\/v1(?:beta|alpha|)?\/models\/([^:/]+):(streamGenerateContent|generateContent|countTokens)$/.exec(path);
      if (req.method !== 'POST' || !route) {
        if (process.env.FAKE_PROVIDER_DEBUG) console.error(`[fake-gemini] 404 ${req.method} ${req.url}`);
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 404, message: `no route ${req.method} ${path}`, status: 'NOT_FOUND' } }));
        return;
      }
      const model = /** @type {string} */ (route[1]);
      const method = /** @type {string} */ (route[2]);
      /** @type {any} */
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 400, message: 'invalid JSON', status: 'INVALID_ARGUMENT' } }));
        return;
      }
      if (method === 'countTokens') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ totalTokens: 10 }));
        return;
      }
      const contents = Array.isArray(body.contents) ? body.contents : [];
      const tools = Array.isArray(body.tools)
        ? body.tools.flatMap((/** @type {any} */ t) =>
            Array.isArray(t?.functionDeclarations) ? t.functionDeclarations.map((/** @type {any} */ f) => String(f?.name)) : [],
          )
        : [];
      const everything = allText(contents);
      const prompt = method === 'streamGenerateContent' && tools.length > 0 ? promptOf(contents) : 0;
      /** @type {{ id: string, name: string, arguments: string }[]} */
      let calls = [];
      /** @type {string | undefined} */
      let text;
      /** @type {number | undefined} */
      let round;
      let responseId;
      if (prompt > 0) {
        const script = prompts[prompt - 1];
        const prefix = `call_p${prompt}r`;
        round = lastRound(contents, prefix) + 1;
        const recovered = script?.recoverAfterReminder === true && occurrences(everything, REMINDER_TEXT) > 0;
        const specs = recovered ? undefined : script?.rounds[round - 1];
        if (specs) calls = expandRound(specs, round, vars, prefix);
        else text = script?.finalText ?? 'I could not complete the task.';
        responseId = `resp_p${prompt}r${round}`;
      } else {
        // Side requests (JSON-mode checks and the like): an empty object is valid JSON and text.
        text = body.generationConfig?.responseMimeType === 'application/json' ? '{}' : 'OK.';
        responseId = `resp_side_${++sideSeq}`;
      }
      requests.push({
        seq: requests.length + 1,
        kind: prompt > 0 ? 'main' : 'side',
        method,
        model,
        prompt: prompt > 0 ? prompt : undefined,
        round,
        responseId,
        tools,
        contentCount: contents.length,
        callIds: calls.map((c) => c.id),
        reminderExact: occurrences(everything, REMINDER_TEXT),
        stopTextExact: occurrences(everything, STOP_TEXT),
        repetitionWarningExact: occurrences(everything, REPETITION_WARNING_TEXT),
        nonZeroExitResults: nonZeroExits(contents.at(-1)),
        timeMillis: Date.now(),
      });
      if (dumpDir) {
        writeFileSync(join(dumpDir, `request-${String(requests.length).padStart(3, '0')}.json`), JSON.stringify({ path, body }, null, 2));
      }
      if (process.env.FAKE_PROVIDER_DEBUG) {
        console.error(`[fake-gemini] #${requests.length} ${method} ${prompt > 0 ? 'main' : 'side'} round=${round} calls=${calls.length}`);
      }
      const response = responseOf({ responseId, model, text, calls });
      if (method === 'generateContent') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(response));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(`data: ${JSON.stringify(response)}\r\n\r\n`);
    });
  });

  const { port, close } = await listenOnLoopback(server);
  return { port, baseUrl: `http://127.0.0.1:${port}`, requests, close };
}

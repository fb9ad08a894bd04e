// @ts-check
/* global Buffer */
/**
 * A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 for driving the real pi CLI
 * offline. `prompts[k]` is the script of the k-th user prompt: a list of rounds, each the tool
 * calls of one model response; once a prompt's rounds are used up the answer is text. The prompt
 * is the number of user messages in the request, the round the number of assistant tool-call
 * messages after the last of them, so a retried request gets the same answer.
 */
import { createServer } from 'node:http';

/**
 * @typedef {{ name: string, args: Record<string, unknown> }} Call
 * @typedef {{ prompt: number, round: number, messages: number, texts: string[] }} Recorded
 */

/** Plain text of a chat message's content. */
function textOf(/** @type {unknown} */ content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : (p?.text ?? ''))).join('\n');
  return '';
}

/**
 * @param {Call[][][]} prompts
 * @returns {Promise<{ baseUrl: string, requests: Recorded[], close: () => Promise<void> }>}
 */
export async function startFakeOpenAi(prompts) {
  /** @type {Recorded[]} */
  const requests = [];
  const server = createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !/\/chat\/completions$/.test(req.url ?? '')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      /** @type {any[]} */
      const messages = Array.isArray(body.messages) ? body.messages : [];
      const users = messages.map((m, i) => (m.role === 'user' ? i : -1)).filter((i) => i >= 0);
      const prompt = users.length;
      const after = messages.slice((users.at(-1) ?? -1) + 1);
      const round = after.filter((m) => m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0).length + 1;
      requests.push({ prompt, round, messages: messages.length, texts: messages.map((m) => textOf(m.content)) });
      const script = prompts[prompt - 1] ?? [];
      const calls = (script[round - 1] ?? []).map((c, i) => ({ id: `call_p${prompt}_r${round}_${i + 1}`, name: c.name, arguments: JSON.stringify(c.args) }));
      const id = `chatcmpl-${prompt}-${round}`;
      const created = Math.floor(Date.now() / 1000);
      const finish = calls.length > 0 ? 'tool_calls' : 'stop';
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      const message = calls.length > 0
        ? { role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
        : { role: 'assistant', content: 'Done.' };
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (/** @type {object} */ delta, /** @type {string | null} */ reason, /** @type {object} */ extra = {}) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: reason }], ...extra })}\n\n`;
      let out = chunk({ role: 'assistant' }, null);
      if (calls.length === 0) out += chunk({ content: 'Done.' }, null);
      calls.forEach((c, index) => {
        out += chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }] }, null);
      });
      out += chunk({}, finish, { usage });
      out += 'data: [DONE]\n\n';
      res.end(out);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  };
}

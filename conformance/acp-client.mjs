// @ts-check
/* global setTimeout, clearTimeout */
/**
 * A minimal Agent Client Protocol client for `qwen --acp`: newline-delimited JSON-RPC 2.0 over the
 * child's stdio.
 *
 * It sends `initialize`, `session/new` and `session/prompt`, and answers the agent's own requests:
 * - `session/request_permission`: picks the option whose `kind` is `allow_once` (or `reject_once`,
 *   per scenario), falling back to any `allow_*` / `reject_*` option;
 * - `craft/drainMidTurnQueue`: `{ messages: [], hasQueuedPrompt: false }`, or method-not-found to
 *   simulate a host without the drain;
 * - anything else: method-not-found.
 */

/** JSON-RPC "method not found". */
export const METHOD_NOT_FOUND = -32601;

/** The ext method qwen-code calls to drain mid-turn input (wire reference §5.5). */
export const DRAIN_METHOD = 'craft/drainMidTurnQueue';

/**
 * Options of {@link AcpClient}.
 * @typedef {object} AcpClientOptions
 * @property {'allow' | 'reject'} permission How to answer `session/request_permission`.
 * @property {'ok' | 'missing'} drain How to answer `craft/drainMidTurnQueue`.
 * @property {(line: string) => void} [trace] Receives every raw line in both directions.
 */

/**
 * A request the agent sent to the client, as recorded.
 * @typedef {object} AgentRequest
 * @property {string} method
 * @property {string} answer What the client answered (`allow_once`, `reject_once`, `drained`,
 *   `method_not_found`, ...).
 * @property {string} [toolCallId] For permission requests.
 */

/** A JSON-RPC error the agent returned. */
export class JsonRpcError extends Error {
  /**
   * @param {{ code: number, message: string, data?: unknown }} error
   */
  constructor(error) {
    super(error.message);
    this.name = 'JsonRpcError';
    /** @type {number} */
    this.code = error.code;
    /** @type {unknown} */
    this.data = error.data;
  }
}

export class AcpClient {
  /**
   * @param {{ stdin: import('node:stream').Writable, stdout: import('node:stream').Readable }} io
   * @param {AcpClientOptions} options
   */
  constructor(io, options) {
    this._io = io;
    this._options = options;
    this._nextId = 1;
    /** @type {Map<number, { resolve: (v: any) => void, reject: (e: Error) => void }>} */
    this._pending = new Map();
    /** @type {AgentRequest[]} */
    this.agentRequests = [];
    /** @type {any[]} `session/update` and other notifications, in arrival order. */
    this.notifications = [];
    this._buffer = '';
    this._closed = false;
    io.stdout.setEncoding('utf8');
    io.stdout.on('data', (/** @type {string} */ data) => this._onData(data));
    io.stdout.on('close', () => this._failAll(new Error('agent stdout closed')));
  }

  /**
   * Sends a request and resolves with its result; rejects with {@link JsonRpcError} on an error
   * response, or with a timeout error.
   * @param {string} method
   * @param {unknown} params
   * @param {number} timeoutMillis
   * @returns {Promise<any>}
   */
  request(method, params, timeoutMillis) {
    const id = this._nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this._pending.delete(id);
        reject(new Error(`${method} timed out after ${timeoutMillis} ms`));
      }, timeoutMillis);
      this._pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this._send({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Ends the agent's stdin, which makes `qwen --acp` shut down (and flush telemetry). */
  end() {
    if (this._closed) return;
    this._closed = true;
    this._io.stdin.end();
  }

  /** @param {object} message */
  _send(message) {
    if (this._closed) return;
    const line = JSON.stringify(message);
    this._options.trace?.(`> ${line}`);
    this._io.stdin.write(`${line}\n`);
  }

  /** @param {string} data */
  _onData(data) {
    this._buffer += data;
    let nl;
    while ((nl = this._buffer.indexOf('\n')) >= 0) {
      const line = this._buffer.slice(0, nl).trim();
      this._buffer = this._buffer.slice(nl + 1);
      if (line) this._onLine(line);
    }
  }

  /** @param {string} line */
  _onLine(line) {
    this._options.trace?.(`< ${line}`);
    /** @type {any} */
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return; // not protocol output
    }
    if (msg.method === undefined && msg.id !== undefined) {
      const pending = this._pending.get(msg.id);
      if (!pending) return;
      this._pending.delete(msg.id);
      if (msg.error) pending.reject(new JsonRpcError(msg.error));
      else pending.resolve(msg.result);
      return;
    }
    if (typeof msg.method === 'string' && msg.id !== undefined) {
      this._answer(msg);
      return;
    }
    if (typeof msg.method === 'string') this.notifications.push(msg);
  }

  /** @param {any} msg A request from the agent. */
  _answer(msg) {
    const reply = (/** @type {unknown} */ result) => this._send({ jsonrpc: '2.0', id: msg.id, result });
    const notFound = () => {
      this.agentRequests.push({ method: msg.method, answer: 'method_not_found' });
      this._send({
        jsonrpc: '2.0',
        id: msg.id,
        error: { code: METHOD_NOT_FOUND, message: `Method not found: ${msg.method}` },
      });
    };
    if (msg.method === 'session/request_permission') {
      const wanted = this._options.permission === 'allow' ? 'allow' : 'reject';
      const options = Array.isArray(msg.params?.options) ? msg.params.options : [];
      const option =
        options.find((/** @type {any} */ o) => o?.kind === `${wanted}_once`) ??
        options.find((/** @type {any} */ o) => typeof o?.kind === 'string' && o.kind.startsWith(wanted));
      const toolCallId = msg.params?.toolCall?.toolCallId;
      if (option) {
        this.agentRequests.push({ method: msg.method, answer: option.kind, toolCallId });
        reply({ outcome: { outcome: 'selected', optionId: option.optionId } });
      } else {
        this.agentRequests.push({ method: msg.method, answer: 'cancelled', toolCallId });
        reply({ outcome: { outcome: 'cancelled' } });
      }
      return;
    }
    if (msg.method === DRAIN_METHOD) {
      if (this._options.drain === 'missing') {
        notFound();
        return;
      }
      this.agentRequests.push({ method: msg.method, answer: 'drained' });
      reply({ messages: [], hasQueuedPrompt: false });
      return;
    }
    notFound();
  }

  /** @param {Error} error */
  _failAll(error) {
    for (const { reject } of this._pending.values()) reject(error);
    this._pending.clear();
  }
}

/**
 * The outcome of one ACP prompt.
 * @typedef {object} PromptResult
 * @property {'response' | 'error'} kind
 * @property {string} [stopReason] From a normal response.
 * @property {{ code: number, message: string, data: any }} [error] From an error response.
 * @property {string} sessionId
 */

/**
 * Runs initialize → session/new → session/prompt and returns the prompt's outcome. A timeout or a
 * closed pipe rejects.
 * @param {AcpClient} client
 * @param {{ cwd: string, text: string, timeoutMillis: number }} options
 * @returns {Promise<PromptResult>}
 */
export async function runAcpPrompt(client, { cwd, text, timeoutMillis }) {
  const deadline = Date.now() + timeoutMillis;
  const left = () => Math.max(1, deadline - Date.now());
  await client.request(
    'initialize',
    { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } } },
    left(),
  );
  const session = await client.request('session/new', { cwd, mcpServers: [] }, left());
  const sessionId = String(session?.sessionId);
  try {
    const result = await client.request(
      'session/prompt',
      { sessionId, prompt: [{ type: 'text', text }] },
      left(),
    );
    return { kind: 'response', stopReason: result?.stopReason, sessionId };
  } catch (err) {
    if (err instanceof JsonRpcError) {
      return { kind: 'error', error: { code: err.code, message: err.message, data: err.data }, sessionId };
    }
    throw err;
  }
}

// @ts-check
/* global process */
/**
 * A minimal MCP server over stdio (newline-delimited JSON-RPC 2.0) for the `mcp-failure` scenario:
 * one tool, `fetch_status`, whose every call answers `isError: true` (a tool-level failure, which
 * gemini-cli reports as `mcp_tool_error`). It answers `initialize`, `tools/list`, `tools/call` and
 * `ping`; notifications get no answer; any other request gets `-32601`.
 */
import { createInterface } from 'node:readline';

/** @param {unknown} message */
function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const TOOL = {
  name: 'fetch_status',
  description: 'Fetch the status of a service.',
  inputSchema: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
};

createInterface({ input: process.stdin }).on('line', (line) => {
  /** @type {any} */
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg?.id === undefined || msg.id === null) return; // a notification
  const reply = (/** @type {unknown} */ result) => send({ jsonrpc: '2.0', id: msg.id, result });
  switch (msg.method) {
    case 'initialize':
      reply({
        protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'rtfg-conformance', version: '0.0.0' },
      });
      return;
    case 'ping':
      reply({});
      return;
    case 'tools/list':
      reply({ tools: [TOOL] });
      return;
    case 'tools/call':
      reply({ content: [{ type: 'text', text: 'The status backend is unavailable.' }], isError: true });
      return;
    default:
      send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } });
  }
});

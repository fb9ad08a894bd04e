// @ts-check
/* global process */
/**
 * A stdio MCP server (newline-delimited JSON-RPC) with one tool, `deploy`, whose `mode` argument
 * scripts the outcome: `fail` → a result with `isError: true`; `rpc_error` → a JSON-RPC error
 * answer; `hang` → no answer (Codex's `tool_timeout_sec` ends the call); anything else → success.
 * Codex 0.169 exposes it to the model as namespace `mcp__<server>`, function `deploy`.
 */
import { createInterface } from 'node:readline';

/** @param {unknown} message */
function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

createInterface({ input: process.stdin }).on('line', (line) => {
  /** @type {any} */
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m === null || typeof m !== 'object' || m.id === undefined) return;
  const reply = (/** @type {unknown} */ result) => send({ jsonrpc: '2.0', id: m.id, result });
  switch (m.method) {
    case 'initialize':
      reply({ protocolVersion: m.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'rtfg-fake-mcp', version: '1.0.0' } });
      return;
    case 'tools/list':
      reply({
        tools: [
          {
            name: 'deploy',
            description: 'Deploy a service',
            inputSchema: { type: 'object', properties: { target: { type: 'string' }, mode: { type: 'string' } } },
          },
        ],
      });
      return;
    case 'tools/call': {
      const mode = m.params?.arguments?.mode;
      if (mode === 'hang') return;
      if (mode === 'rpc_error') {
        send({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'deploy backend unavailable' } });
        return;
      }
      reply({ content: [{ type: 'text', text: mode === 'fail' ? 'deploy failed' : 'deployed' }], isError: mode === 'fail' });
      return;
    }
    default:
      reply({});
  }
});

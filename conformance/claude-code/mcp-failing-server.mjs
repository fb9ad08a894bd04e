// @ts-check
/* global process */
/**
 * A stdio MCP server for the Claude Code conformance run (built on the official
 * `@modelcontextprotocol/sdk`, installed by `npm run conformance:install`). Its tools fail the way
 * real servers do, so the scenarios can show what Claude Code's telemetry records of MCP calls:
 * - `lookup_ticket` and `fetch_page` answer with a tool error (`isError: true`);
 * - `list_items` succeeds.
 *
 * Usage (an `mcpServers` entry of a `--mcp-config` file): `node mcp-failing-server.mjs <server name>`.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const name = process.argv[2] ?? 'conformance';
const server = new McpServer({ name, version: '1.0.0' });

/** @param {string} text */
const failed = (text) => ({ content: [{ type: /** @type {const} */ ('text'), text }], isError: true });

server.registerTool('lookup_ticket', { description: 'Look up a ticket by id', inputSchema: { id: z.string() } }, async () =>
  failed('ticket service unavailable'),
);
server.registerTool('fetch_page', { description: 'Fetch a wiki page', inputSchema: { page: z.string() } }, async () =>
  failed('page not found'),
);
server.registerTool('list_items', { description: 'List items', inputSchema: {} }, async () => ({
  content: [{ type: /** @type {const} */ ('text'), text: 'item-1\nitem-2' }],
}));

await server.connect(new StdioServerTransport());

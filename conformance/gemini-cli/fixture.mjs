// @ts-check
/**
 * A privacy-clean fixture from a gemini-cli telemetry outfile: only the records and attributes
 * the `gemini-cli` profile and the conformance checks read, in the outfile's own shape (SDK-serialized
 * objects, one JSON value a line), so `replay` reads the fixture as it reads the
 * outfile. Prompts, arguments, results, error messages, paths, host and process details and MCP
 * server names are dropped; ids, times, names and closed-vocabulary values are kept.
 */
import { createHash } from 'node:crypto';

/** Log events kept, and the attributes kept on them. */
const LOG_EVENTS = new Set(['gemini_cli.user_prompt', 'gemini_cli.api_request', 'gemini_cli.tool_call', 'loop_detected']);
const LOG_ATTRIBUTES = [
  'event.name',
  'event.timestamp',
  'session.id',
  'interactive',
  'prompt_id',
  'role',
  'function_name',
  'success',
  'decision',
  'tool_type',
  'error_type',
  'error.type',
  'loop_type',
  'count',
  'duration_ms',
];
/** Spans kept, and the attributes kept on them. */
const SPAN_NAMES = new Set(['llm_call', 'schedule_tool_calls', 'tool_call']);
const SPAN_ATTRIBUTES = ['gen_ai.operation.name', 'gen_ai.agent.name', 'gen_ai.conversation.id', 'gen_ai.tool.name', 'gen_ai.tool.call_id', 'gen_ai.request.model'];
const RESOURCE_ATTRIBUTES = new Set(['service.name', 'service.version', 'session.id']);

/**
 * @param {Record<string, unknown> | undefined} attrs
 * @param {readonly string[]} keys
 */
function pick(attrs, keys) {
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const k of keys) if (attrs && attrs[k] !== undefined) out[k] = attrs[k];
  return out;
}

/** @param {any} r */
function resourceOf(r) {
  const raw = Array.isArray(r?.resource?._rawAttributes) ? r.resource._rawAttributes : [];
  return { _rawAttributes: raw.filter((/** @type {any} */ p) => Array.isArray(p) && RESOURCE_ATTRIBUTES.has(p[0])) };
}

/**
 * The fixture text of an outfile's records (from `readOutfile`).
 * @param {any[]} records
 * @returns {string}
 */
export function fixtureOf(records) {
  /** @type {unknown[]} */
  const out = [];
  for (const r of records) {
    if (typeof r?.name === 'string' && r._spanContext) {
      if (!SPAN_NAMES.has(r.name)) continue;
      out.push({
        _spanContext: r._spanContext,
        parentSpanContext: r.parentSpanContext,
        kind: r.kind,
        name: r.name,
        attributes: pick(r.attributes, SPAN_ATTRIBUTES),
        startTime: r.startTime,
        endTime: r.endTime,
        status: r.status,
        events: [],
        links: [],
        resource: resourceOf(r),
        instrumentationScope: r.instrumentationScope,
      });
    } else if (r?.attributes && LOG_EVENTS.has(r.attributes['event.name'])) {
      out.push({
        hrTime: r.hrTime,
        hrTimeObserved: r.hrTimeObserved,
        spanContext: r.spanContext,
        attributes: pick(r.attributes, LOG_ATTRIBUTES),
        resource: resourceOf(r),
        instrumentationScope: r.instrumentationScope,
      });
    }
  }
  return out.map((o) => JSON.stringify(o)).join('\n') + '\n';
}

/**
 * The privacy-clean form of one recorded gemini-cli hook input (a `../claude-code/hook-logger.mjs --transcript-turns` line): the
 * session id, event name and time, the tool name, whether it is an MCP call, the error type, the
 * tool input replaced by a digest (equal inputs keep equal digests, for the identical-call
 * breaker), and what the session transcript held then as the logger reduced it (`transcript`: each
 * model turn with calls, only the calls' names and statuses). Prompts, requests, responses, paths
 * and error messages are dropped.
 * @param {any} logged a hook-logger line (`{ receivedMillis, input, transcript? }`)
 * @returns {Record<string, unknown>}
 */
export function hookInputFixture(logged) {
  const input = logged?.input;
  /** @type {Record<string, unknown>} */
  const out = { session_id: input?.session_id, hook_event_name: input?.hook_event_name, timestamp: input?.timestamp };
  if (logged?.transcript !== undefined) out.transcript = logged.transcript;
  if (typeof input?.tool_name === 'string') out.tool_name = input.tool_name;
  if (input?.mcp_context !== undefined) out.mcp_context = {};
  if (input?.tool_input !== undefined) {
    out.tool_input = { digest: createHash('sha256').update(JSON.stringify(input.tool_input)).digest('hex').slice(0, 16) };
  }
  if (input?.tool_response !== undefined) {
    const type = input.tool_response?.error?.type;
    out.tool_response = input.tool_response?.error ? { error: typeof type === 'string' ? { type } : {} } : {};
  }
  return out;
}

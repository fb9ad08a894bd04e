// @ts-check
/**
 * Reading OTLP JSON lines (one export request a line, the collector `file` exporter shape) into
 * flat log events and spans, for the harness's own checks on the real client. The guard itself
 * reads these files through `replay`.
 */
import { readFileSync } from 'node:fs';

/**
 * @typedef {object} FlatLog
 * @property {string} eventName The body (`claude_code.<event>` in Claude Code 2.1.328).
 * @property {string} timeUnixNano
 * @property {string} scope
 * @property {Record<string, unknown>} attributes
 * @property {Record<string, unknown>} resource
 */

/**
 * @typedef {object} FlatSpan
 * @property {string} name
 * @property {string} traceId
 * @property {string} spanId
 * @property {string} parentSpanId
 * @property {string} startTimeUnixNano
 * @property {number | undefined} statusCode
 * @property {Record<string, unknown>} attributes
 */

/**
 * @param {any} v An OTLP AnyValue.
 * @returns {unknown}
 */
function anyValue(v) {
  if (!v || typeof v !== 'object') return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return (v.arrayValue?.values ?? []).map(anyValue);
  return undefined;
}

/**
 * @param {any[] | undefined} attrs
 * @returns {Record<string, unknown>}
 */
function attributes(attrs) {
  return Object.fromEntries((attrs ?? []).map((a) => [a.key, anyValue(a.value)]));
}

/**
 * Reads a file of OTLP JSON lines.
 * @param {string} file
 * @returns {{ logs: FlatLog[], spans: FlatSpan[] }}
 */
export function readOtlpLines(file) {
  /** @type {FlatLog[]} */
  const logs = [];
  /** @type {FlatSpan[]} */
  const spans = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const req = JSON.parse(line);
    for (const rl of req.resourceLogs ?? []) {
      const resource = attributes(rl.resource?.attributes);
      for (const sl of rl.scopeLogs ?? []) {
        for (const r of sl.logRecords ?? []) {
          const a = attributes(r.attributes);
          logs.push({
            // Claude Code 2.1.328: body `claude_code.tool_result`, attribute `event.name` `tool_result`.
            eventName: String(r.body?.stringValue ?? r.eventName ?? a['event.name'] ?? ''),
            timeUnixNano: String(r.timeUnixNano ?? r.observedTimeUnixNano ?? '0'),
            scope: String(sl.scope?.name ?? ''),
            attributes: a,
            resource,
          });
        }
      }
    }
    for (const rs of req.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            name: s.name,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            startTimeUnixNano: String(s.startTimeUnixNano),
            statusCode: s.status?.code,
            attributes: attributes(s.attributes),
          });
        }
      }
    }
  }
  const byTime = (/** @type {string} */ a, /** @type {string} */ b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);
  logs.sort((x, y) => byTime(x.timeUnixNano, y.timeUnixNano) || Number(x.attributes['event.sequence'] ?? 0) - Number(y.attributes['event.sequence'] ?? 0));
  spans.sort((x, y) => byTime(x.startTimeUnixNano, y.startTimeUnixNano));
  return { logs, spans };
}

/**
 * Rewrites OTLP JSON lines request by request: `change` gets each parsed request and returns it
 * (changed in place or not), or `undefined` to drop the line.
 * @param {string} text
 * @param {(request: any) => any} change
 * @returns {string}
 */
export function mapOtlpRequests(text, change) {
  let out = '';
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const next = change(JSON.parse(line));
    if (next !== undefined) out += `${JSON.stringify(next)}\n`;
  }
  return out;
}

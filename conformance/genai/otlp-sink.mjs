// @ts-check
/* global process, Buffer */
// A loopback OTLP/HTTP sink that writes what it receives the way the OpenTelemetry Collector's
// `file` exporter does: one OTLP JSON export request per line (hex trace/span ids, decimal-string
// nanoseconds). It accepts protobuf (the Python SDK's http/protobuf exporter) and JSON bodies,
// identity or gzip. Used to record fixtures/genai captures; `replay` reads its output.
//
//   node conformance/genai/otlp-sink.mjs OUT.otlp.jsonl   # prints "listening http://127.0.0.1:PORT"
//
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';

// The package's own OTLP protobuf decoder (generated from the vendored opentelemetry-proto);
// `npm run test:conformance:genai` builds dist/ first.
import { decodeOtlpProtobuf } from '../../dist/replay.js';

/** @type {Record<string, 'traces' | 'logs' | 'metrics'>} */
const SIGNALS = { '/v1/traces': 'traces', '/v1/logs': 'logs', '/v1/metrics': 'metrics' };
const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

/**
 * Byte-array ids (protobuf decoding) become lowercase hex, as in OTLP JSON.
 * @param {unknown} value
 * @param {string | undefined} key
 * @returns {unknown}
 */
function hexIds(value, key) {
  if (Array.isArray(value)) {
    if (key !== undefined && ID_KEYS.has(key)) return Buffer.from(value).toString('hex');
    return value.map((v) => hexIds(v, undefined));
  }
  if (value !== null && typeof value === 'object') {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = hexIds(v, k);
    return out;
  }
  return value;
}

/**
 * Decode one request body into its OTLP JSON object.
 * @param {string} path
 * @param {string} contentType
 * @param {Buffer} body
 * @returns {unknown}
 */
export function toOtlpJson(path, contentType, body) {
  if (contentType.includes('json')) return JSON.parse(body.toString('utf8'));
  const signal = SIGNALS[path];
  if (signal === undefined) throw new Error(`unknown path ${path}`);
  return hexIds(decodeOtlpProtobuf(signal, body), undefined);
}

/**
 * Start the sink on 127.0.0.1 (port 0 = a free one). `onRequest(signal, json)` sees every decoded
 * request; with `outFile`, trace and log requests are also appended to it as JSON lines.
 * @param {{ outFile?: string, onRequest?: (signal: string, json: unknown) => void }} [options]
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export function startOtlpSink({ outFile, onRequest } = {}) {
  if (outFile) writeFileSync(outFile, '');
  const server = createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        const url = req.url ?? '';
        if (req.method !== 'POST' || SIGNALS[url] === undefined) {
          res.writeHead(404).end();
          return;
        }
        let body = Buffer.concat(chunks);
        if ((req.headers['content-encoding'] ?? '') === 'gzip') body = gunzipSync(body);
        const json = toOtlpJson(url, String(req.headers['content-type'] ?? ''), body);
        if (url !== '/v1/metrics') {
          if (outFile) appendFileSync(outFile, `${JSON.stringify(json)}\n`);
          onRequest?.(url.slice(4), json);
        }
        const protobuf = !String(req.headers['content-type'] ?? '').includes('json');
        res.writeHead(200, { 'content-type': protobuf ? 'application/x-protobuf' : 'application/json' });
        res.end(protobuf ? Buffer.alloc(0) : '{}');
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => /** @type {Promise<void>} */ (new Promise((r) => server.close(() => r()))),
      });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const outFile = process.argv[2];
  if (!outFile) {
    process.stderr.write('usage: otlp-sink.mjs OUT.otlp.jsonl\n');
    process.exit(2);
  }
  const sink = await startOtlpSink({ outFile });
  process.stdout.write(`listening ${sink.url}\n`);
  const stop = () => void sink.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

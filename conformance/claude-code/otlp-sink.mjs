// @ts-check
/* global Buffer */
/**
 * An OTLP/HTTP JSON sink on 127.0.0.1: `POST /v1/traces`, `/v1/logs` and `/v1/metrics` bodies
 * (JSON, identity or gzip) are appended to one file as OTLP JSON lines, one export request a line,
 * which is what an OpenTelemetry Collector's `file` exporter writes and what `replay` reads.
 * Metrics are answered but not written unless `keepMetrics` is set (Claude Code's metrics carry no
 * tool information).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { listenOnLoopback } from '../loopback.mjs';

/**
 * Starts the sink.
 * @param {{ file: string, keepMetrics?: boolean }} options
 * @returns {Promise<{ port: number, endpoint: string, posts: { signal: string, bytes: number, timeMillis: number }[], close: () => Promise<void> }>}
 */
export async function startOtlpSink({ file, keepMetrics = false }) {
  writeFileSync(file, '');
  /** @type {{ signal: string, bytes: number, timeMillis: number }[]} */
  const posts = [];
  const server = createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const signal = /^\/v1\/(traces|logs|metrics)$/.exec((req.url ?? '').split('?')[0] ?? '')?.[1];
      if (req.method !== 'POST' || signal === undefined) {
        res.writeHead(404).end();
        return;
      }
      let raw = Buffer.concat(chunks);
      try {
        if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
        if (!String(req.headers['content-type'] ?? '').includes('json')) throw new Error('not JSON');
        const body = JSON.parse(raw.toString('utf8'));
        posts.push({ signal, bytes: raw.length, timeMillis: Date.now() });
        if (signal !== 'metrics' || keepMetrics) appendFileSync(file, `${JSON.stringify(body)}\n`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return { port, endpoint: `http://127.0.0.1:${port}`, posts, close };
}

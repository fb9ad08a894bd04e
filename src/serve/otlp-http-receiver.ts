/**
 * A small OTLP/HTTP receiver (JSON and protobuf, identity or gzip) on `node:http`, with a body
 * limit enforced after decompression.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { gunzip, inflate } from 'node:zlib';
import { promisify } from 'node:util';
import { isOtlpRequest, otlpRequestToRecords } from '../otlp/otlp.js';
import { otlpProtobufToRecords } from '../otlp/otlp-protobuf-records.js';
import type { OtlpSignal } from '../otlp/otlp.js';
import type { RecordBatch } from '../otlp/records.js';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/** Options of {@link startOtlpHttpReceiver}. */
export interface OtlpHttpReceiverOptions {
  readonly host: string;
  /** `0` picks a free port. */
  readonly port: number;
  /** Largest body accepted, in bytes, before and after decompression; 413 beyond. */
  readonly maxBodyBytes: number;
  /** Called with the records of every accepted request. */
  readonly onRecords: (records: RecordBatch, signal: OtlpSignal) => void;
}

/** A running receiver. */
export interface OtlpHttpReceiver {
  /** `http://host:port` */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const PATHS: Readonly<Record<string, OtlpSignal>> = {
  '/v1/traces': 'traces',
  '/v1/logs': 'logs',
  '/v1/metrics': 'metrics',
};

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      reject(new HttpError(413, `body larger than ${max} bytes`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        reject(new HttpError(413, `body larger than ${max} bytes`));
        req.resume();
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function decompress(body: Buffer, encoding: string | undefined, max: number): Promise<Buffer> {
  const e = (encoding ?? 'identity').trim().toLowerCase();
  try {
    if (e === 'identity' || e === '') return body;
    if (e === 'gzip' || e === 'x-gzip') return await gunzipAsync(body, { maxOutputLength: max });
    if (e === 'deflate') return await inflateAsync(body, { maxOutputLength: max });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new HttpError(413, `decompressed body larger than ${max} bytes`);
    }
    throw new HttpError(400, `cannot decompress ${e} body`);
  }
  throw new HttpError(415, `unsupported content-encoding ${e}`);
}

/** Convert a decoded request; anything it cannot read is the client's error. */
function toRecords(value: Record<string, unknown>): RecordBatch {
  try {
    return otlpRequestToRecords(value);
  } catch (err) {
    throw new HttpError(400, `unreadable OTLP request: ${(err as Error).message}`);
  }
}

function decode(signal: OtlpSignal, contentType: string, body: Buffer): RecordBatch {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json') {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new HttpError(400, `malformed JSON: ${(err as Error).message}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'expected an OTLP JSON object');
    if (!isOtlpRequest(value) && Object.keys(value).length > 0) throw new HttpError(400, 'not an OTLP export request');
    return toRecords(value as Record<string, unknown>);
  }
  if (type === 'application/x-protobuf' || type === 'application/protobuf') {
    try {
      return otlpProtobufToRecords(signal, body);
    } catch (err) {
      throw new HttpError(400, `malformed protobuf: ${(err as Error).message}`);
    }
  }
  throw new HttpError(415, `unsupported content-type ${type || '(none)'}; use application/json or application/x-protobuf`);
}

function reply(res: ServerResponse, status: number, contentType: string, message?: string): void {
  if (res.headersSent) return;
  const json = !contentType.includes('protobuf');
  const body = status === 200 ? (json ? '{}' : '') : json ? JSON.stringify({ code: status, message }) : '';
  res.writeHead(status, { 'content-type': json ? 'application/json' : 'application/x-protobuf', connection: status === 200 ? 'keep-alive' : 'close' });
  res.end(body);
}

/** Start the receiver. Resolves once it listens. */
export function startOtlpHttpReceiver(options: OtlpHttpReceiverOptions): Promise<OtlpHttpReceiver> {
  const server = createServer((req, res) => {
    const contentType = String(req.headers['content-type'] ?? '');
    const path = (req.url ?? '').split('?')[0] ?? '';
    const signal = PATHS[path];
    const handle = async (): Promise<void> => {
      if (signal === undefined) throw new HttpError(404, `unknown path ${path}; use /v1/traces, /v1/logs or /v1/metrics`);
      if (req.method !== 'POST') throw new HttpError(405, 'use POST');
      const raw = await readBody(req, options.maxBodyBytes);
      const body = await decompress(raw, req.headers['content-encoding'] as string | undefined, options.maxBodyBytes);
      const records = decode(signal, contentType, body);
      if (signal !== 'metrics') options.onRecords(records, signal);
      reply(res, 200, contentType);
    };
    handle().catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      reply(res, status, contentType, err instanceof Error ? err.message : 'internal error');
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const addr = server.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : options.port;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      resolve({
        url: `http://${host}:${port}`,
        server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

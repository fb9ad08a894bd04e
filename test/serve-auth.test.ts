/**
 * Who may send to serve (issue 34.5): a non-loopback bind without authentication is refused, a
 * bearer token is checked on OTLP/HTTP and OTLP/gRPC before the body is read, and both receivers
 * serve TLS (and mutual TLS). Every server listens on 127.0.0.1.
 */
import { credentials, Metadata } from '@grpc/grpc-js';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPLogExporter as HttpLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { describe, expect, it } from 'vitest';
import { replayRecords } from '../src/replay/replay.js';
import { startGuardServer } from '../src/serve/guard-server.js';
import type { GuardServerOptions } from '../src/serve/guard-server.js';
import { exposureRefusal, isLoopbackHost } from '../src/serve/receiver-auth.js';
import { loadFixture, toReadableLog, toReadableSpan } from './helpers/recorded.js';

const pem = (name: string) => readFileSync(new URL(`./helpers/tls/${name}`, import.meta.url));
const CA = pem('ca.crt');
const TLS = { cert: pem('server.crt'), key: pem('server.key') };
const TOKEN = 'k7Q2-test-token';
const MAIN = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;
const quiet: GuardServerOptions = { port: 0, graceMillis: 0, print: () => undefined, log: () => undefined, metricExportIntervalMillis: 3_600_000 };

function send<T>(exporter: { export(items: T[], done: (r: ExportResult) => void): void; shutdown(): Promise<void> }, items: T[]): Promise<ExportResult> {
  return new Promise<ExportResult>((done) => exporter.export(items, done)).finally(() => void exporter.shutdown());
}

async function post(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

describe('a non-loopback address needs authentication', () => {
  const NONE = {};
  const TOKEN_ONLY = { bearerToken: TOKEN };
  const TLS_ONLY = { tls: TLS };
  const MTLS = { tls: { ...TLS, clientCa: CA } };
  it.each<[string, string, Parameters<typeof exposureRefusal>[1], boolean, boolean]>([
    ['127.0.0.1', 'nothing', NONE, false, true],
    ['127.8.9.10', 'nothing', NONE, false, true],
    ['localhost', 'nothing', NONE, false, true],
    ['::1', 'nothing', NONE, false, true],
    ['[::1]', 'nothing', NONE, false, true],
    ['0.0.0.0', 'nothing', NONE, false, false],
    ['::', 'nothing', NONE, false, false],
    ['10.0.0.7', 'nothing', NONE, false, false],
    ['0.0.0.0', 'TLS without client certificates', TLS_ONLY, false, false],
    ['0.0.0.0', 'a bearer token', TOKEN_ONLY, false, true],
    ['0.0.0.0', 'client certificates', MTLS, false, true],
    ['0.0.0.0', 'nothing', NONE, true, true],
  ])('%s with %s, allowUnauthenticated %s: allowed %s', (host, _desc, auth, allow, allowed) => {
    expect(exposureRefusal(host, auth, allow) === undefined).toBe(allowed);
    expect(isLoopbackHost(host)).toBe(['127.0.0.1', '127.8.9.10', 'localhost', '::1', '[::1]'].includes(host));
  });

  it('startGuardServer refuses 0.0.0.0 without a token or client certificates, before binding', async () => {
    await expect(startGuardServer({ ...quiet, host: '0.0.0.0' })).rejects.toThrow(/refusing to receive on 0\.0\.0\.0 without authentication/);
  });

  it('the CLI says so in one line and exits 2 (it used to start silently)', () => {
    const r = spawnSync(process.execPath, [MAIN, 'serve', '--host', '0.0.0.0', '--port', '0'], { encoding: 'utf8', timeout: 15_000 });
    expect(r.stderr).toMatch(/^error: refusing to receive on 0\.0\.0\.0 without authentication: .*--allow-unauthenticated.*\n$/);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.status).toBe(2);
  });
});

describe('a bearer token', () => {
  it('OTLP/HTTP: 401 with WWW-Authenticate without it or with another; the real exporter with it is judged', async () => {
    const server = await startGuardServer({ ...quiet, graceMillis: 5_000, bearerToken: TOKEN });
    try {
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }, { authorization: `Basic ${TOKEN}` }] as Record<string, string>[]) {
        const r = await post(`${server.url}/v1/traces`, headers);
        expect(r.status).toBe(401);
        expect(r.headers['www-authenticate']).toBe('Bearer');
        expect(JSON.parse(r.body)).toEqual({ code: 16, message: 'missing or invalid bearer token' });
      }
      expect(server.ingestStats()).toEqual({ spansKept: 0, logsKept: 0, held: 0 });
      expect((await post(`${server.url}/v1/traces`, { authorization: `bearer ${TOKEN}` })).status).toBe(200);
      const records = loadFixture('acp-shadow-drain');
      const headers = { Authorization: `Bearer ${TOKEN}` };
      const results = await Promise.all([
        send(new HttpTraceExporter({ url: `${server.url}/v1/traces`, headers }), records.spans.map(toReadableSpan)),
        send(new HttpLogExporter({ url: `${server.url}/v1/logs`, headers }), records.logs.map(toReadableLog)),
      ]);
      expect(results.map((r) => r.code)).toEqual([ExportResultCode.SUCCESS, ExportResultCode.SUCCESS]);
      server.drain();
      expect(server.decisions.map((d) => d.outcome.decision)).toEqual((await replayRecords(records, { mode: 'shadow' })).decisions.map((d) => d.outcome.decision));
      expect(server.decisions.length).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it('OTLP/gRPC: UNAUTHENTICATED without it; accepted with it in the authorization metadata', async () => {
    const server = await startGuardServer({ ...quiet, grpcPort: 0, bearerToken: TOKEN });
    try {
      const url = `http://${server.grpcAddress ?? ''}`;
      const spans = loadFixture('acp-shadow-drain').spans.map(toReadableSpan);
      const refused = await send(new GrpcTraceExporter({ url }), spans);
      expect(refused.code).toBe(ExportResultCode.FAILED);
      expect(String(refused.error?.message)).toMatch(/UNAUTHENTICATED|missing or invalid bearer token/);
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${TOKEN}`);
      expect((await send(new GrpcTraceExporter({ url, metadata }), spans)).code).toBe(ExportResultCode.SUCCESS);
      expect(server.ingestStats().spansKept).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});

describe('TLS', () => {
  it('OTLP/HTTP over HTTPS: a client trusting the CA is served; a plain-HTTP client is not', async () => {
    const server = await startGuardServer({ ...quiet, tls: TLS });
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const r = await send(new HttpTraceExporter({ url: `${server.url}/v1/traces`, httpAgentOptions: { ca: CA } }), loadFixture('acp-shadow-drain').spans.map(toReadableSpan));
      expect(r.code).toBe(ExportResultCode.SUCCESS);
      const plain = await fetch(`${server.url.replace('https:', 'http:')}/v1/traces`, { method: 'POST', body: '{}' }).then(
        (res) => res.status,
        () => 'failed',
      );
      expect(plain).toBe('failed');
    } finally {
      await server.close();
    }
  });

  it('OTLP/gRPC over TLS: a client trusting the CA is served', async () => {
    const server = await startGuardServer({ ...quiet, grpcPort: 0, tls: TLS });
    try {
      const url = `https://${server.grpcAddress ?? ''}`;
      const r = await send(new GrpcTraceExporter({ url, credentials: credentials.createSsl(CA) }), loadFixture('acp-shadow-drain').spans.map(toReadableSpan));
      expect(r.code).toBe(ExportResultCode.SUCCESS);
    } finally {
      await server.close();
    }
  });

  it('mutual TLS: a client without a certificate signed by the client CA is turned away at the handshake', async () => {
    const server = await startGuardServer({ ...quiet, tls: { ...TLS, clientCa: CA } });
    const status = (cert?: { cert: Buffer; key: Buffer }) =>
      new Promise<number | string>((resolve) => {
        const req = request(`${server.url}/v1/traces`, { method: 'POST', ca: CA, ...cert, headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', () => resolve('refused'));
        req.end('{}');
      });
    try {
      expect(await status()).toBe('refused');
      expect(await status({ cert: pem('client.crt'), key: pem('client.key') })).toBe(200);
    } finally {
      await server.close();
    }
  });
});

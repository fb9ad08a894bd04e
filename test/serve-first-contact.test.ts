/**
 * `serve` as a new user first meets it: the guard's telemetry exported to a receiver that is not
 * there, a port already taken, a `--report` path that cannot be written.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGuardServer } from '../src/serve/guard-server.js';
import { exportFailureReason } from '../src/serve/export-watch.js';
import { fixturePath, loadFixture } from './helpers/recorded.js';

// `npm test` builds first (pretest), so the CLI is tested as users run it.
const MAIN = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;

function cli(args: string[], timeoutMillis = 15_000) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: timeoutMillis, env: { PATH: process.env.PATH ?? '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A loopback port on which nothing listens (bound, then closed). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function until(check: () => boolean, timeoutMillis: number): Promise<void> {
  const end = Date.now() + timeoutMillis;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
}

describe('serve --export-endpoint to a receiver that is not there', () => {
  it('says once that guard telemetry is being lost, and counts the failed exports', async () => {
    const endpoint = `http://127.0.0.1:${await deadPort()}`;
    const lines: string[] = [];
    const server = await startGuardServer({ port: 0, graceMillis: 0, exportEndpoint: endpoint, metricExportIntervalMillis: 200, log: (l) => lines.push(l) });
    const lost = () => lines.filter((l) => l.includes('guard telemetry is being lost'));
    try {
      server.ingest(loadFixture('acp-shadow-drain'));
      server.drain();
      expect(server.decisionCount()).toBe(6);
      // The exporters retry a refused connection for several seconds before they give up.
      await until(() => lost().length > 0, 20_000);
      // Later exports (a metric export every 200 ms, the decisions' logs) fail too.
      await until(() => server.telemetryExportsLost() >= 2, 20_000);
    } finally {
      await server.close();
    }
    expect(lost()).toEqual([
      `serve: guard telemetry is being lost: exporting ${lost()[0]?.includes('exporting logs') === true ? 'logs' : 'metrics'} to ${endpoint} failed (ECONNREFUSED); decisions still reach the summary at exit (said once until exports succeed again)`,
    ]);
    expect(server.telemetryExportsLost()).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it.each<[string, unknown, string]>([
    ['a Node system error', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'ECONNREFUSED'],
    ['an HTTP status (OTLPExporterError)', Object.assign(new Error('Bad Request'), { code: 400, data: '{"secret":"body"}' }), 'HTTP 400'],
    ['a wrapped cause', new Error('export failed', { cause: Object.assign(new Error('x'), { code: 'ETIMEDOUT' }) }), 'ETIMEDOUT'],
    ['a message naming the system error only', new Error('Request failed: ENOTFOUND'), 'ENOTFOUND'],
    ['anything else (never the message)', new Error('/home/user/secret.txt: nope'), 'export failed'],
    ['no error at all', undefined, 'export failed'],
  ])('the reason of %s is from a closed vocabulary', (_desc, error, reason) => {
    expect(exportFailureReason(error)).toBe(reason);
  });
});

describe('serve: a port already in use', () => {
  it.each([
    { receiver: 'OTLP/HTTP', grpc: false },
    { receiver: 'OTLP/gRPC', grpc: true },
  ])('$receiver: the error names the address, the receiver and the system code, and nothing is left listening', async ({ receiver, grpc }) => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as AddressInfo;
    try {
      const err = (await startGuardServer({ port: grpc ? 0 : port, grpcPort: grpc ? port : undefined, print: () => undefined, log: () => undefined }).then(
        () => undefined,
        (e: unknown) => e,
      )) as (Error & { code?: string; address?: string; receiver?: string }) | undefined;
      expect(err).toBeInstanceOf(Error);
      expect(err?.code).toBe('EADDRINUSE');
      expect(err?.address).toBe(`127.0.0.1:${port}`);
      expect(err?.receiver).toBe(receiver);
    } finally {
      await new Promise<void>((r) => taken.close(() => r()));
    }
  });
});

describe('serve (the CLI): a port already in use is one line', () => {
  it.each([
    { receiver: 'OTLP/HTTP', args: (p: number) => ['--port', String(p)] },
    { receiver: 'OTLP/gRPC', args: (p: number) => ['--port', '0', '--grpc-port', String(p)] },
  ])('$receiver', async ({ receiver, args }) => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as AddressInfo;
    try {
      const r = await new Promise<ReturnType<typeof cli>>((resolve) => setImmediate(() => resolve(cli(['serve', ...args(port)]))));
      expect(r.stderr).toBe(`error: cannot listen on 127.0.0.1:${port} for ${receiver} (EADDRINUSE)\n`);
      expect(r.code).toBe(2);
    } finally {
      await new Promise<void>((r) => taken.close(() => r()));
    }
  });
});

describe('--report to a path that cannot be written fails before the run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rtfg-report-path-'));
  const aFile = join(dir, 'a-file');
  writeFileSync(aFile, '');
  const paths = [
    { desc: 'a missing directory', file: join(dir, 'missing', 'report.html'), code: 'ENOENT' },
    { desc: 'a parent that is a file', file: join(aFile, 'report.html'), code: 'ENOTDIR' },
    { desc: 'a directory', file: dir, code: 'EISDIR' },
  ];
  const commands = [
    { command: 'replay', args: (file: string) => ['replay', '--report', file, fixturePath('acp-shadow-drain')] },
    // Without the check, serve started listening and ran until signalled (the timeout kills it here).
    { command: 'serve', args: (file: string) => ['serve', '--port', '0', '--report', file] },
  ];
  it.each(commands.flatMap((c) => paths.map((p) => ({ ...c, ...p }))))('$command, $desc: exit 2, one line, nothing run', ({ args, file, code }) => {
    const r = cli(args(file), 10_000);
    expect(r.stderr).toBe(`error: ${file}: cannot write the report (${code}); nothing was run\n`);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
  });
});

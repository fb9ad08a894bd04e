import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../helpers/recorded.js';
import { failingBatches, scenarioOtlpJsonLines } from '../helpers/report-scenario.js';

// `npm test` builds first (pretest): the CLI is tested as users run it.
const MAIN = new URL('../../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;

const tmp = () => mkdtempSync(join(tmpdir(), 'rtfg-report-'));

describe('replay --report', () => {
  it('writes the page next to the usual output; the exit code is unchanged', () => {
    const out = join(tmp(), 'report.html');
    const r = spawnSync(process.execPath, [MAIN, 'replay', '--compare', '--report', out, fixturePath('acp-shadow-drain')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('agreement: 6/6 batches');
    expect(r.stderr).toMatch(/report: wrote .*report\.html \(\d+ KiB\)/);
    const html = readFileSync(out, 'utf8');
    expect(html).toMatch(/id="would-stop">1</);
    // The capture's prompt made 7 model requests; enforce would not have sent the last 2.
    expect(html).toMatch(/id="saved-requests">2</);
  });

  it('an unwritable report path is a user error (exit 2) without a stack trace', () => {
    const r = spawnSync(process.execPath, [MAIN, 'replay', '--report', join(tmp(), 'missing-dir', 'r.html'), fixturePath('acp-shadow-drain')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^error: .*r\.html: cannot write the report \(ENOENT\)/m);
    expect(r.stderr).not.toContain('    at ');
  });
});

/** Wait until `text` matches, or fail after `ms`. */
function waitFor(get: () => string, re: RegExp, ms: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const poll = setInterval(() => {
      const m = get().match(re);
      if (m !== null) {
        clearInterval(poll);
        resolve(m);
      } else if (Date.now() - start > ms) {
        clearInterval(poll);
        reject(new Error(`timed out waiting for ${re}: ${get()}`));
      }
    }, 25);
  });
}

describe('serve --report', () => {
  it('writes the report on SIGUSR2 while serving, and again at exit', async () => {
    const dir = tmp();
    const out = join(dir, 'live.html');
    const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--grace-millis', '50', '--report', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const [, url] = await waitFor(() => stderr, /receiving OTLP\/HTTP on (http:\/\/127\.0\.0\.1:\d+)/, 15_000);
      await waitFor(() => stderr, /`kill -USR2 \d+` writes it now/, 15_000);
      // 7 failing batches with growing token counts: requests 5, 6, 7 come after the stop point.
      const body = scenarioOtlpJsonLines([{ sessionId: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a', turn: 1, batches: failingBatches(7), tokens: (i) => [1000 * (i + 1), 100 * (i + 1)], startMillis: Date.now() - 5_000 }]);
      const res = await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(200);
      await new Promise((r) => setTimeout(r, 400));
      child.kill('SIGUSR2');
      await waitFor(() => stderr, /report: wrote .*live\.html/, 20_000);
      const live = readFileSync(out, 'utf8');
      expect(live).toMatch(/id="would-warn">1</);
      writeFileSync(out, 'overwritten');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const final = readFileSync(out, 'utf8');
      expect(final).toMatch(/id="would-stop">1</);
      expect(final).toMatch(/id="saved-input-tokens">21,000</);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});

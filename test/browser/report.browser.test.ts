/**
 * The shadow report as a person sees it: rendered from fixtures, opened in a real headless
 * Chromium (Debian's `chromium`, driven by playwright-core), checked for console errors, network
 * requests and the key numbers, and saved as a screenshot (artifacts/report.png).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { emptyRecordBatch } from '../../src/otlp/records.js';
import { replayRecords } from '../../src/replay/replay.js';
import { parseTelemetryText } from '../../src/otlp/telemetry-file.js';
import { renderReport } from '../../src/report/report.js';
import { fixturePath } from '../helpers/recorded.js';
import { failingBatches, scenarioOtlpJsonLines } from '../helpers/report-scenario.js';

const ARTIFACTS = new URL('../../artifacts/', import.meta.url);
const CLAUDE_CODE_CAPTURE = new URL('../../fixtures/claude-code-2.1.328/bash-git-loop-shadow.otlp.jsonl', import.meta.url);

function chromiumPath(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  return execFileSync('bash', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim();
}

let browser: Browser;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-gpu'] });
});

afterAll(async () => {
  await browser?.close();
});

describe('the report in a real Chromium', () => {
  it('opens offline with no console error and shows the key numbers', async () => {
    const records = emptyRecordBatch();
    parseTelemetryText(readFileSync(fixturePath('acp-shadow-drain'), 'utf8'), 'acp-shadow-drain', records);
    // A real Claude Code 2.1.328 capture: its api_request events carry tokens and cost_usd.
    parseTelemetryText(readFileSync(CLAUDE_CODE_CAPTURE, 'utf8'), 'bash-git-loop-shadow', records);
    parseTelemetryText(readFileSync(new URL('../../fixtures/cases/turn2/t2-16-parallel-identical-in-one-batch.otlp.jsonl', import.meta.url), 'utf8'), 't2-16', records);
    // A loop with growing token counts: 7 failing batches; enforce stops after batch 5, so
    // requests 5, 6, 7 (6,000 + 7,000 + 8,000 input tokens) are saved.
    const scenario = scenarioOtlpJsonLines(
      [{ sessionId: '7c1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5e', turn: 1, batches: failingBatches(7), tokens: (i) => [1000 * (i + 1), 100 * (i + 1)], startMillis: 1_796_000_000_000 }],
      { 'service.version': '0.24.4', 'deployment.environment': 'staging' },
    );
    parseTelemetryText(scenario, 'scenario', records);
    const result = await replayRecords(records);
    const { html } = await renderReport(records, result);
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = new URL('report.html', ARTIFACTS);
    writeFileSync(file, html);

    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(file.href, { waitUntil: 'load' });

    expect(errors).toEqual([]);
    expect(requests).toEqual([file.href]);
    // No script, anywhere.
    expect(await page.$$eval('script', (s) => s.length)).toBe(0);
    // The design's numbers: acp-shadow-drain would_warn at batch 4 and would_stop at batch 5;
    // the scenario likewise; the Claude Code capture's loop too (claude-code-fixtures.test.ts);
    // t2-16 is a breaker case only.
    expect(await page.textContent('h1')).toBe('Repeated tool-failure guard: shadow report');
    expect(await page.textContent('#would-warn')).toBe('3');
    expect(await page.textContent('#would-stop')).toBe('3');
    expect(await page.textContent('#saved-prompts')).toBe('3');
    // acp-shadow-drain saves 2 requests of 10 input tokens; the scenario 3 requests of 21,000; the
    // Claude Code loop 2 requests of 10 input tokens (its last two api_request events).
    expect(await page.textContent('#saved-requests')).toBe('7');
    expect(await page.textContent('#saved-input-tokens')).toBe('21,040');
    // The verdict comes first and says what enforce would have stopped.
    const verdict = (await page.textContent('#verdict')) ?? '';
    expect(verdict).toMatch(/^Verdict \(shadow\)\. 3 prompts of \d+ looped/);
    expect(await page.textContent('#verdict-stopped')).toBe('3');
    const ids = await page.$$eval('[id]', (els) => els.map((el) => el.id));
    expect(ids.indexOf('verdict')).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf('verdict')).toBeLessThan(ids.indexOf('summary'));
    // A non-zero Claude Code saving: tokens and the money its telemetry states.
    const claude = await page.$$eval('#savings-by-agent tr[data-group="claude-code"] td', (tds) => tds.map((td) => td.textContent ?? ''));
    expect(claude.length).toBeGreaterThan(8);
    const afterStop = claude.slice(-5); // requests, input tokens, output tokens, money, wall time (no cache tokens in these captures)
    expect(afterStop[0]).toBe('2');
    expect(Number(afterStop[1]?.replace(/,/g, ''))).toBeGreaterThan(0);
    expect(afterStop[3]).toMatch(/^\$0\.000[1-9]/);
    // The gate table: every row has a result of the closed three.
    const statuses = await page.$$eval('#gate [data-status]', (els) => els.map((el) => el.getAttribute('data-status')));
    expect(statuses.length).toBeGreaterThan(10);
    for (const s of statuses) expect(['PASS', 'FAIL', 'NOT ENOUGH DATA']).toContain(s);
    expect(await page.textContent('#gate h3')).toContain('Phase 1');
    const text = (await page.textContent('body')) ?? '';
    expect(text).toContain('staging');
    expect(text).toContain('8 failures, 2 batches (design default)');
    // Every chart rendered to a visible SVG with content.
    const charts = await page.$$eval('figure svg', (svgs) => svgs.map((s) => ({ w: s.getBoundingClientRect().width, shapes: s.querySelectorAll('path,rect,text').length })));
    expect(charts.length).toBeGreaterThanOrEqual(6);
    for (const c of charts) {
      expect(c.w).toBeGreaterThan(200);
      expect(c.shapes).toBeGreaterThan(5);
    }
    await page.screenshot({ path: new URL('report.png', ARTIFACTS).pathname, fullPage: true });
    await page.close();
  });
});

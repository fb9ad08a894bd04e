/**
 * End-to-end check of collector-config/otelcol.yaml: the operator pipelines keep everything,
 * the RUM pipelines drop the guard's telemetry and strip sensitive fields.
 *
 * Runs under vitest.e2e.config.ts (`npm run test:e2e`); the default `npm test` excludes test/e2e/,
 * because the first collector build needs Go and takes minutes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectorBinaryPath, ensureCollectorBuilt, startCollector } from './collector-process.js';
import { readOutputFiles, SIGNALS } from './otlp-files.js';
import type { Item } from './otlp-files.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONFIG_PATH = join(REPO_ROOT, 'collector-config', 'otelcol.yaml');
const DATA_DIR = join(REPO_ROOT, 'test', 'e2e', 'data');

const GUARD_SCOPE = 'repeated-tool-failure-guard';
const GUARD_EVENT = 'qwen-code.repeated_tool_failure_guard';
const GUARD_METRIC = 'qwen-code.repeated_tool_failure_guard.count';
const RUM_EXCLUDE = 'qwen-code.rum.exclude';
/** Every raw value in the data files that must not reach RUM contains this marker. */
const SECRET_MARKER = 'S3CR3T';
const SENSITIVE_KEYS = [
  'function_args',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
  'error',
  'error.message',
  'prompt',
  'request_text',
  'response_text',
  'metadata',
  'mcp_server_name',
  'gen_ai.user.id',
  'user.email',
  'exception.message',
  'exception.stacktrace',
];

describe('collector-config/otelcol.yaml', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'guard-collector-e2e-'));
  const operatorDir = join(workDir, 'operator');
  const rumDir = join(workDir, 'rum');
  let operator: Item[] = [];
  let rum: Item[] = [];
  let rumText = '';
  let operatorText = '';

  beforeAll(async () => {
    await ensureCollectorBuilt();
  }, 600_000);

  afterAll(() => {
    rmSync(workDir, { recursive: true, force: true });
  });

  it('passes `otelcol-guard validate`', () => {
    const result = spawnSync(collectorBinaryPath(), ['validate', '--config', CONFIG_PATH], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status, result.stderr + result.stdout).toBe(0);
  });

  it('accepts OTLP/HTTP JSON on loopback and writes both outputs', async () => {
    const collector = await startCollector({
      configPath: CONFIG_PATH,
      env: { GUARD_OPERATOR_DIR: operatorDir, GUARD_RUM_DIR: rumDir },
      readyTimeoutMillis: 30_000,
    });
    try {
      expect(collector.httpEndpoint).toMatch(/^127\.0\.0\.1:\d+$/);
      for (const signal of SIGNALS) {
        const response = await fetch(`http://${collector.httpEndpoint}/v1/${signal}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: readFileSync(join(DATA_DIR, `${signal}.json`), 'utf8'),
          signal: AbortSignal.timeout(10_000),
        });
        expect(response.status, `${signal}: ${await response.text()}`).toBe(200);
      }
    } finally {
      await collector.stop();
    }
    expect(collector.exitCode(), collector.output()).toBe(0);
    expect(collector.output()).not.toMatch(/panic|"level":"error"|\terror\t/);
    const operatorFiles = readOutputFiles(operatorDir);
    const rumFiles = readOutputFiles(rumDir);
    operatorText = operatorFiles.text;
    rumText = rumFiles.text;
    operator = operatorFiles.items;
    rum = rumFiles.items;
    expect(operator.length).toBeGreaterThan(0);
    expect(rum.length).toBeGreaterThan(0);
  }, 60_000);

  describe('operator output', () => {
    it('keeps the guard counter with its exact labels', () => {
      const points = operator.filter((i) => i.kind === 'dataPoint' && i.name === GUARD_METRIC && i.scope === GUARD_SCOPE);
      expect(points.map((p) => p.attributes)).toEqual([
        {
          route: 'acp_foreground',
          mode: 'shadow',
          phase_before: 'warned',
          phase_after: 'latched',
          decision: 'would_stop',
          failure_count_bucket: '8+',
          batch_count_bucket: '3+',
          terminal_status: 'error',
          execution_status: 'error',
          tool_type: 'native',
        },
      ]);
    });

    it('keeps the guard diagnostic log', () => {
      const logs = operator.filter((i) => i.kind === 'log' && i.name === GUARD_EVENT && i.scope === GUARD_SCOPE);
      expect(logs).toHaveLength(1);
      expect(logs[0]?.body).toBe('Repeated tool failure guard decision: would_stop.');
      expect(logs[0]?.attributes).toMatchObject({
        'event.name': GUARD_EVENT,
        decision: 'would_stop',
        mode: 'shadow',
        candidate_ordinal: 1,
        execution_error_type: 'file_not_found',
      });
    });

    it('keeps the terminal loop event with its RUM-exclusion marker', () => {
      const loops = operator.filter((i) => i.kind === 'log' && i.name === 'loop_detected' && i.scope === GUARD_SCOPE);
      expect(loops).toHaveLength(1);
      expect(loops[0]?.attributes).toMatchObject({
        'event.name': 'loop_detected',
        loop_type: 'repeated_tool_execution_failure',
        [RUM_EXCLUDE]: true,
      });
    });

    it('keeps every record as received, unredacted', () => {
      expect(operator.filter((i) => i.kind === 'log')).toHaveLength(10);
      expect(operator.filter((i) => i.kind === 'span')).toHaveLength(3);
      expect(operator.filter((i) => i.kind === 'dataPoint')).toHaveLength(5);
      expect(operatorText).toContain(SECRET_MARKER);
      const toolSpan = operator.find((i) => i.kind === 'span' && i.name === 'qwen-code.tool');
      expect(toolSpan?.statusMessage).toContain(SECRET_MARKER);
      expect(toolSpan?.attributes).toHaveProperty('gen_ai.tool.call.arguments');
    });
  });

  describe('RUM output', () => {
    it('drops the guard diagnostic, the guard loop stop and the guard counter', () => {
      expect(rum.filter((i) => i.scope === GUARD_SCOPE)).toEqual([]);
      expect(rum.filter((i) => i.name === GUARD_EVENT || i.name === GUARD_METRIC)).toEqual([]);
      expect(rum.filter((i) => i.attributes['loop_type'] === 'repeated_tool_execution_failure')).toEqual([]);
      expect(rum.filter((i) => RUM_EXCLUDE in i.attributes)).toEqual([]);
      expect(rumText).not.toContain('repeated_tool_failure_guard');
      expect(rumText).not.toContain(RUM_EXCLUDE);
    });

    it('keeps ordinary telemetry', () => {
      const names = (kind: Item['kind']): string[] => rum.filter((i) => i.kind === kind).map((i) => i.name);
      expect(names('log').sort()).toEqual(
        ['loop_detected', 'qwen-code.api_request', 'qwen-code.api_response', 'qwen-code.tool_call', 'qwen-code.user_prompt'].sort(),
      );
      expect(rum.find((i) => i.name === 'loop_detected')?.attributes['loop_type']).toBe('consecutive_identical_tool_calls');
      expect(names('span').sort()).toEqual(['qwen-code.interaction', 'qwen-code.tool', 'qwen-code.tool.execution']);
      expect(names('dataPoint').sort()).toEqual(['qwen-code.tool.call.count', 'qwen-code.tool.execution.count']);
      expect(rum.find((i) => i.name === 'qwen-code.tool_call')?.attributes).toMatchObject({
        function_name: 'read_file',
        status: 'error',
        execution_status: 'error',
        error_type: 'file_not_found',
        'error.type': 'file_not_found',
        prompt_id: 'e2e-session########1',
      });
      expect(rum.find((i) => i.name === 'qwen-code.tool')?.attributes).toMatchObject({
        'gen_ai.tool.name': 'read_file',
        'gen_ai.tool.description': 'Reads a file from the local filesystem.',
        'error.type': 'tool_error',
      });
    });

    it('has no sensitive attribute key, no status message and no raw secret text', () => {
      const keys = new Set(rum.flatMap((i) => [...Object.keys(i.attributes), ...Object.keys(i.resourceAttributes)]));
      expect(SENSITIVE_KEYS.filter((key) => keys.has(key))).toEqual([]);
      const spans = rum.filter((i) => i.kind === 'span');
      expect(spans.map((s) => s.statusCode)).toEqual([2, 2, 2]);
      expect(spans.filter((s) => s.statusMessage !== undefined && s.statusMessage !== '')).toEqual([]);
      expect(rumText).not.toContain(SECRET_MARKER);
    });
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

/** Every dist module and bare package an entry reaches through static and dynamic imports. */
function reach(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const stack = [resolve(DIST, entry)];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s*|import\s*\(\s*|import\s+)'([^']+)'/g)) {
      const spec = m[1] as string;
      if (spec.startsWith('.')) stack.push(resolve(dirname(file), spec));
      else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string));
    }
  }
  return { files: new Set([...files].map((f) => relative(DIST, f))), packages };
}

describe('package entries (dist, built by pretest)', () => {
  it('the root entry reaches no replay, serve, report, OTLP or CLI module', () => {
    expect(existsSync(join(DIST, 'index.js'))).toBe(true);
    const { files } = reach('index.js');
    const outOfProcess = [...files].filter((f) => /^(replay|serve|report|otlp|cli)\//.test(f) || /^(replay|serve)\.js$/.test(f));
    expect(outOfProcess).toEqual([]);
  });

  it('the root entry needs only the OpenTelemetry API and core, plus node:crypto and node:module', () => {
    const { packages } = reach('index.js');
    expect([...packages].sort()).toEqual(['@opentelemetry/api', '@opentelemetry/core', 'node:crypto', 'node:module']);
  });

  it('the root entry loads @opentelemetry/api-logs only lazily, from one place (the 2.x line\'s logs API)', () => {
    const { files } = reach('index.js');
    const mentions = [...files].filter((f) => readFileSync(join(DIST, f), 'utf8').includes('@opentelemetry/api-logs'));
    expect(mentions).toEqual(['otel/global-logs.js']);
    const text = readFileSync(join(DIST, 'otel/global-logs.js'), 'utf8');
    expect(text).toMatch(/createRequire\(import\.meta\.url\)\('@opentelemetry\/api-logs'\)/);
  });

  it('./core reaches only the core folder and imports no package', () => {
    const { files, packages } = reach('core.js');
    expect([...files].filter((f) => f !== 'core.js' && !f.startsWith('core/'))).toEqual([]);
    expect([...packages]).toEqual([]);
  });

  it('the replay command loads no protobuf decoder and no serve module (it reads JSON; the decoders are 0.5 MB)', () => {
    const { files, packages } = reach('cli/commands/replay.js');
    expect([...files].filter((f) => /^otlp\/(otlp-protobuf|generated\/)/.test(f) || f.startsWith('serve/'))).toEqual([]);
    expect(packages.has('protobufjs')).toBe(false);
  });

  it.each(['ai-sdk.js', 'pi.js'])('%s (an in-process host adapter) reaches no replay, serve, OTLP or CLI module', (entry) => {
    const { files, packages } = reach(entry);
    expect([...files].filter((f) => /^(replay|serve|otlp|cli)\//.test(f) || /^(replay|serve)\.js$/.test(f))).toEqual([]);
    expect(files.has('otel/repeated-tool-failure-guard.js')).toBe(true);
    expect(packages.has('protobufjs')).toBe(false);
  });

  it('./claude-agent-sdk reaches no replay, OTLP decoding, CLI or HTTP server module; serve only for the optional exporters its telemetry loads lazily', () => {
    const { files, packages } = reach('claude-agent-sdk.js');
    expect([...files].filter((f) => /^(replay|otlp|cli)\//.test(f) || /^(replay|serve)\.js$/.test(f) || f === 'hooks/hook-http-server.js')).toEqual([]);
    expect([...files].filter((f) => f.startsWith('serve/'))).toEqual(['serve/otlp-http-exporters.js']);
    expect(files.has('hooks/hook-runtime.js')).toBe(true);
    expect(packages.has('protobufjs')).toBe(false);
  });

  it('./replay and ./serve are separate entries', () => {
    expect(reach('replay.js').files.has('replay/replay.js')).toBe(true);
    expect(reach('serve.js').files.has('serve/guard-server.js')).toBe(true);
  });
});

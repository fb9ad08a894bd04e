import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { INLINED_OPTIONAL_PEERS } from '../scripts/bundle-cli.mjs';

// `npm test` builds first (pretest): tsc into dist/, then scripts/bundle-cli.mjs into dist/bin/.
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const BIN = join(ROOT, PKG.bin['repeated-tool-failure-guard'] ?? 'missing-bin-entry');
const UNBUNDLED = join(ROOT, 'dist/cli/main.js');
const FIXTURE = join(ROOT, 'fixtures/qwen-code-0.24.4/acp-shadow-drain.outfile.json');
const TMP = mkdtempSync(join(tmpdir(), 'rtfg-cli-bundle-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], input = '', env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], timeout: 30_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/**
 * An `--import` module that registers a loader hook appending every module URL the process loads
 * (ES modules, imported CommonJS packages, `node:` builtins) to the file named by $LOAD_PROBE_FILE.
 */
const LOAD_PROBE = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(process.env.LOAD_PROBE_FILE, url + '\\n'); return next(url, context); }`,
  )}));`,
)}`;

/** Run the bin under the load probe; returns the run and the loaded module URLs. */
async function runProbed(args: readonly string[], input = ''): Promise<Run & { loaded: string[] }> {
  const file = join(TMP, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  const r = await run(process.execPath, ['--import', LOAD_PROBE, BIN, ...args], input, { LOAD_PROBE_FILE: file, RTFG_CLAUDE_CODE_OTLP_ENDPOINT: '' });
  const loaded = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];
  return { ...r, loaded };
}

/** Loaded files of the bundle that hold the generated OTLP protobuf decoders (serve's 0.5 MB). */
const decoderFiles = (loaded: readonly string[]) =>
  loaded.filter((u) => u.startsWith('file:') && readFileSync(fileURLToPath(u), 'utf8').includes('ExportTraceServiceRequest'));
const chunk = (loaded: readonly string[], name: string) => loaded.filter((u) => basename(u).startsWith(`${name}-`));

const HOOK_INPUT = JSON.stringify({
  session_id: 'session-1',
  transcript_path: '/home/u/.claude/projects/x/session-1.jsonl',
  cwd: '/home/u/work',
  prompt_id: 'prompt-1',
  permission_mode: 'bypassPermissions',
  hook_event_name: 'PostToolUseFailure',
  tool_name: 'Bash',
  tool_input: { command: 'git status', description: 'Inspect the repository' },
  tool_use_id: 't1',
  error: 'Exit code 128\nfatal: not a git repository',
  is_interrupt: false,
  duration_ms: 30,
});

describe('the bundled CLI (package.json bin)', () => {
  it('is a file under dist/bin/, executable, starting with the node shebang, beside a package.json of type module', () => {
    expect(BIN.startsWith(join(ROOT, 'dist/bin/'))).toBe(true);
    expect(existsSync(BIN)).toBe(true);
    expect(() => accessSync(BIN, constants.X_OK)).not.toThrow();
    expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(JSON.parse(readFileSync(join(ROOT, 'dist/bin/package.json'), 'utf8'))).toEqual({ type: 'module' });
  });

  it('run as a program (shebang, no `node` in front), --version prints package.json version', async () => {
    const r = await run(BIN, ['--version']);
    expect(r).toEqual({ code: 0, stdout: `${PKG.version}\n`, stderr: '' });
  });

  it('leaves every optional peer package (and protobufjs) a real import, so a missing one gets its install hint', () => {
    const optional = Object.entries(PKG.peerDependenciesMeta)
      .filter(([name, m]) => m.optional === true && !INLINED_OPTIONAL_PEERS.includes(name))
      .map(([name]) => name);
    optional.push('protobufjs/minimal.js');
    expect(optional.length).toBeGreaterThan(0);
    const dir = join(ROOT, 'dist/bin/chunks');
    const text = [BIN, ...readdirFiles(dir)].map((f) => readFileSync(f, 'utf8')).join('\n');
    // echarts is imported through a parameter (its specifier is a default value), the others by name.
    for (const name of optional.filter((n) => n !== 'echarts')) expect(text, name).toMatch(new RegExp(`(from |import\\()"${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"`));
    expect(text).toContain('specifier = "echarts"');
  });

  it('inlines @opentelemetry/api-logs, an optional peer the bundled 2.x sdk-logs imports (a 3.x project has none installed)', () => {
    expect(INLINED_OPTIONAL_PEERS).toEqual(['@opentelemetry/api-logs']);
    const text = [BIN, ...readdirFiles(join(ROOT, 'dist/bin/chunks'))].map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(text).not.toMatch(/(from |import\()"@opentelemetry\/api-logs"/);
  });

  it.each([
    {
      command: 'replay (the main job)',
      args: ['replay', FIXTURE, '--format', 'json'],
      input: '',
      code: 0,
      loads: ['replay'],
      skips: ['serve', 'claude-code-hook', 'otlp-grpc-receiver'],
      decoders: false,
      http: false,
      outside: [],
    },
    {
      command: 'claude-code-hook (every Claude Code tool call)',
      args: ['claude-code-hook', '--state-dir', join(TMP, 'hook-state'), '--mode', 'shadow'],
      input: HOOK_INPUT,
      code: 0,
      loads: ['claude-code-hook'],
      skips: ['serve', 'replay', 'otlp-grpc-receiver', 'hook-telemetry'],
      decoders: false,
      http: false,
      outside: [],
    },
    {
      // the control: the probe does see serve's receiver and decoders when serve runs
      command: 'serve (stops at its argument check, after loading)',
      args: ['serve', '--port', '0', '--export-endpoint', 'ftp://127.0.0.1:9'],
      input: '',
      code: 2,
      loads: ['serve'],
      skips: ['replay', 'claude-code-hook', 'otlp-grpc-receiver'],
      decoders: true,
      http: true,
      // the decoders the package ships for ./serve and ./replay, and the protobufjs they share
      outside: ['dist/otlp/generated/otlp-proto.js', 'node_modules/protobufjs/minimal.js'],
    },
  ])('$command loads its own chunk and no other command', async ({ args, input, code, loads, skips, decoders, http, outside }) => {
    const r = await runProbed(args, input);
    expect(r.code, r.stderr).toBe(code);
    expect(r.loaded[0]).toBe(`file://${BIN}`);
    for (const name of loads) expect(chunk(r.loaded, name), name).toHaveLength(1);
    for (const name of skips) expect(chunk(r.loaded, name), name).toEqual([]);
    expect(decoderFiles(r.loaded).length > 0).toBe(decoders);
    expect(r.loaded.includes('node:http')).toBe(http);
    // Everything else it runs is in the bundle: no other file, no package resolved from node_modules.
    const notBundled = r.loaded.filter((u) => !u.startsWith('node:') && !u.startsWith(`file://${join(ROOT, 'dist/bin/')}`));
    expect(notBundled.map((u) => relative(ROOT, fileURLToPath(u))).sort()).toEqual(outside);
  });

  it.each([
    { name: 'replay, text', args: ['replay', FIXTURE], input: '' },
    { name: 'replay --compare --format json', args: ['replay', '--compare', '--format', 'json', FIXTURE], input: '' },
    { name: 'replay of standard input', args: ['replay', '-'], input: readFileSync(FIXTURE, 'utf8') },
    { name: 'replay of a missing file (user error)', args: ['replay', join(TMP, 'missing.jsonl')], input: '' },
    { name: 'an unknown option (usage error)', args: ['replay', '--no-such-option', FIXTURE], input: '' },
    { name: '--help', args: ['--help'], input: '' },
    { name: 'serve --help', args: ['serve', '--help'], input: '' },
    { name: 'claude-code-hook --print-settings', args: ['claude-code-hook', '--print-settings', '--mode', 'enforce'], input: '' },
    { name: 'claude-code-hook on invalid input', args: ['claude-code-hook', '--state-dir', join(TMP, 'parity-state')], input: '{not json' },
  ])('$name: the same exit code, stdout and stderr as the unbundled tsc output', async ({ args, input }) => {
    const [bundled, unbundled] = await Promise.all([run(process.execPath, [BIN, ...args], input), run(process.execPath, [UNBUNDLED, ...args], input)]);
    expect(bundled.stdout.length + bundled.stderr.length).toBeGreaterThan(0);
    expect(bundled).toEqual(unbundled);
  });
});

function readdirFiles(dir: string): string[] {
  return readdirSync(dir).map((f) => join(dir, f));
}

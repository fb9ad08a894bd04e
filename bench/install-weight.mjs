#!/usr/bin/env node
/* global process, console */
// Install weight of the published package: `npm pack` this repository (prepack builds it), then
// `npm install` the tarball into an empty project, as a user would (npm installs the peers too),
// then measure node_modules and look for packages installed in more than one version.
//
//   node bench/install-weight.mjs          (prints a JSON summary)
//   bench/run.mjs --only W                 (the same, as a bench row with its goal)
//
// Needs the npm registry (or a warm npm cache).
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Bytes of every file under `dir` (apparent size; links not followed) and blocks on disk (`du`). */
function sizeOf(dir) {
  let apparent = 0;
  let files = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        apparent += lstatSync(p).size;
        files++;
      }
    }
  };
  walk(dir);
  let disk = Number.NaN;
  try {
    disk = Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) * 1024;
  } catch {
    // no du: apparent size only
  }
  return { apparent, disk, files };
}

/** name -> Set of versions, over the whole `npm ls --all --json` tree. */
function versionsOf(tree) {
  const out = new Map();
  const walk = (deps) => {
    for (const [name, node] of Object.entries(deps ?? {})) {
      if (node.version !== undefined) {
        let set = out.get(name);
        if (set === undefined) out.set(name, (set = new Set()));
        set.add(node.version);
      }
      walk(node.dependencies);
    }
  };
  walk(tree.dependencies);
  return out;
}

/**
 * The installed package works without its optional peers: every entry point imports, the CLI
 * replays a real capture, and `serve --export-endpoint` / `--grpc-port` stop with their install hints.
 * @returns {{ ok: boolean, problems: string[] }}
 */
function smokeTest(project, log) {
  log('smoke test of the installed package ...');
  const problems = [];
  const run = (args) => {
    try {
      return { code: 0, out: execFileSync(process.execPath, args, { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 }) };
    } catch (err) {
      return { code: err.status ?? 1, out: `${err.stdout ?? ''}${err.stderr ?? ''}` };
    }
  };
  const pkg = 'repeated-tool-failure-guard';
  const imports = run(['--input-type=module', '-e', `for (const e of ['', '/core', '/replay', '/serve']) await import('${pkg}' + e);`]);
  if (imports.code !== 0) problems.push(`import: ${imports.out.trim().split('\n')[0]}`);
  const cli = join(project, 'node_modules', pkg, 'dist/bin/repeated-tool-failure-guard.js');
  // the captures are the repository's (the package does not ship them)
  const replay = run([cli, 'replay', join(ROOT, 'fixtures/qwen-code-0.24.4/acp-enforce.outfile.json')]);
  if (replay.code !== 0) problems.push(`replay exited ${replay.code}: ${replay.out.trim().split('\n')[0]}`);
  const serve = run([cli, 'serve', '--port', '0', '--export-endpoint', 'http://127.0.0.1:9']);
  if (serve.code === 0 || !serve.out.includes('npm install @opentelemetry/exporter-logs-otlp-http')) problems.push(`serve --export-endpoint without the optional exporters: exit ${serve.code}, ${serve.out.trim().split('\n')[0]}`);
  const grpc = run([cli, 'serve', '--port', '0', '--grpc-port', '0']);
  if (grpc.code === 0 || !grpc.out.includes('npm install @grpc/grpc-js')) problems.push(`serve --grpc-port without @grpc/grpc-js: exit ${grpc.code}, ${grpc.out.trim().split('\n')[0]}`);
  return { ok: problems.length === 0, problems };
}

/**
 * Pack, install into an empty project, measure.
 * @returns {{ tarball: string, tarballBytes: number, apparentBytes: number, diskBytes: number, files: number,
 *   packages: number, otel: Record<string, string[]>, duplicates: Record<string, string[]>, otelDuplicates: string[] }}
 */
export function measureInstallWeight({ log = () => {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'rtfg-install-'));
  try {
    log('npm pack ...');
    const packed = JSON.parse(execFileSync(NPM, ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    const tarball = join(dir, packed[0].filename);
    const project = join(dir, 'project');
    execFileSync('mkdir', ['-p', project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'install-weight-probe', version: '1.0.0', private: true }));
    log('npm install <tarball> into an empty project ...');
    execFileSync(NPM, ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: project, stdio: ['ignore', 'ignore', 'inherit'] });
    const size = sizeOf(join(project, 'node_modules'));
    let tree;
    try {
      tree = JSON.parse(execFileSync(NPM, ['ls', '--all', '--json'], { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    } catch (err) {
      // npm ls exits 1 on problems (e.g. an invalid peer) but still prints the tree
      tree = JSON.parse(err.stdout);
    }
    const versions = versionsOf(tree);
    const smoke = smokeTest(project, log);
    const duplicates = {};
    const otel = {};
    for (const [name, set] of [...versions].sort(([a], [b]) => a.localeCompare(b))) {
      if (set.size > 1) duplicates[name] = [...set].sort();
      if (name.startsWith('@opentelemetry/')) otel[name] = [...set].sort();
    }
    return {
      tarball: packed[0].filename,
      tarballBytes: packed[0].size,
      apparentBytes: size.apparent,
      diskBytes: size.disk,
      files: size.files,
      packages: versions.size,
      otel,
      duplicates,
      otelDuplicates: Object.keys(duplicates).filter((n) => n.startsWith('@opentelemetry/')),
      smoke,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(measureInstallWeight({ log: (m) => console.error(m) }), null, 2));
}

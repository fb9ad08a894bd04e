#!/usr/bin/env node
/* global process, console */
// The `repeated-tool-failure-guard` command as one esbuild bundle (plus lazily loaded chunks), so
// a run does not resolve, stat and compile ~270 separate modules (the OpenTelemetry SDK's CommonJS
// files and our own tsc output) before it starts working.
//
//   node scripts/bundle-cli.mjs        bundle dist/cli/main.js (run tsc first) into dist/bin/
//
// `npm run build` runs it after tsc. Output:
//   dist/bin/repeated-tool-failure-guard.js   the entry (package.json "bin"), with its shebang, mode 0755
//   dist/bin/chunks/*.js                      code shared by the entry and the lazily imported commands
//   dist/bin/package.json                     {"type":"module"} so the .js files load as ES modules
//                                             wherever the directory is copied
//
// Code splitting keeps every `await import('./commands/x.js')` of src/cli/main.ts a separate chunk,
// so `replay` never loads `serve`'s HTTP/gRPC receiver and protobuf decoders, and
// `claude-code-hook` loads neither (test/cli-bundle.test.ts checks it).
import { build } from 'esbuild';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = join(ROOT, 'dist/cli/main.js');
const OUT_DIR = join(ROOT, 'dist/bin');
/** The bin's file name: the command's own name. */
export const BIN_NAME = 'repeated-tool-failure-guard';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/**
 * Optional peers inlined all the same: `@opentelemetry/api-logs` is optional for the package (the
 * OpenTelemetry JS 3.x line has its logs API in `@opentelemetry/api`), but the 2.x `sdk-logs` the
 * CLI bundles imports it, so a project on the 3.x line, which has none installed, must not need it.
 */
export const INLINED_OPTIONAL_PEERS = ['@opentelemetry/api-logs'];

/**
 * Packages left as real `import`s, resolved from node_modules at run time (each also with its
 * subpaths). Derived from package.json, so a new optional package is external without an edit here:
 *
 * - optional peers (`peerDependenciesMeta[name].optional`): echarts, @grpc/grpc-js and the OTLP/HTTP
 *   exporters. The CLI imports them lazily and, when one is missing, stops with an `npm install`
 *   hint (serve --report/--grpc-port/--export-endpoint, replay --report). Inlining the copy that is
 *   in our devDependencies would ship code the user did not choose to install and make that hint
 *   unreachable; echarts alone is ~10 MB and @grpc/grpc-js loads @grpc/proto-loader and its
 *   protobuf stack.
 * - optionalDependencies (none today): by definition they may be absent or native.
 * - protobufjs (with `long`), together with our generated OTLP decoders (see SHARED_FILES): only
 *   `serve` loads them, once per long-running process; both are installed anyway (a dependency, and
 *   dist/otlp/generated/ for the `./serve` and `./replay` entries), so inlining them would add
 *   0.5 MB to the install (W, bench/install-weight.mjs) to save one start-up.
 *
 * Inlined: the other `dependencies` (always installed, pure JavaScript: the OpenTelemetry core,
 * resources and sdk-metrics, commander) and the required peers (@opentelemetry/api, sdk-logs,
 * sdk-trace: npm installs them, pure JavaScript), in the versions of our devDependencies (the
 * OpenTelemetry JS 2.x line, which runs on Node 18.19+ to 24), so the CLI is the same program
 * whichever line the project it is installed in uses. Their many small files are what the bundle
 * saves. The CLI is its own process, so its inlined @opentelemetry/api is the only one
 * registering the API globals, except that an external exporter loads the installed API, which
 * shares those globals by their versioned Symbol.for key. The CLI hands every provider it makes
 * to the guard, so the guard's lazy `require('@opentelemetry/api-logs')` (the 2.x line's global
 * logs API, an optional peer, so external) finds nothing registered when it runs at all.
 */
export function externalPackages(manifest = pkg) {
  const optionalPeers = Object.entries(manifest.peerDependenciesMeta ?? {})
    .filter(([name, meta]) => meta?.optional === true && !INLINED_OPTIONAL_PEERS.includes(name))
    .map(([name]) => name);
  const names = [...new Set([...optionalPeers, ...Object.keys(manifest.optionalDependencies ?? {}), 'protobufjs'])].sort();
  return names.flatMap((name) => [name, `${name}/*`]);
}

/**
 * Our own tsc output that stays a file of its own, imported by the bundle from where the package
 * ships it: the generated OTLP protobuf decoders (0.45 MB; they import protobufjs, which is external
 * for the same reason, and must share its one copy: they check `instanceof Reader`).
 * Path relative to dist/.
 */
const SHARED_FILES = ['otlp/generated/otlp-proto.js'];
/** Every chunk lives in dist/bin/chunks/, two levels below dist/. */
const CHUNK_TO_DIST = '../../';

/** An esbuild plugin resolving SHARED_FILES to an external import of dist/<file> from a chunk. */
const sharedFiles = {
  name: 'shared-dist-files',
  setup(b) {
    b.onResolve({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith('.')) return undefined;
      const target = relative(join(ROOT, 'dist'), join(args.resolveDir, args.path)).split(sep).join('/');
      return SHARED_FILES.includes(target) ? { path: `${CHUNK_TO_DIST}${target}`, external: true } : undefined;
    });
  },
};

// Bundled CommonJS (the OpenTelemetry SDK, protobufjs, commander) calls `require('node:…')`; an ES
// module has no `require`, so every output file defines one. esbuild's CommonJS shim picks it up.
const BANNER = "import { createRequire as __bundleCreateRequire } from 'node:module';\nconst require = __bundleCreateRequire(import.meta.url);";

/**
 * The hooks' own entries (Claude Code, gemini-cli): what the printed settings run once per hook
 * event. Each output sits beside the bin, CommonJS (`.cjs` whatever dist/bin/package.json says),
 * so a start loads no ES module machinery.
 */
export const HOOK_ENTRIES = [
  { entry: 'dist/cli/claude-code-hook-main.js', bin: 'claude-code-hook.cjs' },
  { entry: 'dist/cli/gemini-cli-hook-main.js', bin: 'gemini-cli-hook.cjs' },
];
/** The Claude Code hook's output (kept for its tests). */
export const HOOK_BIN = 'claude-code-hook.cjs';
/** Loaded by the hook only when it exports telemetry: left as the tsc output the package ships. */
const HOOK_LAZY_FILES = ['hooks/hook-telemetry.js'];

/**
 * Bundle a hook entry into one file with no chunks: one module to read and compile per event
 * (bench H1). The telemetry export (the OpenTelemetry SDK) stays an import of the shipped tsc
 * output, loaded only when an endpoint is set and there is a decision to export.
 */
async function bundleHookEntry({ entry, bin }) {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, entry)],
    outfile: join(OUT_DIR, bin),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node18.19',
    mainFields: ['module', 'main'],
    external: externalPackages(),
    plugins: [
      {
        name: 'hook-lazy-files',
        setup(b) {
          b.onResolve({ filter: /\.js$/ }, (args) => {
            if (!args.path.startsWith('.')) return undefined;
            const target = relative(join(ROOT, 'dist'), join(args.resolveDir, args.path)).split(sep).join('/');
            return HOOK_LAZY_FILES.includes(target) ? { path: `../${target}`, external: true } : undefined;
          });
        },
      },
    ],
    minifySyntax: true,
    minifyIdentifiers: false,
    minifyWhitespace: false,
    keepNames: true,
    legalComments: 'none',
    sourcemap: false,
    logLevel: 'silent',
  });
  if (result.warnings.length > 0) throw new Error(`bundle-cli: ${result.warnings.length} esbuild warning(s) in ${entry}: ${result.warnings.map((w) => w.text).join('; ')}`);
  const file = join(OUT_DIR, bin);
  if (!readFileSync(file, 'utf8').startsWith('#!/usr/bin/env node\n')) throw new Error(`bundle-cli: ${relative(ROOT, file)} does not start with the shebang`);
  for (const f of HOOK_LAZY_FILES) if (!existsSync(join(ROOT, 'dist', f))) throw new Error(`bundle-cli: the hook entry imports dist/${f}, which is missing`);
  chmodSync(file, 0o755);
}

async function main() {
  if (!existsSync(ENTRY)) throw new Error(`bundle-cli: ${relative(ROOT, ENTRY)} is missing; run tsc first (npm run build)`);
  // Chunk names carry content hashes: start empty so no chunk of an earlier build lingers.
  rmSync(OUT_DIR, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT, // metafile paths are relative to it
    entryPoints: { [BIN_NAME]: ENTRY },
    outdir: OUT_DIR,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    // The oldest Node the package supports (package.json engines: ^18.19.0 || >=20.6.0).
    target: 'node18.19',
    // Prefer a package's ES module build ("module"): esbuild can drop what we do not use from it
    // (the CommonJS build of @opentelemetry/semantic-conventions alone is 190 kB of constants).
    mainFields: ['module', 'main'],
    external: externalPackages(),
    plugins: [sharedFiles],
    banner: { js: BANNER },
    // Readable stack traces: identifiers keep their names (no mangling), `.name` survives the
    // renames esbuild makes when two modules' top-level names collide, and the code stays on
    // separate lines. Syntax minification only drops dead branches and folds constants.
    minifySyntax: true,
    minifyIdentifiers: false,
    minifyWhitespace: false,
    keepNames: true,
    legalComments: 'none',
    sourcemap: false,
    metafile: true,
    logLevel: 'silent',
  });
  // A warning here usually means a changed meaning: e.g. a side-effect-only `import './x.js'`
  // dropped because package.json says "sideEffects": false, or a `require` esbuild cannot follow.
  if (result.warnings.length > 0) {
    for (const w of result.warnings) console.error(`bundle-cli: warning: ${w.text}${w.location ? ` (${w.location.file}:${w.location.line})` : ''}`);
    throw new Error(`bundle-cli: ${result.warnings.length} esbuild warning(s); the bundle may not behave like dist/cli/main.js`);
  }
  // SHARED_FILES are imported by a relative path that is right only from dist/bin/chunks/.
  for (const [out, o] of Object.entries(result.metafile.outputs)) {
    const shared = o.imports.filter((i) => i.external && i.path.startsWith(CHUNK_TO_DIST));
    if (shared.length > 0 && dirname(join(ROOT, out)) !== join(OUT_DIR, 'chunks')) throw new Error(`bundle-cli: ${out} imports ${shared[0].path}, which resolves only from dist/bin/chunks/`);
    for (const i of shared) if (!existsSync(join(OUT_DIR, 'chunks', i.path))) throw new Error(`bundle-cli: ${out} imports ${i.path}, which is missing`);
  }
  for (const hook of HOOK_ENTRIES) await bundleHookEntry(hook);
  const entry = join(OUT_DIR, `${BIN_NAME}.js`);
  const text = readFileSync(entry, 'utf8');
  // esbuild keeps the entry's `#!` line above the banner; the bin needs it first.
  if (!text.startsWith('#!/usr/bin/env node\n')) throw new Error(`bundle-cli: ${relative(ROOT, entry)} does not start with the shebang`);
  chmodSync(entry, 0o755);
  writeFileSync(join(OUT_DIR, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
  const outputs = Object.entries(result.metafile.outputs);
  const bytes = outputs.reduce((n, [, o]) => n + o.bytes, 0);
  console.error(`bundle-cli: ${relative(ROOT, entry)} and ${outputs.length - 1} chunk(s), ${(bytes / 1024).toFixed(0)} KiB`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  }
}

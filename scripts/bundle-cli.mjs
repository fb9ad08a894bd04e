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
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = join(ROOT, 'dist/cli/main.js');
const OUT_DIR = join(ROOT, 'dist/bin');
/** The bin's file name: the command's own name. */
export const BIN_NAME = 'repeated-tool-failure-guard';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

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
 *
 * Inlined: `dependencies` (always installed, pure JavaScript: the OpenTelemetry core, resources and
 * sdk-metrics, commander, protobufjs) and the required peers (@opentelemetry/api, api-logs,
 * sdk-logs, sdk-trace-base: npm installs them, pure JavaScript). Their many small CommonJS files
 * are what the bundle saves. The CLI is its own process, so its inlined @opentelemetry/api is the
 * only one registering the API globals, except that an external exporter loads the installed API,
 * which shares those globals by their versioned Symbol.for key (the peer range pins 1.9.x).
 */
export function externalPackages(manifest = pkg) {
  const optionalPeers = Object.entries(manifest.peerDependenciesMeta ?? {})
    .filter(([, meta]) => meta?.optional === true)
    .map(([name]) => name);
  const names = [...new Set([...optionalPeers, ...Object.keys(manifest.optionalDependencies ?? {})])].sort();
  return names.flatMap((name) => [name, `${name}/*`]);
}

// Bundled CommonJS (the OpenTelemetry SDK, protobufjs, commander) calls `require('node:…')`; an ES
// module has no `require`, so every output file defines one. esbuild's CommonJS shim picks it up.
const BANNER = "import { createRequire as __bundleCreateRequire } from 'node:module';\nconst require = __bundleCreateRequire(import.meta.url);";

async function main() {
  if (!existsSync(ENTRY)) throw new Error(`bundle-cli: ${relative(ROOT, ENTRY)} is missing; run tsc first (npm run build)`);
  // Chunk names carry content hashes: start empty so no chunk of an earlier build lingers.
  rmSync(OUT_DIR, { recursive: true, force: true });
  const result = await build({
    entryPoints: { [BIN_NAME]: ENTRY },
    outdir: OUT_DIR,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    // The oldest Node the package supports (package.json engines: ^18.19.0 || >=20.6.0).
    target: 'node18.19',
    external: externalPackages(),
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

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The tests again, on the OpenTelemetry JS 3.x line (api 1.10, sdk-trace/sdk-logs/sdk-metrics 3.1,
// sdk-node 0.301), run by scripts/test-otel3.sh under Node 24. The 3.x packages are installed in
// .ci/otel3/node_modules (its own lockfile); each `@opentelemetry/<name>` found there replaces the
// 2.x copy of the devDependencies for the code vitest loads (src, tests, and through them the SDK,
// which resolves its own dependencies next to itself). The CLI the tests spawn is dist/bin as built
// and shipped (its SDK inlined, see scripts/bundle-cli.mjs), run by the same Node.
const ROOT = fileURLToPath(new URL('./', import.meta.url));
const PEERS = `${ROOT}.ci/otel3/node_modules/@opentelemetry/`;
// semantic-conventions is one package on both lines and is imported by subpath (`/incubating`).
const names = existsSync(PEERS) ? readdirSync(PEERS).filter((n) => n !== 'semantic-conventions') : [];
if (names.length === 0) throw new Error('vitest.otel3.config.ts: run `npm ci --prefix .ci/otel3` first (scripts/test-otel3.sh does)');

// The in-process and CLI subset: every test file that loads OpenTelemetry, the guard's in-process
// or out-of-process code, the built package, or a child process. The rest test the pure reducers
// and engine (no OpenTelemetry, no Node API beyond the language): they run under Node 20 only.
const REACHES_OTEL_OR_CLI = /@opentelemetry\/|helpers\/(setup|generators|recorded)|dist\/|spawn|execFile|src\/(otel|replay|serve|cli|report)\//;
const include = readdirSync(`${ROOT}test`, { recursive: true, encoding: 'utf8' })
  .map((f) => `test/${f}`)
  .filter((f) => f.endsWith('.test.ts') && !/^test\/(e2e|browser|scale-out)\//.test(f))
  .filter((f) => REACHES_OTEL_OR_CLI.test(readFileSync(`${ROOT}${f}`, 'utf8')));

// The 3.x gRPC exporters depend on their own copy of @grpc/grpc-js; the tests' credentials and the
// receiver must come from that same copy (grpc-js checks credentials with instanceof).
const GRPC = `${ROOT}.ci/otel3/node_modules/@grpc/grpc-js`;
const grpcAlias = existsSync(GRPC) ? [{ find: /^@grpc\/grpc-js$/, replacement: GRPC }] : [];

export default defineConfig({
  ...base,
  resolve: {
    alias: [...names.map((n) => ({ find: new RegExp(`^@opentelemetry/${n}$`), replacement: `${PEERS}${n}` })), ...grpcAlias],
  },
  // The type tests check our sources against the devDependencies' types; the Node 20 run does that.
  test: { ...base.test, include, typecheck: { enabled: false } },
});

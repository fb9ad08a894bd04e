/* global URL */
// `node --import ./scripts/otel3-resolve.mjs …` (Node 22.15+): every `@opentelemetry/<name>` that
// .ci/otel3 installs (the OpenTelemetry JS 3.x line, `npm ci --prefix .ci/otel3`) is resolved
// from there instead of the repository's node_modules (the 2.x devDependencies), for imports and
// requires made outside .ci/otel3; the 3.x packages resolve their own dependencies as installed.
// The bench's 3.x rows use it (scripts/bench-otel3.sh); vitest.otel3.config.ts does the same for
// the tests with aliases. semantic-conventions is one package on both lines and stays as it is.
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';

const OTEL3 = new URL('../.ci/otel3/', import.meta.url);
const PARENT = new URL('package.json', OTEL3).href;
if (!existsSync(new URL('node_modules/@opentelemetry/api/package.json', OTEL3))) {
  throw new Error('scripts/otel3-resolve.mjs: run `npm ci --prefix .ci/otel3` first');
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    const m = /^@opentelemetry\/([^/]+)/.exec(specifier);
    if (
      m !== null &&
      m[1] !== 'semantic-conventions' &&
      !(context.parentURL ?? '').startsWith(OTEL3.href) &&
      existsSync(new URL(`node_modules/@opentelemetry/${m[1]}/package.json`, OTEL3))
    ) {
      return nextResolve(specifier, { ...context, parentURL: PARENT });
    }
    return nextResolve(specifier, context);
  },
});

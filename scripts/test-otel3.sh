#!/usr/bin/env bash
# The in-process and CLI tests under Node 24 against the OpenTelemetry JS 3.x line (api 1.10,
# sdk-trace/sdk-logs/sdk-metrics 3.1, sdk-node 0.301), besides `npm test` (Node 20, the 2.x line of
# the devDependencies). Installs, for this run only, Node 24 (scripts/install-node.sh, into
# .cache/node) and the 3.x packages (.ci/otel3, its own lockfile, into .ci/otel3/node_modules);
# vitest.otel3.config.ts picks the test files and points `@opentelemetry/*` at the 3.x copies.
#
#   bash scripts/test-otel3.sh            (npm run test:otel3)
set -euo pipefail
cd "$(dirname "$0")/.."

node24="$(bash scripts/install-node.sh 24 | tail -n 1)"
export PATH="$(dirname "$node24"):$PATH"
echo "== node $(node --version), OpenTelemetry JS 3.x peers from .ci/otel3/package-lock.json" >&2
npm ci --prefix .ci/otel3 --no-audit --no-fund --loglevel=error
npm run build --silent
npx vitest run --config vitest.otel3.config.ts

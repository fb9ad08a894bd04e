#!/usr/bin/env bash
# Installs Debian's `chromium` for the report's browser test (npm run test:report), and only that.
# Does nothing when a Chromium is already there (CHROMIUM_PATH, or `chromium` on PATH).
# Prints the executable's path on its last line.
set -euo pipefail

if [[ -n "${CHROMIUM_PATH:-}" && -x "${CHROMIUM_PATH}" ]]; then
  echo "${CHROMIUM_PATH}"
  exit 0
fi
if command -v chromium >/dev/null 2>&1; then
  command -v chromium
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: no chromium and no apt-get; install Chromium and set CHROMIUM_PATH" >&2
  exit 1
fi
SUDO=""
if [[ "$(id -u)" != "0" ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-chromium: apt-get needs root (no sudo); install chromium and set CHROMIUM_PATH" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
command -v chromium

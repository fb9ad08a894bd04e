#!/usr/bin/env bash
# Installs the pinned Python frameworks of the genai conformance run into project-local virtual
# environments (gitignored): requirements.txt into conformance/genai/.venv, and
# requirements-adk.txt (Google ADK 2.13.0, which needs opentelemetry-sdk<=1.44) into
# conformance/genai/.venv-adk. Idempotent: an environment already built from the same pin list is
# kept. pip keeps its wheel cache in ~/.cache/pip (PIP_CACHE_DIR moves it): with a warm cache a
# rebuild unpacks instead of downloading.
#
#   bash conformance/genai/install.sh        (npm run conformance:genai:install)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "genai conformance: $python not found; install Python 3.10 or later" >&2
  exit 1
fi
if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "genai conformance: $("$python" --version 2>&1) is too old; pydantic-ai and Strands need Python 3.10 or later" >&2
  exit 1
fi

# Debian's python3 ships venv (and ensurepip) separately: bring it in when it is missing and we may.
probe="$(mktemp -d)"
if ! "$python" -m venv "$probe/v" >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    minor="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python${minor}-venv" || \
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  else
    rm -rf "$probe"
    echo "genai conformance: '$python -m venv' does not work; install python3-venv" >&2
    exit 1
  fi
fi
rm -rf "$probe"

# build VENV REQUIREMENTS: (re)creates VENV from the pin list unless it was built from the same one.
build() {
  local venv="$1" requirements="$2"
  local stamp="$venv/.requirements.sha256"
  local want
  want="$(sha256sum "$requirements" | cut -d' ' -f1)"
  if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "genai conformance: $venv is up to date"
    return 0
  fi
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$requirements"
  "$venv/bin/python" -m pip check
  echo "$want" > "$stamp"
  echo "genai conformance: installed $(basename "$requirements") into $venv"
}

build "$here/.venv" "$here/requirements.txt"
build "$here/.venv-adk" "$here/requirements-adk.txt"

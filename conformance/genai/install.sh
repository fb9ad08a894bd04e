#!/usr/bin/env bash
# Installs the pinned Python frameworks of the genai conformance run (requirements.txt) into the
# project-local virtual environment conformance/genai/.venv (gitignored). Idempotent: an
# environment already built from the same requirements.txt is kept.
#
#   bash conformance/genai/install.sh        (npm run conformance:genai:install)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
stamp="$venv/.requirements.sha256"
python="${PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "genai conformance: $python not found; install Python 3.10 or later" >&2
  exit 1
fi
if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "genai conformance: $("$python" --version 2>&1) is too old; pydantic-ai and Strands need Python 3.10 or later" >&2
  exit 1
fi

want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "genai conformance: $venv is up to date"
  exit 0
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

rm -rf "$venv"
"$python" -m venv "$venv"
# pip keeps its wheel cache in ~/.cache/pip (PIP_CACHE_DIR to move it): a warm cache makes a
# rebuild take seconds of unpacking instead of downloads.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$here/requirements.txt"
"$venv/bin/python" -m pip check
echo "$want" > "$stamp"
echo "genai conformance: installed $("$venv/bin/python" -m pip show pydantic-ai-slim strands-agents smolagents openai-agents 2>/dev/null | awk '/^(Name|Version):/{printf "%s ", $2}')into $venv"

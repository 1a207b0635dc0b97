#!/usr/bin/env bash
# Installs Schemathesis from PyPI in a virtual environment under $SVC_CACHE, for the API fuzzing suite
# (tests/integration/api-fuzz.test.ts). Prints the path of its `st` command on stdout. Pinned; pip's cache under
# $SVC_CACHE; a no-op once the pinned version is installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
pin=schemathesis==4.32.5
venv="$SVC_CACHE/schemathesis-venv"
stamp="$venv/.svc-pins"

if [ -x "$venv/bin/st" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pin" ]; then
  echo "$venv/bin/st"
  exit 0
fi

mkdir -p "$SVC_CACHE"
# Two runs installing at once must not share a half-built venv: one waits for the other.
exec 9>"$SVC_CACHE/schemathesis-venv.lock"
flock -w 900 9
if [ -x "$venv/bin/st" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pin" ]; then
  echo "$venv/bin/st"
  exit 0
fi

python=python3
if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  apt_install python3 python3-venv
  python=/usr/bin/python3
fi
rm -rf "$venv"
log "creating $venv with $($python --version 2>&1)"
"$python" -m venv "$venv"
log "pip install $pin (first run only)"
PIP_CACHE_DIR="$SVC_CACHE/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet "$pin" >&2
"$venv/bin/st" --version >&2
echo "$pin" >"$stamp"
echo "$venv/bin/st"

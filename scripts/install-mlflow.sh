#!/usr/bin/env bash
# Installs the official MLflow 3.x from PyPI in a virtual environment under $SVC_CACHE, for the tracker's conformance
# and concurrency suites (the client) and its benchmark (the reference `mlflow server`). Prints the venv's python on
# stdout. Pinned versions; pip's cache under $SVC_CACHE; a no-op once the pinned set is installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
# Full mlflow (not mlflow-skinny): the benchmark runs its server, which needs sqlalchemy, alembic and the UI.
pins=(mlflow==3.17.2 scikit-learn==1.9.1 boto3==1.44.5 psycopg2-binary==2.9.13)
venv="$SVC_CACHE/mlflow-venv"
stamp="$venv/.svc-pins"
wanted="$(printf '%s\n' "${pins[@]}")"

if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
  echo "$venv/bin/python"
  exit 0
fi

mkdir -p "$SVC_CACHE"
# Two runs installing at once must not share a half-built venv: one waits for the other.
exec 9>"$SVC_CACHE/mlflow-venv.lock"
flock -w 900 9
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
  echo "$venv/bin/python"
  exit 0
fi

python=python3
if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  # Debian splits venv and ensurepip out of python3.
  apt_install python3 python3-venv
  python=/usr/bin/python3
fi
rm -rf "$venv"
log "creating $venv with $($python --version 2>&1)"
"$python" -m venv "$venv"
log "pip install ${pins[*]} (first run only, about a minute)"
PIP_CACHE_DIR="$SVC_CACHE/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$venv/bin/pip" install --quiet --only-binary=:all: "${pins[@]}" >&2
"$venv/bin/python" -c 'import mlflow, sklearn, boto3, psycopg2; print("mlflow", mlflow.__version__)' >&2
echo "$wanted" >"$stamp"
echo "$venv/bin/python"

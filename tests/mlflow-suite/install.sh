#!/usr/bin/env bash
# A virtual environment for MLflow's own REST test files: the MLflow client and server svc's other suites pin
# (scripts/install-mlflow.sh), pytest, and what MLflow's tests/conftest.py imports. Kept apart from the shared
# client venv so that one stays exactly its pins. Prints the venv's python on stdout; a no-op once installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../../scripts/env.sh"
# pytest-asyncio runs the files' `@pytest.mark.asyncio` tests (the OTLP span export ones); without it they fail on
# every server, MLflow's included. 1.5.0 requires pytest>=8.4. tests/tracing/test_otel_loading.py exports its spans
# with OpenTelemetry's OTLP/HTTP exporter, at the version of the SDK that MLflow 3.17.2 brings.
pins=(mlflow==3.17.2 pytest==8.4.2 pytest-asyncio==1.5.0 pytest-timeout==2.4.0 psutil==7.1.3
  opentelemetry-exporter-otlp-proto-http==1.45.2)
venv="$SVC_CACHE/mlflow-suite-venv"
stamp="$venv/.svc-pins"
wanted="$(printf '%s\n' "${pins[@]}")"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
  echo "$venv/bin/python"
  exit 0
fi
exec 9>"$SVC_CACHE/mlflow-suite-venv.lock"
flock -w 900 9
rm -rf "$venv"
log "creating $venv"
python3 -m venv "$venv"
PIP_CACHE_DIR="$SVC_CACHE/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet "${pins[@]}" >&2
echo "$wanted" >"$stamp"
echo "$venv/bin/python"

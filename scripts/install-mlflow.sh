#!/usr/bin/env bash
# Installs the official MLflow 3.x from PyPI in a virtual environment under $SVC_CACHE, for the tracker's conformance
# and concurrency suites (the client) and its benchmark (the reference `mlflow server`). Prints the venv's python on
# stdout. Pinned versions; a no-op once the pinned set is installed (python_venv in env.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
# Full mlflow (not mlflow-skinny): the benchmark runs its server, which needs sqlalchemy, alembic and the UI.
# Wheels only (pip reads PIP_ONLY_BINARY): nothing is compiled here. XGBoost and LightGBM for the conformance
# suite's autolog checks: xgboost-cpu is the XGBoost project's CPU-only wheel (5.6 MB; the `xgboost` wheel is 132 MB
# and pulls NVIDIA's NCCL), the same `xgboost` module. PyTorch is left out: PyPI has only its CUDA build for Linux
# (docs/tracker-autologging.md). The OTLP/HTTP exporter (at the release of the opentelemetry-sdk mlflow brings) is
# for the tracing checks: an OpenTelemetry SDK exporting spans to /v1/traces. openai at the newest release mlflow
# 3.17.2 autologs (its ml_package_versions.py: 2.2.0 to 2.47.0), for mlflow.openai.autolog against the scripted gateway.
PIP_ONLY_BINARY=:all: python_venv mlflow-venv mlflow==3.17.2 scikit-learn==1.9.1 boto3==1.44.5 psycopg2-binary==2.9.13 \
  xgboost-cpu==3.2.0 lightgbm==4.7.0 opentelemetry-exporter-otlp-proto-http==1.45.2 openai==2.47.0
echo "$venv/bin/python"

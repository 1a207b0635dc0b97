#!/usr/bin/env bash
# Installs mlflow-go-backend (PyPI: MLflow's tracking server with the hot endpoints in Go, the rest proxied to a
# Python `mlflow server` it starts) in its own virtual environment under $SVC_CACHE, with the MLflow it was built
# against, for the tracker's benchmark (its third server). Prints the venv's `mlflow-go` on stdout. Pinned
# versions; a no-op once installed (python_venv in env.sh).
#
# Why 0.2.0 with MLflow 2.20, not the last release: 0.2.2 (May 2025, built from MLflow's master just before 3.0;
# MLflow 3.0.1 with it) answers every log-batch or log-metric with a metric 500 on Postgres: its Go store copies
# each run metric into MLflow 3's logged_model_metrics with an empty model_id, which that table's foreign key
# refuses (SQLite, whose foreign keys are off, takes it). 0.2.0 (January 2025) predates logged models and was
# built between MLflow 2.20.0 and 2.20.1: MLflow 2.20's last patch release here.
#
# Both wheels carry the Go server prebuilt for linux x86_64 (a cgo shared library loaded through cffi), but under
# the name libmlflow-go-backend.dylib, while their loader asks for libmlflow-go-backend.so on Linux and, not finding
# it, tries to build it from Go sources the wheel does not have. The library is an ELF x86-64 object: go-lib/
# holds it under the name the loader asks for, and start-mlflow.sh points MLFLOW_GO_LIBRARY_PATH there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
[ "$(uname -m)" = x86_64 ] || { log "mlflow-go-backend: only its linux x86_64 wheel is set up here, not $(uname -m)"; exit 1; }
# Wheels only (pip reads PIP_ONLY_BINARY): nothing is compiled here. SQLAlchemy 2.0: MLflow 2.20 allows <3 but
# imports a pool class that 2.1 removed (its server then fails at start).
PIP_ONLY_BINARY=:all: python_venv mlflow-go-venv mlflow-go-backend==0.2.0 mlflow==2.20.4 sqlalchemy==2.0.58 \
  cffi==2.0.0 psycopg2-binary==2.9.13 boto3==1.44.5
package="$("$venv/bin/python" -c 'import mlflow_go_backend, os; print(os.path.dirname(mlflow_go_backend.__file__))')"
lib="$venv/go-lib"
if [ ! -e "$lib/libmlflow-go-backend.so" ]; then
  mkdir -p "$lib"
  ln -sf "$package/libmlflow-go-backend.dylib" "$lib/libmlflow-go-backend.so"
  ln -sf "$package/libmlflow-go-backend.h" "$lib/libmlflow-go-backend.h"
fi
echo "$venv/bin/mlflow-go"

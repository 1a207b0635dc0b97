#!/usr/bin/env bash
# Stops the server start-mlflow-go.sh started on the given port (default 15000); see stop-mlflow.sh.
SVC_MLFLOW_FLAVOUR=go exec bash "$(dirname "$0")/stop-mlflow.sh" "$@"

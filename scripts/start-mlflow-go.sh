#!/usr/bin/env bash
# Starts mlflow-go-backend's server (scripts/install-mlflow-go.sh) on loopback, the tracker benchmark's third server:
# bash scripts/start-mlflow-go.sh [port]   (default 15000). The same as start-mlflow.sh, which see.
SVC_MLFLOW_FLAVOUR=go exec bash "$(dirname "$0")/start-mlflow.sh" "$@"

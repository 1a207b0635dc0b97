#!/usr/bin/env bash
# Stops the MLflow server started by start-mlflow.sh on the given port (default 15000), or with
# SVC_MLFLOW_FLAVOUR=go (stop-mlflow-go.sh) the mlflow-go server: every process group of the session its recorded
# pid leads (MLflow forks workers; mlflow-go starts its Python server in a group of its own).
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-15000}"
name=mlflow
[ "${SVC_MLFLOW_FLAVOUR:-python}" = go ] && name=mlflow-go
pidfile="$SVC_RUN/$name-$port/$name.pid"
[ -f "$pidfile" ] || exit 0
pid="$(cat "$pidfile")"
groups() { ps -o pgid= -s "$pid" 2>/dev/null | sort -u; }
# By session, not by the pid alone: a worker or the Python server may outlive the process that started it.
for g in $(groups); do kill -- "-$g" 2>/dev/null || true; done
for _ in $(seq 1 40); do [ -n "$(groups)" ] || break; sleep 0.25; done
for g in $(groups); do kill -9 -- "-$g" 2>/dev/null || true; done
rm -f "$pidfile"
log "$name on port $port stopped"

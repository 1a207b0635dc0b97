#!/usr/bin/env bash
# Stops the MLflow server started by start-mlflow.sh on the given port (default 15000): its process group, by the
# pid it recorded (the server forks workers).
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-15000}"
pidfile="$SVC_RUN/mlflow-$port/mlflow.pid"
[ -f "$pidfile" ] || exit 0
pid="$(cat "$pidfile")"
if kill -0 "$pid" 2>/dev/null; then
  kill -- "-$pid" 2>/dev/null || kill "$pid"
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && kill -9 -- "-$pid" 2>/dev/null
fi
rm -f "$pidfile"
log "mlflow on port $port stopped"

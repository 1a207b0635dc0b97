#!/usr/bin/env bash
# Stops the MinIO started by start-s3.sh on the given port (default 19000), by the pid it recorded.
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-19000}"
pidfile="$SVC_RUN/s3-$port/minio.pid"
[ -f "$pidfile" ] || exit 0
pid="$(cat "$pidfile")"
if kill -0 "$pid" 2>/dev/null; then
  kill "$pid"
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
fi
rm -f "$pidfile"
log "minio on port $port stopped"

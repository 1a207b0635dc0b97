#!/usr/bin/env bash
# Stops the OpenSearch started by start-opensearch.sh: `scripts/stop-opensearch.sh [port]`.
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-${SVC_IT_OPENSEARCH_PORT:-19200}}"
pidfile="$(cat "$SVC_RUN/opensearch-$port/node-dir" 2>/dev/null)/opensearch.pid"
[ -f "$pidfile" ] || exit 0
pid="$(cat "$pidfile")"
kill "$pid" 2>/dev/null || exit 0
for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.5; done
kill -9 "$pid" 2>/dev/null || true

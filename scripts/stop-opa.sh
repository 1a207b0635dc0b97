#!/usr/bin/env bash
# Stops the OPA server started by start-opa.sh.
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-${SVC_IT_OPA_PORT:-18181}}"
pid_file="$SVC_RUN/opa-$port/opa.pid"
[ -f "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
rm -f "$pid_file"

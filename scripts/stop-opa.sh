#!/usr/bin/env bash
# Stops the OPA server that start-opa.sh started on the port (argument, else SVC_IT_OPA_PORT, else 18181).
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-${SVC_IT_OPA_PORT:-18181}}"
dir="$SVC_RUN/opa-$port"
pid="$(cat "$dir/opa.pid" 2>/dev/null || true)"
# Only the process recorded there, and only while it still is an opa (a pid can be reused).
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '^opa run '; then
  kill "$pid"
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
fi
rm -f "$dir/opa.pid" "$dir/fingerprint"

#!/usr/bin/env bash
# Stops the Keycloak that start-keycloak.sh started on the port (argument, else SVC_IT_KEYCLOAK_PORT, else 18080).
# Its database stays, so the next start is quick (about 20 s).
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-${SVC_IT_KEYCLOAK_PORT:-18080}}"
dir="$SVC_RUN/keycloak-$port"
pid="$(cat "$dir/kc.pid" 2>/dev/null || true)"
# The recorded pid is kc.sh, which passes SIGTERM on to its java and waits for it (or java itself, after kc.sh has
# exec'd it); only while it still is this Keycloak (a pid can be reused).
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$dir/dist/bin"; then
  kill "$pid"
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
fi
rm -f "$dir/kc.pid"

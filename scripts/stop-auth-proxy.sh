#!/usr/bin/env bash
# Stops the oauth2-proxy and nginx that start-auth-proxy.sh started on the base port (argument, else
# SVC_IT_AUTH_PORT, else 18480).
set -euo pipefail
. "$(dirname "$0")/env.sh"
base="${1:-${SVC_IT_AUTH_PORT:-18480}}"
dir="$SVC_RUN/auth-proxy-$base"
stop() { # pidfile pattern: only the process recorded there, and only while it still is that program
  local pid
  pid="$(cat "$1" 2>/dev/null || true)"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$2"; then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$1"
}
# nginx writes its own pid file (the master); SIGTERM is its fast shutdown.
stop "$dir/nginx.pid" "nginx: master process"
stop "$dir/oauth2-proxy.pid" "oauth2-proxy"
rm -f "$dir/fingerprint"

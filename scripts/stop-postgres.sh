#!/usr/bin/env bash
# Stops the test cluster started by start-postgres.sh (same port rule); its data stays for the next start.
#   bash scripts/stop-postgres.sh [port]
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-${SVC_PG_PORT:-55432}}"
data="${SVC_PG_DATA:-/tmp/svc-run/pg-$port}"
pg_ctl="/usr/lib/postgresql/$PG_MAJOR/bin/pg_ctl"
[ -f "$data/PG_VERSION" ] || exit 0
runuser -u postgres -- "$pg_ctl" -D "$data" status >/dev/null 2>&1 || exit 0
runuser -u postgres -- "$pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null
log "postgres on port $port stopped"

#!/usr/bin/env bash
# Stops the test cluster started by start-postgres.sh.
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-${SVC_IT_PG_PORT:-55432}}"
data="${SVC_PG_DATA:-/tmp/svc-run/pg-$port}"
[ -f "$data/postmaster.pid" ] || exit 0
runuser -u postgres -- "/usr/lib/postgresql/$PG_MAJOR/bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null

#!/usr/bin/env bash
# Starts a PostgreSQL 15 cluster with pgvector on 127.0.0.1 for integration tests and benchmarks:
#   bash scripts/start-postgres.sh [port]      (port: argument, else SVC_PG_PORT, else 55432)
# Idempotent: a server already answering on the port is reused. User svc / password svc (scram-sha-256), superuser
# because tests create databases and the vector extension; database svc. fsync and full-page writes are off: this
# cluster holds only test data and must be fast, not durable. Prints the connection settings on stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
port="${1:-${SVC_PG_PORT:-55432}}"
bin="/usr/lib/postgresql/$PG_MAJOR/bin"
# The server refuses to run as root, and root's home is closed to other users: the cluster lives under /tmp.
data="${SVC_PG_DATA:-/tmp/svc-run/pg-$port}"
settings="SVC_PG_HOST=127.0.0.1 SVC_PG_PORT=$port SVC_PG_DATABASE=svc SVC_PG_USER=svc SVC_PG_PASSWORD=svc"

bash "$here/install-postgres.sh"
mkdir -p "$(dirname "$data")"
# Two test runs starting at once must not both run initdb: one waits for the other.
exec 9>"$data.lock"
flock -w 120 9

if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
  echo "$settings"
  exit 0
fi

if [ ! -f "$data/PG_VERSION" ]; then
  rm -rf "$data"
  install -d -o postgres -g postgres -m 700 "$data"
  pwfile="$(mktemp)"
  echo svc >"$pwfile"
  chown postgres "$pwfile"
  log "initdb $data"
  runuser -u postgres -- "$bin/initdb" -D "$data" -U svc --pwfile="$pwfile" -A scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$data'
timezone = 'UTC'
shared_buffers = 128MB
work_mem = 16MB
maintenance_work_mem = 256MB
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
fi

log "starting postgres on 127.0.0.1:$port"
# 9>&-: the server must not inherit the lock, or it would hold it for as long as it runs.
runuser -u postgres -- "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start >/dev/null 9>&- \
  || { tail -20 "$data/server.log" >&2; exit 1; }
export PGPASSWORD=svc PGOPTIONS="-c client_min_messages=warning"
psql=("$bin/psql" -h 127.0.0.1 -p "$port" -U svc -v ON_ERROR_STOP=1 -qtA)
"${psql[@]}" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = 'svc'" | grep -q 1 \
  || "${psql[@]}" -d postgres -c "CREATE DATABASE svc"
"${psql[@]}" -d svc -c "CREATE EXTENSION IF NOT EXISTS vector"
echo "$settings"

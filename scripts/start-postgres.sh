#!/usr/bin/env bash
# Starts a PostgreSQL 15 cluster with pgvector on 127.0.0.1 for integration tests and benchmarks.
# Idempotent: a server already answering on the port is reused. User svc / password svc, superuser (tests create
# databases and the vector extension), database svc. fsync is off: this cluster holds only test data.
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-${SVC_IT_PG_PORT:-55432}}"
bin="/usr/lib/postgresql/$PG_MAJOR/bin"
bash "$(dirname "$0")/install-postgres.sh"

if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then exit 0; fi

# The server refuses to run as root, and root's home is closed to other users: keep the cluster under /tmp.
data="${SVC_PG_DATA:-/tmp/svc-run/pg-$port}"
mkdir -p "$(dirname "$data")"
if [ ! -f "$data/PG_VERSION" ]; then
  rm -rf "$data"
  install -d -o postgres -g postgres -m 700 "$data"
  pwfile="$(mktemp)"; echo svc > "$pwfile"; chown postgres "$pwfile"
  runuser -u postgres -- "$bin/initdb" -D "$data" -U svc --pwfile="$pwfile" -A scram-sha-256 -E UTF8 >/dev/null
  rm -f "$pwfile"
  cat >> "$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$data'
shared_buffers = 256MB
work_mem = 32MB
maintenance_work_mem = 512MB
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
fi
runuser -u postgres -- "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start >/dev/null
PGPASSWORD=svc psql -h 127.0.0.1 -p "$port" -U svc -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'svc'" | grep -q 1 \
  || PGPASSWORD=svc psql -h 127.0.0.1 -p "$port" -U svc -d postgres -qc "CREATE DATABASE svc"
PGPASSWORD=svc psql -h 127.0.0.1 -p "$port" -U svc -d svc -qc "CREATE EXTENSION IF NOT EXISTS vector"
log "postgres on 127.0.0.1:$port (SVC_PG_HOST=127.0.0.1 SVC_PG_PORT=$port SVC_PG_USER=svc SVC_PG_PASSWORD=svc)"

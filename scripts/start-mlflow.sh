#!/usr/bin/env bash
# Starts the real MLflow tracking server (`mlflow server` from PyPI, scripts/install-mlflow.sh) on loopback, the
# reference peer of svc's tracker: bash scripts/start-mlflow.sh [port]   (default 15000)
# Backend: its own database (MLFLOW_REF_DATABASE, default mlflow_ref) on the Postgres of scripts/start-postgres.sh
# (postgresql+psycopg2); artifacts proxied to s3://mlflow-ref/ on the MinIO of scripts/start-s3.sh (bucket created here). Workers: MLflow's default
# (4) unless MLFLOW_REF_WORKERS says otherwise. Reused while it answers /health; its pid and log live in
# $SVC_RUN/mlflow-<port>/. Prints MLFLOW_TRACKING_URI=<url> on stdout.
# With SVC_MLFLOW_FLAVOUR=go (scripts/start-mlflow-go.sh) it starts mlflow-go-backend's `mlflow-go server` the same
# way instead: its own venv (scripts/install-mlflow-go.sh), database MLFLOW_GO_DATABASE (default mlflow_go), bucket
# mlflow-go, $SVC_RUN/mlflow-go-<port>/; the Go server answers on the port and starts the Python `mlflow server`
# it proxies the rest to, with the same options, on a free port of its own.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
port="${1:-15000}"
url="http://127.0.0.1:$port"
pg_port="${SVC_PG_PORT:-55432}"
s3_port="${SVC_S3_PORT:-19000}"
case "${SVC_MLFLOW_FLAVOUR:-python}" in
  python) name=mlflow install=install-mlflow.sh database="${MLFLOW_REF_DATABASE:-mlflow_ref}" bucket=mlflow-ref ;;
  go) name=mlflow-go install=install-mlflow-go.sh database="${MLFLOW_GO_DATABASE:-mlflow_go}" bucket=mlflow-go ;;
  *) log "SVC_MLFLOW_FLAVOUR is python or go, not $SVC_MLFLOW_FLAVOUR"; exit 2 ;;
esac
dir="$SVC_RUN/$name-$port"
healthy() { curl -fsS --max-time 2 "$url/health" >/dev/null 2>&1; }

# The install script prints an executable of the venv's bin/.
venv="$(dirname "$(dirname "$(bash "$here/$install")")")"
if healthy; then
  echo "MLFLOW_TRACKING_URI=$url"
  exit 0
fi
# Started before taking the lock: a server they start must not inherit it.
bash "$here/start-postgres.sh" "$pg_port" >/dev/null
bash "$here/start-s3.sh" "$s3_port"

mkdir -p "$dir"
exec 9>"$dir/start.lock"
flock -w 120 9
if healthy; then
  echo "MLFLOW_TRACKING_URI=$url"
  exit 0
fi
# A stale server from an earlier run that no longer answers.
bash "$here/stop-mlflow.sh" "$port" >/dev/null 2>&1 || true
export PGPASSWORD=svc PGOPTIONS="-c client_min_messages=warning"
psql=("/usr/lib/postgresql/$PG_MAJOR/bin/psql" -h 127.0.0.1 -p "$pg_port" -U svc -v ON_ERROR_STOP=1 -qtA -d postgres)
"${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -q 1 \
  || "${psql[@]}" -c "CREATE DATABASE $database"

export MLFLOW_S3_ENDPOINT_URL="http://127.0.0.1:$s3_port" AWS_ACCESS_KEY_ID=svcminio \
  AWS_SECRET_ACCESS_KEY=svcminio-secret AWS_DEFAULT_REGION=us-east-1
BUCKET="$bucket" "$venv/bin/python" - <<'PY'
import os, boto3
s3 = boto3.client("s3", endpoint_url=os.environ["MLFLOW_S3_ENDPOINT_URL"])
if os.environ["BUCKET"] not in [b["Name"] for b in s3.list_buckets().get("Buckets", [])]:
    s3.create_bucket(Bucket=os.environ["BUCKET"])
PY

log "starting $name server on $url (log in $dir/$name.log)"
# mlflow-go runs `mlflow` from PATH for its Python half, and loads the Go library from go-lib/ (see
# install-mlflow-go.sh); neither matters to plain mlflow.
# setsid: its own session, so stop-mlflow.sh ends the server and every process it started (workers; mlflow-go's
# Python server, which it puts in a process group of its own), and nothing else.
PATH="$venv/bin:$PATH" MLFLOW_GO_LIBRARY_PATH="$venv/go-lib" MLFLOW_TRACKING_URI= MLFLOW_DISABLE_TELEMETRY=true \
  setsid "$venv/bin/$name" server --host 127.0.0.1 --port "$port" \
  --workers "${MLFLOW_REF_WORKERS:-4}" \
  --backend-store-uri "postgresql+psycopg2://svc:svc@127.0.0.1:$pg_port/$database" \
  --artifacts-destination "s3://$bucket/" \
  >"$dir/$name.log" 2>&1 </dev/null 9>&- &
echo $! >"$dir/$name.pid"

# The first start creates the schema (alembic migrations): up to a minute on a busy machine.
for _ in $(seq 1 360); do
  if healthy; then
    log "$name ready on $url"
    echo "MLFLOW_TRACKING_URI=$url"
    exit 0
  fi
  kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null || break
  sleep 0.5
done
log "$name server did not become healthy on $url; its log:"
tail -30 "$dir/$name.log" >&2
bash "$here/stop-mlflow.sh" "$port"
exit 1

#!/usr/bin/env bash
# Starts the real MLflow tracking server (`mlflow server` from PyPI, scripts/install-mlflow.sh) on loopback, the
# reference peer of svc's tracker: bash scripts/start-mlflow.sh [port]   (default 15000)
# Backend: its own database (MLFLOW_REF_DATABASE, default mlflow_ref) on the Postgres of scripts/start-postgres.sh
# (postgresql+psycopg2); artifacts proxied to s3://mlflow-ref/ on the MinIO of scripts/start-s3.sh (bucket created here). Workers: MLflow's default
# (4) unless MLFLOW_REF_WORKERS says otherwise. Reused while it answers /health; its pid and log live in
# $SVC_RUN/mlflow-<port>/. Prints MLFLOW_TRACKING_URI=<url> on stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
port="${1:-15000}"
url="http://127.0.0.1:$port"
dir="$SVC_RUN/mlflow-$port"
pg_port="${SVC_PG_PORT:-55432}"
s3_port="${SVC_S3_PORT:-19000}"
database="${MLFLOW_REF_DATABASE:-mlflow_ref}"
healthy() { curl -fsS --max-time 2 "$url/health" >/dev/null 2>&1; }

python="$(bash "$here/install-mlflow.sh")"
venv="$(dirname "$(dirname "$python")")"
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
"$python" - <<'PY'
import os, boto3
s3 = boto3.client("s3", endpoint_url=os.environ["MLFLOW_S3_ENDPOINT_URL"])
if "mlflow-ref" not in [b["Name"] for b in s3.list_buckets().get("Buckets", [])]:
    s3.create_bucket(Bucket="mlflow-ref")
PY

log "starting mlflow server on $url (log in $dir/mlflow.log)"
# setsid: its own process group, so stop-mlflow.sh ends the server and every worker it forked, and nothing else.
MLFLOW_TRACKING_URI= MLFLOW_DISABLE_TELEMETRY=true setsid "$venv/bin/mlflow" server --host 127.0.0.1 --port "$port" \
  --workers "${MLFLOW_REF_WORKERS:-4}" \
  --backend-store-uri "postgresql+psycopg2://svc:svc@127.0.0.1:$pg_port/$database" \
  --artifacts-destination s3://mlflow-ref/ \
  >"$dir/mlflow.log" 2>&1 </dev/null 9>&- &
echo $! >"$dir/mlflow.pid"

# The first start creates the schema (alembic migrations): up to a minute on a busy machine.
for _ in $(seq 1 360); do
  if healthy; then
    log "mlflow ready on $url"
    echo "MLFLOW_TRACKING_URI=$url"
    exit 0
  fi
  kill -0 "$(cat "$dir/mlflow.pid")" 2>/dev/null || break
  sleep 0.5
done
log "mlflow server did not become healthy on $url; its log:"
tail -30 "$dir/mlflow.log" >&2
bash "$here/stop-mlflow.sh" "$port"
exit 1

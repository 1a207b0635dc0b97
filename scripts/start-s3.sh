#!/usr/bin/env bash
# Starts MinIO on loopback for integration tests: `scripts/start-s3.sh [port]` (default 19000), fixed test
# credentials svcminio / svcminio-secret, data under $SVC_RUN/s3-<port> (wiped at each fresh start: test data only).
# A server already answering on the port is reused. Waits until it is ready (at most 60 s).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
port="${1:-19000}"
url="http://127.0.0.1:$port"
dir="$SVC_RUN/s3-$port"

ready() { curl -fs -o /dev/null --max-time 2 "$url/minio/health/ready"; }

if ready; then exit 0; fi
bash "$here/install-s3.sh"
command -v curl >/dev/null || apt_install curl

# A stale server from an earlier run that is not answering: stop it before reusing its folder.
bash "$here/stop-s3.sh" "$port" >/dev/null 2>&1 || true
rm -rf "$dir"
mkdir -p "$dir/data"
log "starting minio on $url (data in $dir/data)"
MINIO_ROOT_USER=svcminio MINIO_ROOT_PASSWORD=svcminio-secret MINIO_BROWSER=off MINIO_UPDATE=off \
  MINIO_CI_CD=1 setsid "$SVC_BIN/minio" server --quiet --anonymous \
  --address "127.0.0.1:$port" --console-address "127.0.0.1:$((port + 1))" "$dir/data" \
  >"$dir/minio.log" 2>&1 </dev/null &
echo $! >"$dir/minio.pid"

for _ in $(seq 1 120); do
  if ready; then log "minio ready on $url"; exit 0; fi
  if ! kill -0 "$(cat "$dir/minio.pid")" 2>/dev/null; then
    log "minio exited during start-up; its log:"; tail -20 "$dir/minio.log" >&2; exit 1
  fi
  sleep 0.5
done
log "minio did not become ready on $url within 60 s; its log:"; tail -20 "$dir/minio.log" >&2
exit 1

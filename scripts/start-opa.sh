#!/usr/bin/env bash
# Starts a real OPA server on 127.0.0.1 loading policies/ (without tests and case tables), for the sidecar
# adapter's integration tests and benchmarks. Idempotent: an OPA already healthy on the port is reused.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
port="${1:-${SVC_IT_OPA_PORT:-18181}}"
bash "$here/install-opa.sh"
if curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; then exit 0; fi
dir="$SVC_RUN/opa-$port"
mkdir -p "$dir"
cd "$here/.."
nohup opa run --server --addr "127.0.0.1:$port" --log-level error \
  --ignore build --ignore cases.json --ignore '*_test.rego' policies >"$dir/opa.log" 2>&1 &
echo $! > "$dir/opa.pid"
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && { log "opa on 127.0.0.1:$port"; exit 0; }
  sleep 0.1
done
echo "opa did not become healthy on port $port; see $dir/opa.log" >&2
exit 1

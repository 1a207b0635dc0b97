#!/usr/bin/env bash
# Starts a real OPA server on 127.0.0.1 serving policies/ (without the Rego tests, the case tables and the wasm
# build), for the sidecar adapter's integration tests and benchmarks. Prints its URL on stdout.
#   bash scripts/start-opa.sh [port]      (port: argument, else SVC_IT_OPA_PORT, else 18181)
# Idempotent: the server this script started is reused while it serves the same policies and data; when they changed
# it is restarted. Its pid, log and fingerprint live in $SVC_RUN/opa-<port>/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
root="$(cd "$here/.." && pwd)"
port="${1:-${SVC_IT_OPA_PORT:-18181}}"
url="http://127.0.0.1:$port"
dir="$SVC_RUN/opa-$port"
healthy() { curl -fsS --max-time 2 "$url/health" >/dev/null 2>&1; }

bash "$here/install-opa.sh"
mkdir -p "$dir"
# Two test runs starting at once must not both start a server: one waits for the other.
exec 9>"$dir/lock"
flock -w 60 9

# What the server loads, where from, and which opa: a change in any of them means a restart.
fingerprint="$(
  cd "$root"
  { echo "$root"; opa version | head -1
    find policies -path policies/build -prune -o -type f \( -name '*.rego' -o -name '*.json' \) \
      ! -name '*_test.rego' ! -name cases.json -print | LC_ALL=C sort | xargs sha256sum; } | sha256sum | cut -d' ' -f1
)"

if [ -f "$dir/opa.pid" ] && kill -0 "$(cat "$dir/opa.pid")" 2>/dev/null; then
  if [ "$(cat "$dir/fingerprint" 2>/dev/null)" = "$fingerprint" ] && healthy; then
    echo "$url"
    exit 0
  fi
  log "policies changed since opa on port $port started: restarting it"
  bash "$here/stop-opa.sh" "$port"
fi
if healthy; then
  echo "port $port already serves an OPA that scripts/start-opa.sh did not start; stop it or choose another port" >&2
  exit 1
fi

cd "$root"
nohup opa run --server --addr "127.0.0.1:$port" --log-level error --skip-version-check --shutdown-grace-period 1 \
  --ignore build --ignore cases.json --ignore '*_test.rego' policies >"$dir/opa.log" 2>&1 9>&- &
echo $! >"$dir/opa.pid"
echo "$fingerprint" >"$dir/fingerprint"
for _ in $(seq 1 100); do
  if healthy; then
    log "opa on $url"
    echo "$url"
    exit 0
  fi
  kill -0 "$(cat "$dir/opa.pid")" 2>/dev/null || break
  sleep 0.1
done
echo "opa did not become healthy on port $port; see $dir/opa.log:" >&2
tail -20 "$dir/opa.log" >&2
bash "$here/stop-opa.sh" "$port"
exit 1

#!/usr/bin/env bash
# Starts Keycloak in development mode on 127.0.0.1 with the realm `svc` imported from scripts/keycloak/svc-realm.json
# (users of every platform role, the oauth2-proxy client `svc`, the public client `svc-cli`), for the identity chain's
# integration tests and a local sign-in. Prints the issuer URL on stdout.
#   bash scripts/start-keycloak.sh [port]      (port: argument, else SVC_IT_KEYCLOAK_PORT, else 18080)
# The management interface (health) listens on port+1. Each port gets its own copy of the distribution under
# $SVC_RUN/keycloak-<port>/ (Keycloak writes its build and its H2 database into its own folder). Idempotent: the server
# this script started is reused while it serves the same realm file; when the file changed it starts afresh.
# SVC_KEYCLOAK_WAIT=0 returns as soon as the server is launched (a caller that waits later with --wait).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
wait_only=0
if [ "${1:-}" = "--wait" ]; then wait_only=1; shift; fi
port="${1:-${SVC_IT_KEYCLOAK_PORT:-18080}}"
issuer="http://127.0.0.1:$port/realms/svc"
dir="$SVC_RUN/keycloak-$port"
realm="$here/keycloak/svc-realm.json"
# Keycloak 26 runs on Java 17 or newer: Debian's 17 is on every machine of this kind.
java_home="${SVC_KEYCLOAK_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
answers() { curl -fsS --max-time 2 "$issuer/.well-known/openid-configuration" 2>/dev/null | grep -q "\"issuer\":\"$issuer\""; }
ours() { [ -f "$dir/kc.pid" ] && kill -0 "$(cat "$dir/kc.pid")" 2>/dev/null; }

wait_ready() {
  # The first start builds the server (augmentation) and creates the database: about 2 minutes on two busy cores;
  # allow three times that before giving up (a server that dies ends the wait at once).
  for _ in $(seq 1 720); do
    if answers; then
      log "keycloak on http://127.0.0.1:$port (issuer $issuer, admin console user admin / admin)"
      echo "$issuer"
      return 0
    fi
    ours || break
    sleep 0.5
  done
  echo "keycloak did not become ready on port $port; see $dir/kc.log:" >&2
  tail -20 "$dir/kc.log" >&2
  return 1
}

if [ "$wait_only" = 1 ]; then wait_ready; exit $?; fi

home="$(bash "$here/install-keycloak.sh")"
mkdir -p "$dir"
exec 9>"$dir/lock"
flock -w 300 9

# The realm signs with the machine's identity key (scripts/identity-key.sh), the key Trino trusts.
identity="$(bash "$here/identity-key.sh")"
fingerprint="$( { echo "$KEYCLOAK_VERSION $java_home"; sha256sum <"$realm"; sha256sum <"$identity/signing-key.pem"; sha256sum <"$here/keycloak/with-signing-key.mjs"; } | sha256sum | cut -d' ' -f1)"
if ours; then
  if [ "$(cat "$dir/fingerprint" 2>/dev/null)" = "$fingerprint" ]; then
    [ "${SVC_KEYCLOAK_WAIT:-1}" = 0 ] && exit 0
    wait_ready
    exit $?
  fi
  log "the realm changed since keycloak on port $port started: starting it afresh"
  bash "$here/stop-keycloak.sh" "$port"
fi
if answers; then
  echo "port $port already serves a Keycloak that scripts/start-keycloak.sh did not start; stop it or choose another port" >&2
  exit 1
fi

# A copy of the distribution per port; a changed realm means a fresh database, so the import is not skipped.
if [ ! -f "$dir/dist/.complete" ]; then
  rm -rf "$dir/dist"
  cp -a "$home" "$dir/dist"
fi
if [ "$(cat "$dir/fingerprint" 2>/dev/null)" != "$fingerprint" ]; then
  rm -rf "$dir/dist/data"
fi
mkdir -p "$dir/dist/data/import"
# The imported realm is the file in the repository with the identity key as its RS256 signing key (priority above
# the keys Keycloak would generate), and the generated HMAC and AES keys Keycloak needs for itself.
node "$here/keycloak/with-signing-key.mjs" "$realm" "$identity/signing-key.pem" >"$dir/dist/data/import/svc-realm.json"

# 9>&-: the server must not inherit the lock. The bootstrap admin exists only for a person poking at the console.
KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD=admin JAVA_HOME="$java_home" \
  nohup "$dir/dist/bin/kc.sh" start-dev --import-realm \
  --http-host=127.0.0.1 --http-port="$port" --hostname="http://127.0.0.1:$port" \
  --http-management-port=$((port + 1)) --health-enabled=true \
  >"$dir/kc.log" 2>&1 9>&- &
echo $! >"$dir/kc.pid"
echo "$fingerprint" >"$dir/fingerprint"
[ "${SVC_KEYCLOAK_WAIT:-1}" = 0 ] && { log "keycloak starting on port $port (log $dir/kc.log)"; exit 0; }
wait_ready

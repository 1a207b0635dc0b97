#!/usr/bin/env bash
# Starts the sign-in chain in front of the svc services on 127.0.0.1: oauth2-proxy (OIDC provider = the Keycloak realm
# that start-keycloak.sh serves) and Debian's nginx doing forward auth to it, the way ingress-nginx does.
#   bash scripts/start-auth-proxy.sh [base-port]      (base: argument, else SVC_IT_AUTH_PORT, else 18480)
# nginx listens on one port per service (the consoles use absolute paths):
#   base+0 retrieval -> SVC_AUTH_UPSTREAM_RETRIEVAL (127.0.0.1:8080)   base+1 explore -> SVC_AUTH_UPSTREAM_EXPLORE (:8081)
#   base+2 tracker   -> SVC_AUTH_UPSTREAM_TRACKER   (127.0.0.1:5000)   base+3 runtime -> SVC_AUTH_UPSTREAM_RUNTIME (:8090)
# oauth2-proxy listens on base+10. The issuer is SVC_AUTH_ISSUER, else Keycloak's realm on SVC_IT_KEYCLOAK_PORT
# (18080), which must be up (oauth2-proxy reads its discovery document at start). Idempotent: the pair this script
# started is reused while its settings are the same, else restarted; pids, generated configuration and logs live in
# $SVC_RUN/auth-proxy-<base>/. Prints the retrieval entry URL on stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
base="${1:-${SVC_IT_AUTH_PORT:-18480}}"
issuer="${SVC_AUTH_ISSUER:-http://127.0.0.1:${SVC_IT_KEYCLOAK_PORT:-18080}/realms/svc}"
client_id="${SVC_AUTH_CLIENT_ID:-svc}"
client_secret="${SVC_AUTH_CLIENT_SECRET:-svc-oauth2-proxy-secret}"
proxy_port=$((base + 10))
dir="$SVC_RUN/auth-proxy-$base"
names=(retrieval explore tracker runtime)
upstreams=(
  "${SVC_AUTH_UPSTREAM_RETRIEVAL:-127.0.0.1:8080}" "${SVC_AUTH_UPSTREAM_EXPLORE:-127.0.0.1:8081}"
  "${SVC_AUTH_UPSTREAM_TRACKER:-127.0.0.1:5000}" "${SVC_AUTH_UPSTREAM_RUNTIME:-127.0.0.1:8090}"
)

bash "$here/install-oauth2-proxy.sh"
apt_install nginx
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
mkdir -p "$dir/tmp"
exec 9>"$dir/lock"
flock -w 120 9

alive() { # pidfile pattern
  local pid
  pid="$(cat "$1" 2>/dev/null || true)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$2"
}
signs_in() { # nginx answers and sends a stranger to the sign-in
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$base/" 2>/dev/null || true)"
  [ "$code" = 302 ]
}

fingerprint="$( { echo "$issuer $client_id $OAUTH2_PROXY_VERSION ${upstreams[*]}"; cat "$0" "$here"/nginx/*.template; } | sha256sum | cut -d' ' -f1)"
if alive "$dir/oauth2-proxy.pid" oauth2-proxy && alive "$dir/nginx.pid" nginx; then
  if [ "$(cat "$dir/fingerprint" 2>/dev/null)" = "$fingerprint" ] && signs_in; then
    echo "http://127.0.0.1:$base"
    exit 0
  fi
  log "the auth proxy on port $base has other settings: restarting it"
fi
bash "$here/stop-auth-proxy.sh" "$base"

if ! curl -fsS --max-time 5 "$issuer/.well-known/openid-configuration" >/dev/null 2>&1; then
  echo "the issuer $issuer does not answer; start it first (bash scripts/start-keycloak.sh)" >&2
  exit 1
fi

# A fresh cookie secret per start: sessions of an earlier run end with it.
cookie_secret="$(openssl rand -hex 16)"
# --redirect-url is left out: oauth2-proxy derives the callback from the request's host and port, and the realm
# accepts a loopback callback on any port (RFC 8252). --skip-jwt-bearer-tokens lets an API client (the CLI, the
# MLflow client) through with its own bearer token from the same issuer instead of a cookie.
nohup oauth2-proxy \
  --http-address="127.0.0.1:$proxy_port" \
  --provider=oidc --provider-display-name="svc (Keycloak)" \
  --oidc-issuer-url="$issuer" --client-id="$client_id" --client-secret="$client_secret" \
  --code-challenge-method=S256 --scope="openid profile email" \
  --oidc-groups-claim=groups --email-domain='*' \
  --cookie-secret="$cookie_secret" --cookie-name=_svc_oauth2 --cookie-secure=false --cookie-samesite=lax \
  --reverse-proxy=true --set-xauthrequest=true --pass-access-token=true \
  --skip-jwt-bearer-tokens=true --skip-provider-button=true \
  --whitelist-domain='127.0.0.1:*' --upstream=static://202 \
  --silence-ping-logging=true \
  >"$dir/oauth2-proxy.log" 2>&1 9>&- &
echo $! >"$dir/oauth2-proxy.pid"

# nginx: the server blocks from the template, one per service.
servers=""
for i in "${!names[@]}"; do
  servers+="$(sed -e "s|@NAME@|${names[$i]}|g" -e "s|@PORT@|$((base + i))|g" -e "s|@UPSTREAM@|${upstreams[$i]}|g" \
    "$here/nginx/svc-service.conf.template")"$'\n'
done
user_line=""
[ "$(id -u)" = 0 ] && user_line="user root root;" # workers must read the temp folders under root's home
template="$(cat "$here/nginx/svc-forward-auth.conf.template")"
template="${template//@RUN@/$dir}"
template="${template//@USER@/$user_line}"
template="${template//@OAUTH2_PROXY@/127.0.0.1:$proxy_port}"
printf '%s\n' "${template//@SERVERS@/$servers}" >"$dir/nginx.conf"
"$nginx_bin" -t -q -p "$dir" -c "$dir/nginx.conf" 2>"$dir/nginx-test.log" || { cat "$dir/nginx-test.log" >&2; exit 1; }
nohup "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" >"$dir/nginx.log" 2>&1 9>&- &
echo "$fingerprint" >"$dir/fingerprint"

for _ in $(seq 1 100); do
  if curl -fsS --max-time 1 "http://127.0.0.1:$proxy_port/ping" >/dev/null 2>&1 && signs_in; then
    log "auth proxy: retrieval http://127.0.0.1:$base, explore :$((base + 1)), tracker :$((base + 2)), runtime :$((base + 3)); oauth2-proxy :$proxy_port"
    echo "http://127.0.0.1:$base"
    exit 0
  fi
  sleep 0.1
done
echo "the auth proxy did not come up on port $base; see $dir/oauth2-proxy.log and $dir/nginx-error.log:" >&2
tail -5 "$dir/oauth2-proxy.log" "$dir/nginx-error.log" >&2 || true
bash "$here/stop-auth-proxy.sh" "$base"
exit 1

#!/usr/bin/env bash
# Starts a single-node OpenSearch 2.19.1 on 127.0.0.1 as a platform team would run it for svc: security on, HTTPS
# and transport TLS with certificates made here, and a user `svc` (password svc-opensearch-secret) that may manage
# and use the indices named `svc-*` and nothing else. `scripts/start-opensearch.sh [port]` (default 19200; transport
# on port + 100). Idempotent: a server already answering on the port is reused. Prints nothing on success; the
# settings a test needs are in `$SVC_RUN/opensearch-<port>/env` (docs/retrieval.md, Search backend).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
port="${1:-${SVC_IT_OPENSEARCH_PORT:-19200}}"
bash "$here/install-opensearch.sh"
home="$SVC_CACHE/opensearch-2.19.1"
keys="$SVC_RUN/opensearch-$port/keys"
# OpenSearch refuses to run as root, and root's home is closed to other users: as root, the node runs as the system
# user svc-opensearch from a folder under /tmp, its server files hard links to the cached install.
dir="$SVC_RUN/opensearch-$port/node"
as_user=()
if [ "$(id -u)" = 0 ]; then
  id svc-opensearch >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin svc-opensearch
  dir="/tmp/svc-opensearch-$port"
  as_user=(runuser -u svc-opensearch --)
fi
conf="$dir/config"
password=svc-opensearch-secret
export OPENSEARCH_JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64

ready() {
  curl -fsS --max-time 3 --cacert "$keys/ca.pem" -u "svc:$password" \
    "https://127.0.0.1:$port/_cluster/health?wait_for_status=yellow&timeout=2s" 2>/dev/null | grep -q '"status":"\(green\|yellow\)"'
}
if [ -f "$keys/ca.pem" ] && ready; then exit 0; fi

bash "$here/stop-opensearch.sh" "$port" >/dev/null 2>&1 || true
rm -rf "$dir" "$keys"
mkdir -p "$conf" "$keys" "$dir/data" "$dir/logs"
cp -r "$home/config/." "$conf/"
server="$home"
if [ ${#as_user[@]} -gt 0 ]; then
  server="$dir/server"
  cp -al "$home" "$server" 2>/dev/null || cp -a "$home" "$server"
fi

# A CA, the node's certificate (both TLS layers) and the admin's (the security plugin's own tools would use it).
# The plugin reads PKCS#8 keys.
cert() { # name subject [san]
  openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$keys/$1-key.rsa.pem" -out "$keys/$1.csr" 2>/dev/null
  openssl pkcs8 -topk8 -nocrypt -in "$keys/$1-key.rsa.pem" -out "$keys/$1-key.pem"
  openssl x509 -req -in "$keys/$1.csr" -CA "$keys/ca.pem" -CAkey "$keys/ca-key.pem" -CAcreateserial -days 3650 -sha256 \
    ${3:+-extfile <(printf 'subjectAltName=%s' "$3")} -out "$keys/$1.pem" 2>/dev/null
}
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=svc-test-opensearch-ca" \
  -keyout "$keys/ca-key.pem" -out "$keys/ca.pem" 2>/dev/null
cert node "/CN=svc-opensearch-node" "DNS:localhost,IP:127.0.0.1"
cert admin "/CN=svc-opensearch-admin"
cp "$keys"/{ca.pem,node.pem,node-key.pem,admin.pem,admin-key.pem} "$conf/"

cat >"$conf/opensearch.yml" <<CONF
cluster.name: svc-test
node.name: svc-test-node
path.data: $dir/data
path.logs: $dir/logs
network.host: 127.0.0.1
http.port: $port
transport.port: $((port + 100))
discovery.type: single-node
plugins.security.ssl.transport.pemcert_filepath: node.pem
plugins.security.ssl.transport.pemkey_filepath: node-key.pem
plugins.security.ssl.transport.pemtrustedcas_filepath: ca.pem
plugins.security.ssl.transport.enforce_hostname_verification: false
plugins.security.ssl.http.enabled: true
plugins.security.ssl.http.pemcert_filepath: node.pem
plugins.security.ssl.http.pemkey_filepath: node-key.pem
plugins.security.ssl.http.pemtrustedcas_filepath: ca.pem
plugins.security.nodes_dn: ["CN=svc-opensearch-node"]
plugins.security.authcz.admin_dn: ["CN=svc-opensearch-admin"]
# the security index is made from config/opensearch-security/ at the first start, without securityadmin.sh
plugins.security.allow_default_init_securityindex: true
plugins.security.audit.type: noop
CONF

# Users, roles and the mapping between them: svc owns the svc-* indices; admin (same password) is for a person.
security="$conf/opensearch-security"
mkdir -p "$security"
hash="$(JAVA_HOME="$OPENSEARCH_JAVA_HOME" bash "$home/plugins/opensearch-security/tools/hash.sh" -p "$password" 2>/dev/null | tail -1)"
meta() { printf '_meta:\n  type: "%s"\n  config_version: 2\n' "$1"; }
{ meta config; cat <<YML; } >"$security/config.yml"
config:
  dynamic:
    http:
      anonymous_auth_enabled: false
    authc:
      basic_internal_auth_domain:
        http_enabled: true
        transport_enabled: true
        order: 0
        http_authenticator:
          type: basic
          challenge: true
        authentication_backend:
          type: intern
YML
{ meta internalusers; cat <<YML; } >"$security/internal_users.yml"
svc:
  hash: "$hash"
  description: "the retrieval service"
admin:
  hash: "$hash"
  reserved: true
  backend_roles: ["admin"]
YML
{ meta roles; cat <<'YML'; } >"$security/roles.yml"
svc_retrieval:
  cluster_permissions: ["cluster_monitor", "cluster_composite_ops", "indices:data/read/scroll*"]
  index_permissions:
    - index_patterns: ["svc-*"]
      allowed_actions: ["indices_all"]
YML
{ meta rolesmapping; cat <<'YML'; } >"$security/roles_mapping.yml"
svc_retrieval:
  users: ["svc"]
all_access:
  reserved: false
  backend_roles: ["admin"]
YML
for kind in actiongroups tenants nodesdn allowlist; do
  file="$(case $kind in actiongroups) echo action_groups ;; nodesdn) echo nodes_dn ;; *) echo "$kind" ;; esac).yml"
  meta "$kind" >"$security/$file"
  [ "$kind" = allowlist ] && printf 'config:\n  enabled: false\n' >>"$security/$file"
done
# Small heap: a test node with a few indices. jvm.options names its GC log, error files and heap dumps relative to
# the server's folder, which the node's user may not write.
sed -i "s/^-Xms.*/-Xms512m/; s/^-Xmx.*/-Xmx512m/; s#logs/#$dir/logs/#g; s#HeapDumpPath=data#HeapDumpPath=$dir/data#" "$conf/jvm.options"

if [ ${#as_user[@]} -gt 0 ]; then chown -R svc-opensearch "$conf" "$dir/data" "$dir/logs" && chown svc-opensearch "$dir"; fi
echo "$dir" >"$SVC_RUN/opensearch-$port/node-dir"
cat >"$SVC_RUN/opensearch-$port/env" <<ENV
SVC_OPENSEARCH_URL=https://127.0.0.1:$port
SVC_OPENSEARCH_USER=svc
SVC_OPENSEARCH_PASSWORD=$password
SVC_OPENSEARCH_CA=$keys/ca.pem
ENV

log "starting opensearch on https://127.0.0.1:$port (logs in $dir/logs)"
(setsid "${as_user[@]}" env OPENSEARCH_JAVA_HOME="$OPENSEARCH_JAVA_HOME" \
  OPENSEARCH_PATH_CONF="$conf" "$server/bin/opensearch" -d -p "$dir/opensearch.pid" >"$SVC_RUN/opensearch-$port/start.log" 2>&1 </dev/null) \
  || { log "opensearch did not start; its log:"; tail -30 "$dir/logs/svc-test.log" >&2; exit 1; }
for _ in $(seq 1 180); do
  if ready; then log "opensearch ready on https://127.0.0.1:$port (user svc, CA $keys/ca.pem)"; exit 0; fi
  if ! kill -0 "$(cat "$dir/opensearch.pid" 2>/dev/null || echo 0)" 2>/dev/null; then
    log "opensearch exited during start-up; its log:"; tail -30 "$dir/logs/svc-test.log" >&2; exit 1
  fi
  sleep 1
done
log "opensearch did not become ready on port $port within 180 s; its log:"; tail -30 "$dir/logs/svc-test.log" >&2
exit 1

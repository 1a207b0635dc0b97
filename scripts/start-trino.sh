#!/usr/bin/env bash
# Starts a single-node Trino 476 on 127.0.0.1 configured as production would be: HTTPS with a certificate made here,
# JWT authentication with the identity provider's key (the user is the token's preferred_username), an internal shared secret, and
# file-based access control whose rules give the test analyst a row filter, a column mask and a denied table.
# Catalogs: tpch, memory, and iceberg (the lake: Iceberg tables in a MinIO bucket, their catalog in Postgres; both
# started here if they are not running). Idempotent: a Trino already answering on the port with the same
# configuration is reused. Prints where the test keys are.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
port="${1:-${SVC_IT_TRINO_PORT:-18443}}"
bash "$here/install-trino.sh"
home="$SVC_CACHE/trino-476"
etc="$SVC_RUN/trino-$port/etc"
data="$SVC_RUN/trino-$port/data"
keys="$SVC_RUN/trino-$port/keys"
mkdir -p "$etc/catalog" "$data" "$keys"

# The access rules are copied next to the server's configuration rather than read from this checkout, so a server
# started from another checkout (reused below) never points at a file that has gone; Trino reloads them every 5 s.
rules_changed=0
cmp -s "$here/trino/rules.json" "$etc/rules.json" 2>/dev/null || { cp "$here/trino/rules.json" "$etc/rules.json"; rules_changed=1; }

# Tokens are verified with the identity provider's key (scripts/identity-key.sh: the test realm signs with it), and
# the user is the token's preferred_username, as Keycloak names it. A server started with another key restarts.
identity="$(bash "$here/identity-key.sh")"
identity_changed=0
cmp -s "$identity/signing-key.pem" "$keys/jwt-private.pem" 2>/dev/null || {
  cp "$identity/signing-key.pem" "$keys/jwt-private.pem"
  cp "$identity/signing-key.pub.pem" "$keys/jwt-public.pem"
  identity_changed=1
}

# The lake: Iceberg tables on the S3-compatible store of scripts/start-s3.sh through Trino's native S3 file system,
# their catalog (Iceberg's JDBC catalog) in a database of its own on the platform's Postgres. One bucket and one
# database per Trino port, so two test servers never share tables.
pg_port="${SVC_PG_PORT:-55432}"
s3_port="${SVC_S3_PORT:-19000}"
lake_bucket="svc-lake-$port"
lake_database="svc_lake_$port"
bash "$here/start-postgres.sh" "$pg_port" >/dev/null
bash "$here/start-s3.sh" "$s3_port"
s3_url="http://127.0.0.1:$s3_port"
s3_signed=(--aws-sigv4 "aws:amz:us-east-1:s3" --user svcminio:svcminio-secret)
export PGPASSWORD=svc PGOPTIONS="-c client_min_messages=warning"
psql=("/usr/lib/postgresql/$PG_MAJOR/bin/psql" -h 127.0.0.1 -p "$pg_port" -U svc -v ON_ERROR_STOP=1 -qtA)
"${psql[@]}" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$lake_database'" | grep -q 1 \
  || "${psql[@]}" -d postgres -c "CREATE DATABASE $lake_database"
"${psql[@]}" -d "$lake_database" -f "$here/trino/lake-catalog.sql"
if [ "$(curl -s -o /dev/null -w '%{http_code}' -I "${s3_signed[@]}" "$s3_url/$lake_bucket")" != 200 ]; then
  curl -fsS -o /dev/null -X PUT "${s3_signed[@]}" "$s3_url/$lake_bucket"
  # start-s3.sh wipes MinIO's data at a fresh start: a catalog naming tables of the bucket that went would name
  # files that are gone, so a new bucket starts an empty catalog.
  "${psql[@]}" -d "$lake_database" -c "DELETE FROM iceberg_tables; DELETE FROM iceberg_namespace_properties"
fi

# The server's settings and catalogs are written before the check for a running server: one started with other
# settings restarts.
config_changed=0
write_conf() { # file under etc; its content on stdin
  local file="$etc/$1" next
  next="$(cat)"
  [ "$(cat "$file" 2>/dev/null)" = "$next" ] && return 0
  printf '%s\n' "$next" >"$file"
  config_changed=1
}
write_conf config.properties <<CONF
coordinator=true
node-scheduler.include-coordinator=true
http-server.http.port=$((port + 1))
http-server.https.enabled=true
http-server.https.port=$port
http-server.https.keystore.path=$keys/server.pem
http-server.authentication.type=JWT
http-server.authentication.jwt.key-file=$keys/jwt-public.pem
http-server.authentication.jwt.principal-field=preferred_username
internal-communication.shared-secret=svc-test-shared-secret
discovery.uri=http://127.0.0.1:$((port + 1))
query.max-memory=512MB
query.max-memory-per-node=512MB
# a batch of embeddings is one INSERT of literals: 1000 chunks of 768 floats are 7 MB of SQL (json_parse of a JSON
# array a row) to 13 MB (ARRAY[REAL ...]), past the default limit of 1 000 000 characters (docs/explore.md)
query.max-length=100000000
CONF
write_conf catalog/tpch.properties <<CONF
connector.name=tpch
tpch.column-naming=STANDARD
CONF
write_conf catalog/memory.properties <<CONF
connector.name=memory
CONF
write_conf catalog/iceberg.properties <<CONF
connector.name=iceberg
iceberg.catalog.type=jdbc
iceberg.jdbc-catalog.driver-class=org.postgresql.Driver
iceberg.jdbc-catalog.connection-url=jdbc:postgresql://127.0.0.1:$pg_port/$lake_database
iceberg.jdbc-catalog.connection-user=svc
iceberg.jdbc-catalog.connection-password=svc
iceberg.jdbc-catalog.catalog-name=svc_lake
iceberg.jdbc-catalog.default-warehouse-dir=s3://$lake_bucket/warehouse
fs.native-s3.enabled=true
s3.endpoint=$s3_url
s3.path-style-access=true
s3.region=us-east-1
s3.aws-access-key=svcminio
s3.aws-secret-key=svcminio-secret
# test server only: maintenance may expire snapshots and orphan files minutes old (the default floor is 7 days),
# and ALTER TABLE ... EXECUTE add_files (off by default) may register existing Parquet files
iceberg.expire-snapshots.min-retention=0s
iceberg.remove-orphan-files.min-retention=0s
iceberg.add-files-procedure.enabled=true
CONF

b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
# A token the identity key signs, as the tests' own (the user is its preferred_username, and its subject).
token() {
  local header payload
  header="$(printf '{"alg":"RS256","typ":"JWT"}' | b64url)"
  payload="$(printf '{"sub":"%s","preferred_username":"%s","exp":%d}' "$1" "$1" "$(($(date +%s) + 300))" | b64url)"
  printf '%s.%s.%s' "$header" "$payload" "$(printf '%s.%s' "$header" "$payload" | openssl dgst -sha256 -sign "$keys/jwt-private.pem" -binary | b64url)"
}
answers_info() { curl -fsS --cacert "$keys/ca.pem" "https://localhost:$port/v1/info" 2>/dev/null | grep -q '"starting":false'; }
# /v1/info says started a few seconds before the node has announced itself ("nodes is empty"): ready is when a
# statement runs to the end without an error.
runs_a_statement() {
  local auth body uri
  auth="Authorization: Bearer $(token svc-readiness)"
  body="$(curl -fsS --cacert "$keys/ca.pem" -H "$auth" -X POST --data 'SELECT 1' "https://localhost:$port/v1/statement" 2>/dev/null)" || return 1
  for _ in $(seq 1 200); do
    case "$body" in *'"error"'*) return 1 ;; esac
    uri="$(printf '%s' "$body" | sed -n 's/.*"nextUri":"\([^"]*\)".*/\1/p')"
    [ -z "$uri" ] && return 0
    body="$(curl -fsS --cacert "$keys/ca.pem" -H "$auth" "$uri" 2>/dev/null)" || return 1
  done
  return 1
}
wait_ready() {
  for _ in $(seq 1 180); do
    if answers_info && runs_a_statement; then
      log "trino on https://localhost:$port (CA $keys/ca.pem, JWT key $keys/jwt-private.pem)"
      return 0
    fi
    sleep 1
  done
  echo "trino did not become ready on port $port; see $data/server.log" >&2
  return 1
}

if answers_info; then
  if [ "$identity_changed" = 0 ] && [ "$config_changed" = 0 ] && grep -q "security.config-file=$etc/rules.json" "$etc/access-control.properties" 2>/dev/null; then
    [ "$rules_changed" = 1 ] && sleep 6
    wait_ready
    exit $?
  fi
  log "trino on port $port reads its rules or identity key from elsewhere, or runs with other settings: restarting it"
  bash "$here/stop-trino.sh" "$port"
fi

if [ ! -f "$keys/server.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$keys/server-key.pem" -out "$keys/ca.pem" 2>/dev/null
  cat "$keys/server-key.pem" "$keys/ca.pem" > "$keys/server.pem"
fi

cat > "$etc/node.properties" <<CONF
node.environment=svc_test
node.id=svc-test-node
node.data-dir=$data
CONF
cat > "$etc/jvm.config" <<CONF
-server
-Xmx1G
-XX:+UseG1GC
-XX:+ExitOnOutOfMemoryError
-Djdk.attach.allowAttachSelf=true
CONF
cat > "$etc/log.properties" <<CONF
io.trino=WARN
CONF
cat > "$etc/access-control.properties" <<CONF
access-control.name=file
security.config-file=$etc/rules.json
security.refresh-period=5s
CONF

JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH="/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH" \
  "$home/bin/launcher" --etc-dir "$etc" --data-dir "$data" --launcher-log-file "$data/launcher.log" --server-log-file "$data/server.log" start >/dev/null
wait_ready

#!/usr/bin/env bash
# Installs (cached under $SVC_CACHE) and starts every real server the integration and browser suites use, on
# loopback; servers already running on their ports are reused. scripts/integration.sh runs it before the suites, and
# .ci/run runs it in the background while the unit suites run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"

# Keycloak is the slowest to come up (about 2 minutes on a new machine, 20 s once its database exists) and needs
# nothing else: it starts in the background while the others start one after another.
bash "$here/start-keycloak.sh" >/dev/null &
keycloak=$!
# OpenSearch (about a minute, its JVM) needs nothing else either.
bash "$here/start-opensearch.sh" &
opensearch=$!
bash "$here/install-opa.sh"
bash "$here/start-postgres.sh"
bash "$here/start-opa.sh"
bash "$here/start-s3.sh"
bash "$here/start-trino.sh"
bash "$here/install-chromium.sh"
bash "$here/install-mlflow.sh" >/dev/null
bash "$here/install-schemathesis.sh" >/dev/null
bash "$here/install-oauth2-proxy.sh"
wait "$keycloak"
wait "$opensearch"
# oauth2-proxy and nginx in front of the services' usual ports (docs/auth.md); they read the realm at start.
bash "$here/start-auth-proxy.sh" >/dev/null

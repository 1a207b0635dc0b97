#!/usr/bin/env bash
# `npm run test:integration`: installs and starts the real servers on loopback, then runs the integration and
# browser suites against them. Servers already running on the same ports are reused.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"

bash "$here/install-opa.sh"
bash "$here/start-postgres.sh"
bash "$here/start-opa.sh"
bash "$here/start-s3.sh"
bash "$here/start-trino.sh"
bash "$here/install-chromium.sh"
bash "$here/install-mlflow.sh" >/dev/null

cd "$here/.."
exec npx vitest run --project integration --project e2e "$@"

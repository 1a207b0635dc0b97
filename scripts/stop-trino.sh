#!/usr/bin/env bash
# Stops the Trino started by start-trino.sh.
set -euo pipefail
. "$(dirname "$0")/env.sh"
port="${1:-${SVC_IT_TRINO_PORT:-18443}}"
JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 "$SVC_CACHE/trino-476/bin/launcher" --etc-dir "$SVC_RUN/trino-$port/etc" --data-dir "$SVC_RUN/trino-$port/data" stop >/dev/null 2>&1 || true

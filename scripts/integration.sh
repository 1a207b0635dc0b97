#!/usr/bin/env bash
# `npm run test:integration`: installs and starts the real servers on loopback (scripts/servers.sh), then runs the
# integration and browser suites against them. Servers already running on the same ports are reused.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/servers.sh"
cd "$here/.."
exec npx vitest run --project integration --project e2e "$@"

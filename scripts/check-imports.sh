#!/usr/bin/env bash
# The import graph (.dependency-cruiser.cjs): src/platform imports no service, no service imports another, no cycles
# outside the SQL grammar's own recursion; the dashboards runtime (dashboards-runtime/) reaches shared code only
# through @svc/platform and loads nothing of a service, the database, the gateway or Trino. Then what the runtime's
# image holds (scripts/check-runtime-image.mjs): its closure, every package that closure imports declared where
# `npm ci --omit=dev -w dashboards-runtime` installs it from, and the image's size.
set -euo pipefail
cd "$(dirname "$0")/.."
npx depcruise src dashboards-runtime tests bench --config .dependency-cruiser.cjs
node scripts/check-runtime-image.mjs

#!/usr/bin/env bash
# The import graph (.dependency-cruiser.cjs): src/platform imports no service, no service imports another, no cycles
# outside the SQL grammar's own recursion.
set -euo pipefail
cd "$(dirname "$0")/.."
npx depcruise src tests bench --config .dependency-cruiser.cjs

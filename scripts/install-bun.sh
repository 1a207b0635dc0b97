#!/usr/bin/env bash
# Bun for the test that runs the services on it: the official Linux x64 build, as npm publishes it
# (@oven/bun-linux-x64), unpacked under $SVC_CACHE/bun. Prints the binary's path.
set -euo pipefail
. "$(dirname "$0")/env.sh"
BUN_VERSION=1.4.5
dir="$SVC_CACHE/bun/$BUN_VERSION"
if [ ! -x "$dir/package/bin/bun" ]; then
  mkdir -p "$dir"
  log "bun $BUN_VERSION from the npm registry"
  (cd "$dir" && npm pack --silent "@oven/bun-linux-x64@$BUN_VERSION" >/dev/null && tar xzf "oven-bun-linux-x64-$BUN_VERSION.tgz" && rm "oven-bun-linux-x64-$BUN_VERSION.tgz")
fi
echo "$dir/package/bin/bun"

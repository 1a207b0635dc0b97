#!/usr/bin/env bash
# Installs Node <version> from the npm registry's `node` package (a prebuilt binary for this platform) under
# $SVC_CACHE/node-<version>/ and prints the folder holding its `node`, for running the suites on a Node other than
# the machine's: PATH="$(bash scripts/install-node.sh 24.21.0):$PATH" npm test
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
version="${1:?usage: install-node.sh <version>}"
dir="$SVC_CACHE/node-$version"
bin="$dir/node_modules/node/bin"
if [ ! -x "$bin/node" ] || [ "$("$bin/node" --version)" != "v$version" ]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node@$version" >&2
fi
[ "$("$bin/node" --version)" = "v$version" ] || { echo "node $version did not install under $dir" >&2; exit 1; }
echo "$bin"

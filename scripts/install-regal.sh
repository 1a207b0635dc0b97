#!/usr/bin/env bash
# Installs Regal, the Rego linter (pinned), from the Go module proxy into $SVC_CACHE/bin.
# `go install github.com/open-policy-agent/regal@<version>` is refused: the proxy serves Regal's released versions
# but answers 403 for the module's version list, which `go install pkg@version` reads (for deprecation notices).
# Inside a throwaway module, `go get -tool` pins the version without that list and `go install` then builds it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
REGAL_VERSION="v0.42.0"

installed() { [ -x "$SVC_BIN/regal" ] && [ "$(cat "$SVC_BIN/.regal-version" 2>/dev/null)" = "$REGAL_VERSION" ]; }
installed && exit 0
# Two runs starting at once must not both build it: one waits for the other.
exec 9>"$SVC_CACHE/regal-install.lock"
flock -w 600 9
installed && exit 0

log "building regal $REGAL_VERSION (first run only, a few minutes)"
mod="$SVC_CACHE/go/regal-tool"
rm -rf "$mod"
mkdir -p "$mod"
cd "$mod"
go mod init svc-tools/regal >/dev/null 2>&1
go get -tool "github.com/open-policy-agent/regal@$REGAL_VERSION" 2>"$mod/get.log" || { cat "$mod/get.log" >&2; exit 1; }
GOBIN="$SVC_BIN" go install github.com/open-policy-agent/regal
# A build from the module reports its version as "unknown": a stamp file says which one it is.
echo "$REGAL_VERSION" >"$SVC_BIN/.regal-version"
"$SVC_BIN/regal" version | grep -i 'OPA Version' >&2

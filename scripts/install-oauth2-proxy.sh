#!/usr/bin/env bash
# Installs oauth2-proxy (pinned) with the Go toolchain, cached in $SVC_CACHE/bin. The module proxy serves no version
# list for it, so `go install …@version` is refused: a throwaway module pins it with `go get -tool`, then
# `go install` builds it from that module's requirements.
set -euo pipefail
. "$(dirname "$0")/env.sh"
if [ -x "$SVC_BIN/oauth2-proxy" ] && "$SVC_BIN/oauth2-proxy" --version 2>&1 | grep -q "oauth2-proxy $OAUTH2_PROXY_VERSION "; then
  exit 0
fi
exec 9>"$SVC_CACHE/oauth2-proxy.lock"
flock -w 900 9
if [ -x "$SVC_BIN/oauth2-proxy" ] && "$SVC_BIN/oauth2-proxy" --version 2>&1 | grep -q "oauth2-proxy $OAUTH2_PROXY_VERSION "; then
  exit 0
fi
log "building oauth2-proxy $OAUTH2_PROXY_VERSION (first run only, a few minutes)"
mod="$(mktemp -d)"
trap 'rm -rf "$mod"' EXIT
cd "$mod"
go mod init svc.local/oauth2-proxy-pin >/dev/null 2>&1
go get -tool "github.com/oauth2-proxy/oauth2-proxy/v7@$OAUTH2_PROXY_VERSION" >&2
GOBIN="$SVC_BIN" go install -ldflags "-X github.com/oauth2-proxy/oauth2-proxy/v7/pkg/version.VERSION=$OAUTH2_PROXY_VERSION" \
  github.com/oauth2-proxy/oauth2-proxy/v7
"$SVC_BIN/oauth2-proxy" --version >&2

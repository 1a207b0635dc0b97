#!/usr/bin/env bash
# Installs OPA (pinned) with `go install`, cached in $SVC_CACHE/bin.
set -euo pipefail
. "$(dirname "$0")/env.sh"
if [ -x "$SVC_BIN/opa" ] && "$SVC_BIN/opa" version 2>/dev/null | grep -q "Version: ${OPA_VERSION#v}$"; then
  exit 0
fi
log "building opa $OPA_VERSION (first run only, a few minutes)"
GOBIN="$SVC_BIN" go install "github.com/open-policy-agent/opa@$OPA_VERSION"
"$SVC_BIN/opa" version | head -1 >&2

#!/usr/bin/env bash
# Installs OPA (pinned) with `go install`, cached in $SVC_CACHE/bin.
set -euo pipefail
. "$(dirname "$0")/env.sh"
# The version is read whole before it is matched: `grep -q` closing the pipe early fails it under pipefail.
if [ -x "$SVC_BIN/opa" ] && [[ "$("$SVC_BIN/opa" version 2>/dev/null)" == *"Version: ${OPA_VERSION#v}"$'\n'* ]]; then
  exit 0
fi
log "building opa $OPA_VERSION (first run only, a few minutes)"
GOBIN="$SVC_BIN" go install "github.com/open-policy-agent/opa@$OPA_VERSION"
"$SVC_BIN/opa" version | head -1 >&2

#!/usr/bin/env bash
# Installs the S3-compatible server for integration tests: MinIO, built from its Go module with `go install`
# (pinned commit, no GitHub download), cached in $SVC_CACHE/bin. About 3 minutes on 2 cores the first time;
# a no-op once the pinned build is there.
set -euo pipefail
. "$(dirname "$0")/env.sh"
# MinIO tags its releases RELEASE.<date>, which Go cannot resolve, so the pin is the pseudo-version of a commit.
MINIO_MODULE="github.com/minio/minio"
MINIO_VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"

if [ -x "$SVC_BIN/minio" ] && go version -m "$SVC_BIN/minio" 2>/dev/null | grep -q "mod[[:space:]]*$MINIO_MODULE[[:space:]]*$MINIO_VERSION"; then
  exit 0
fi
command -v go >/dev/null || { log "install-s3: Go is needed to build MinIO (go install)"; exit 1; }
log "building minio $MINIO_VERSION with go install (first run only, a few minutes)"
GOBIN="$SVC_BIN" go install "$MINIO_MODULE@$MINIO_VERSION"
go version -m "$SVC_BIN/minio" | grep "mod[[:space:]]*$MINIO_MODULE" >&2

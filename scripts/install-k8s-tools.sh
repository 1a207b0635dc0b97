#!/usr/bin/env bash
# Installs the manifest checkers (pinned) with `go install` into $SVC_CACHE/bin: kustomize renders k8s/overlays/*,
# kubeconform validates the result against JSON schemas generated here (scripts/k8s-schemas.mjs) from the
# Kubernetes OpenAPI document in the k8s.io/kubernetes module, because kubeconform's default schema source is
# not reachable from CI. Everything is cached under $SVC_CACHE.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
KUSTOMIZE_VERSION="v5.8.2"
KUBECONFORM_VERSION="v0.8.0"
KUBERNETES_VERSION="v1.35.4"   # the OpenAPI the schemas come from; the API server version validated against

if ! { [ -x "$SVC_BIN/kustomize" ] && "$SVC_BIN/kustomize" version 2>/dev/null | grep -q "${KUSTOMIZE_VERSION}"; }; then
  log "building kustomize $KUSTOMIZE_VERSION (first run only)"
  GOBIN="$SVC_BIN" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
fi
# A `go install` build of kubeconform reports its version as "development": a stamp file says which one it is.
if ! { [ -x "$SVC_BIN/kubeconform" ] && [ "$(cat "$SVC_BIN/.kubeconform-version" 2>/dev/null)" = "$KUBECONFORM_VERSION" ]; }; then
  log "building kubeconform $KUBECONFORM_VERSION (first run only)"
  GOBIN="$SVC_BIN" go install "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
  echo "$KUBECONFORM_VERSION" >"$SVC_BIN/.kubeconform-version"
fi

schemas="$SVC_CACHE/k8s-schemas/$KUBERNETES_VERSION"
if [ ! -f "$schemas/.complete" ]; then
  log "generating Kubernetes $KUBERNETES_VERSION JSON schemas (first run only)"
  src="$(cd "$(mktemp -d)" && pwd)"
  # The module zip holds api/openapi-spec/swagger.json; `go mod download` fetches it through the Go module proxy.
  dir="$(cd "$src" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')"
  rm -rf "$schemas"
  node "$here/k8s-schemas.mjs" "$dir/api/openapi-spec/swagger.json" "$schemas"
  touch "$schemas/.complete"
  # The unpacked module (110 MB) served its purpose; its zip stays in the module cache.
  rm -rf "$dir"
  rmdir "$src" 2>/dev/null || true
fi
echo "$schemas"

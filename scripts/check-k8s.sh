#!/usr/bin/env bash
# The manifest checks CI runs: every overlay in k8s/overlays (and every Job in k8s/jobs) renders with kustomize and every resource it renders
# validates strictly (no unknown field, right types, known kinds only) against the Kubernetes API's JSON schemas.
# Installs the tools and schemas first (scripts/install-k8s-tools.sh, cached). tests/unit/k8s-manifests.test.ts then
# asserts the specification's numbers on the same renders (CI runs it in `npm test`, after this). Last, the runtime's
# image: its files, packages and size (scripts/check-runtime-image.mjs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
cd "$here/.."
schemas="$(bash "$here/install-k8s-tools.sh")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
status=0
# every overlay, and every Job applied one at a time (an import's workers)
for dir in k8s/overlays/*/ k8s/jobs/*/; do
  name="$(basename "$(dirname "$dir")")-$(basename "$dir")"
  if ! kustomize build "$dir" >"$out/$name.yaml"; then
    echo "$dir does not render" >&2
    status=1
    continue
  fi
  echo "$dir: $(grep -c '^kind:' "$out/$name.yaml") resources"
  kubeconform -strict -summary -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$out/$name.yaml" || status=1
done
# The runtime's Deployment (and its sandbox pods) run the image of the Dockerfile's dashboards-runtime target: what it
# holds and its size, checked without a builder.
node scripts/check-runtime-image.mjs || status=1
exit $status

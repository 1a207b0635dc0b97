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
for overlay in k8s/overlays/*/; do
  name="$(basename "$overlay")"
  if ! kustomize build "$overlay" >"$out/$name.yaml"; then
    echo "k8s/overlays/$name does not render" >&2
    status=1
    continue
  fi
  echo "k8s/overlays/$name: $(grep -c '^kind:' "$out/$name.yaml") resources"
  kubeconform -strict -summary -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$out/$name.yaml" || status=1
done
# Jobs applied one at a time (an import's workers): each renders and validates on its own
for job in k8s/jobs/*/; do
  name="job-$(basename "$job")"
  if ! kustomize build "$job" >"$out/$name.yaml"; then
    echo "$job does not render" >&2
    status=1
    continue
  fi
  echo "$job: $(grep -c '^kind:' "$out/$name.yaml") resources"
  kubeconform -strict -summary -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$out/$name.yaml" || status=1
done
# The runtime's Deployment (and its sandbox pods) run the image of the Dockerfile's dashboards-runtime target: what it
# holds and its size, checked without a builder.
node scripts/check-runtime-image.mjs || status=1
exit $status

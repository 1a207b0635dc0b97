#!/usr/bin/env bash
# The policy checks CI runs: formatting, strict compilation, the Rego tests, and that the committed wasm bundle
# is what the sources compile to today.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
cd "$here/.."
opa fmt --list --fail policies || { echo "policies are not formatted: run opa fmt -w policies" >&2; exit 1; }
opa check --strict --ignore build --ignore cases.json policies
opa test --fail-on-empty --ignore build policies
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
bash "$here/build-policies.sh" "$fresh" >/dev/null
if ! cmp -s "$fresh/policy.wasm" policies/build/policy.wasm || ! cmp -s "$fresh/data.json" policies/build/data.json; then
  echo "policies/build is stale: the Rego or data changed without a rebuild. Run \`svc policies build\` (npm run policies:build) and commit policies/build." >&2
  exit 1
fi
echo "policies/build is up to date"

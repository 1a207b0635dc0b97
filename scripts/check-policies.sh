#!/usr/bin/env bash
# The policy checks CI runs: formatting, strict compilation, the Rego tests over the case tables, Regal's lint
# (configured in .regal/config.yaml), and that the committed wasm bundle in policies/build is exactly what the
# sources compile to today.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
cd "$here/.."
command -v opa >/dev/null || { echo "opa is not installed: run scripts/install-opa.sh" >&2; exit 1; }
unformatted="$(opa fmt --list policies)"
if [ -n "$unformatted" ]; then
  echo "policies are not formatted: $(echo $unformatted) -- run \`opa fmt -w policies\`" >&2
  exit 1
fi
opa check --strict policies
opa test --fail-on-empty policies
bash "$here/install-regal.sh"
regal lint policies/
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
bash "$here/build-policies.sh" "$fresh" >/dev/null
for f in policy.wasm data.json; do
  if ! cmp -s "$fresh/$f" "policies/build/$f"; then
    echo "policies/build is stale: run \`svc policies build\` (npm run policies:build) and commit the result" >&2
    exit 1
  fi
done
echo "policies/build is up to date"

#!/usr/bin/env bash
# Compiles policies/ to WebAssembly: policies/build/policy.wasm and data.json (committed, so that `npm start`
# needs no OPA). Case tables and tests stay out of the bundle. `svc policies build` runs this.
# Usage: build-policies.sh [output-dir]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
root="$(cd "$here/.." && pwd)"
out="${1:-$root/policies/build}"
command -v opa >/dev/null || { echo "opa is not installed: run scripts/install-opa.sh" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root" && opa build -t wasm \
  -e tables/decision -e dashboards/decision -e collections/decision \
  --ignore build --ignore cases.json --ignore '*_test.rego' \
  -o "$work/bundle.tar.gz" policies)
tar -xzf "$work/bundle.tar.gz" -C "$work" /policy.wasm /data.json 2>/dev/null || tar -xzf "$work/bundle.tar.gz" -C "$work"
mkdir -p "$out"
cp "$work/policy.wasm" "$out/policy.wasm"
node -e 'const fs=require("fs");const d=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));fs.writeFileSync(process.argv[2],JSON.stringify(d,null,1)+"\n")' "$work/data.json" "$out/data.json"
echo "built $out/policy.wasm ($(wc -c < "$out/policy.wasm") bytes) and $out/data.json"

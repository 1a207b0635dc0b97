#!/usr/bin/env bash
# Compiles policies/ to WebAssembly: policies/build/policy.wasm and policies/build/data.json, committed so that
# `npm start` needs no OPA and Node needs no tar reader. The case tables, the Rego tests and the previous build stay
# out of the bundle. Byte-for-byte reproducible with the pinned OPA. `svc policies build` runs this.
# Usage: build-policies.sh [output-dir]     (default: policies/build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
root="$(cd "$here/.." && pwd)"
out="${1:-$root/policies/build}"
command -v opa >/dev/null || { echo "opa is not installed: run scripts/install-opa.sh" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root" && opa build -t wasm \
  -e svc/tables/decision -e svc/dashboards/decision -e svc/collections/decision \
  --ignore build --ignore cases.json --ignore '*_test.rego' \
  -o "$work/bundle.tar.gz" policies)
# The bundle names its members /policy.wasm and /data.json; tar's note about the leading slash is noise, its errors are not.
for member in policy.wasm data.json; do
  tar -xzOf "$work/bundle.tar.gz" "/$member" >"$work/$member" 2>"$work/tar.err" || { cat "$work/tar.err" >&2; exit 1; }
done
mkdir -p "$out"
install -m 644 "$work/policy.wasm" "$out/policy.wasm"
# One stable layout for the data (OPA writes it in one line), so a diff of policies/build reads well.
node -e 'const fs=require("fs");const d=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));fs.writeFileSync(process.argv[2],JSON.stringify(d,null,1)+"\n")' "$work/data.json" "$out/data.json"
chmod 644 "$out/data.json"
echo "built $out/policy.wasm ($(wc -c < "$out/policy.wasm") bytes) and $out/data.json"

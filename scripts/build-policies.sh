#!/usr/bin/env bash
# Compiles policies/ to WebAssembly: policies/build/policy.wasm and policies/build/data.json, committed so that
# `npm start` needs no OPA and Node needs no tar reader. The case tables, the Rego tests and the previous build stay
# out of the bundle. Byte-for-byte reproducible with the pinned OPA. `svc policies build` runs this.
# The entrypoints are the rules annotated `entrypoint: true` (opa build reads the METADATA itself): a decision is
# declared in its Rego only, as policies/svc/<name>/<name>.rego with an annotated `decision` rule in svc.<name>.
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
  --ignore build --ignore cases.json --ignore '*_test.rego' \
  -o "$work/bundle.tar.gz" policies)
# The bundle names its members /policy.wasm and /data.json; tar's note about the leading slash is noise, its errors are not.
for member in policy.wasm data.json .manifest; do
  tar -xzOf "$work/bundle.tar.gz" "/$member" >"$work/$member" 2>"$work/tar.err" || { cat "$work/tar.err" >&2; exit 1; }
done
# Every entrypoint is a decision the services can name: svc/<name>/decision, nothing else.
decisions="$(node -e '
const wasm = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).wasm ?? [];
const odd = wasm.map((w) => w.entrypoint).filter((e) => !/^svc\/[a-z][a-z0-9_]*\/decision$/.test(e));
if (odd.length > 0) {
  console.error(`entrypoint ${odd.join(", ")} is not a decision: annotate only the rule \`decision\` of package svc.<name>`);
  process.exit(1);
}
console.log(wasm.map((w) => w.entrypoint.split("/")[1]).sort().join(", "));
' "$work/.manifest")"
mkdir -p "$out"
install -m 644 "$work/policy.wasm" "$out/policy.wasm"
# One stable layout for the data (OPA writes it in one line), so a diff of policies/build reads well.
node -e 'const fs=require("fs");const d=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));fs.writeFileSync(process.argv[2],JSON.stringify(d,null,1)+"\n")' "$work/data.json" "$out/data.json"
chmod 644 "$out/data.json"
echo "built $out/policy.wasm ($(wc -c < "$out/policy.wasm") bytes) and $out/data.json; decisions: $decisions"

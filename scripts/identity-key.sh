#!/usr/bin/env bash
# The identity provider's signing key on this machine: an RSA key pair under $SVC_RUN/identity/ that the test realm
# imports as its signing key (scripts/start-keycloak.sh) and Trino verifies tokens with (scripts/start-trino.sh), so
# a token Keycloak issues is accepted by Trino with no key of the platform's in between. Made once; prints the folder.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
dir="$SVC_RUN/identity"
mkdir -p "$dir"
exec 8>"$dir/lock"
flock -w 60 8
if [ ! -f "$dir/signing-key.pem" ]; then
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/signing-key.tmp" 2>/dev/null
  openssl pkey -in "$dir/signing-key.tmp" -pubout -out "$dir/signing-key.pub.pem"
  mv "$dir/signing-key.tmp" "$dir/signing-key.pem"
fi
echo "$dir"

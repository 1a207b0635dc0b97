#!/usr/bin/env bash
# Installs Keycloak (the Quarkus distribution, a zip on Maven Central) under $SVC_CACHE/keycloak-<version> for the
# identity chain's integration tests. The download is cached; a rerun is instant. Prints the install folder on stdout.
set -euo pipefail
. "$(dirname "$0")/env.sh"
home="$SVC_CACHE/keycloak-$KEYCLOAK_VERSION"
if [ -f "$home/.complete" ]; then echo "$home"; exit 0; fi
mkdir -p "$SVC_CACHE/downloads"
# Two runs installing at once must not unpack over each other: one waits for the other.
exec 9>"$SVC_CACHE/keycloak.lock"
flock -w 600 9
if [ -f "$home/.complete" ]; then echo "$home"; exit 0; fi
file="$SVC_CACHE/downloads/keycloak-quarkus-dist-$KEYCLOAK_VERSION.zip"
if [ ! -s "$file" ]; then
  log "downloading keycloak $KEYCLOAK_VERSION (first run only)"
  curl -fsSL --retry 3 -o "$file.part" \
    "https://repo1.maven.org/maven2/org/keycloak/keycloak-quarkus-dist/$KEYCLOAK_VERSION/keycloak-quarkus-dist-$KEYCLOAK_VERSION.zip"
  mv "$file.part" "$file"
fi
rm -rf "$home" "$home.part" && mkdir -p "$home.part"
# python3's zipfile rather than unzip: no apt-get here, since this runs in the background beside other installs.
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$file" "$home.part"
chmod +x "$home.part/keycloak-$KEYCLOAK_VERSION"/bin/*.sh
# The zip holds one top-level folder keycloak-<version>.
mv "$home.part/keycloak-$KEYCLOAK_VERSION" "$home" && rmdir "$home.part"
touch "$home/.complete"
log "keycloak $KEYCLOAK_VERSION in $home"
echo "$home"

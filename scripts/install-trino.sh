#!/usr/bin/env bash
# Installs Trino 476 (the newest on Maven Central) for integration tests and benchmarks: trino-server-core plus the
# connector plugins the tests use, unpacked under $SVC_CACHE/trino-476. Downloads are cached; reruns are instant.
set -euo pipefail
. "$(dirname "$0")/env.sh"
TRINO_VERSION=476
home="$SVC_CACHE/trino-$TRINO_VERSION"
maven="https://repo1.maven.org/maven2/io/trino"
[ -f "$home/.complete" ] && exit 0
mkdir -p "$SVC_CACHE/downloads"
fetch() { # artifact type
  local file="$SVC_CACHE/downloads/$1-$TRINO_VERSION.$2"
  [ -s "$file" ] || { log "downloading $1 $TRINO_VERSION"; curl -fsSL --retry 3 -o "$file.part" "$maven/$1/$TRINO_VERSION/$1-$TRINO_VERSION.$2" && mv "$file.part" "$file"; }
  echo "$file"
}
rm -rf "$home" && mkdir -p "$home"
tar -xzf "$(fetch trino-server-core tar.gz)" -C "$home" --strip-components=1
# tpcds and postgresql have no 476 build on Maven Central (tpcds stops at 474, postgresql has none in the 4xx line);
# their catalogs are simply absent, which the explore catalog skips.
for plugin in tpch memory; do
  archive="$(fetch "trino-$plugin" zip)"
  mkdir -p "$home/plugin/$plugin"
  (cd "$home/plugin/$plugin" && python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(".")' "$archive")
  # the zips hold one top-level folder: flatten it into plugin/<name>
  inner=$(find "$home/plugin/$plugin" -mindepth 1 -maxdepth 1 -type d | head -1)
  if [ -n "$inner" ] && [ -z "$(find "$home/plugin/$plugin" -maxdepth 1 -name '*.jar' | head -1)" ]; then
    mv "$inner"/* "$home/plugin/$plugin/" && rmdir "$inner"
  fi
done
touch "$home/.complete"
log "trino $TRINO_VERSION in $home"

#!/usr/bin/env bash
# Installs Trino 476 (the newest on Maven Central) for integration tests and benchmarks: trino-server-core plus the
# connector plugins the tests use, unpacked under $SVC_CACHE/trino-476. Downloads are cached; reruns are instant.
# $home/.complete lists the version and plugins installed: a cache from before a plugin was added gets only that
# plugin, unpacked beside the others, so a server running from the cache keeps every file it has open.
set -euo pipefail
. "$(dirname "$0")/env.sh"
TRINO_VERSION=476
# tpcds and postgresql have no 476 build on Maven Central (tpcds stops at 474, postgresql has none in the 4xx line);
# their catalogs are simply absent, which the explore catalog skips. iceberg is the lake (scripts/start-trino.sh).
PLUGINS=(tpch memory iceberg)
home="$SVC_CACHE/trino-$TRINO_VERSION"
maven="https://repo1.maven.org/maven2/io/trino"
wanted="$TRINO_VERSION ${PLUGINS[*]}"
[ "$(cat "$home/.complete" 2>/dev/null)" = "$wanted" ] && exit 0
mkdir -p "$SVC_CACHE/downloads"
# Two runs installing at once take turns.
exec 9>"$home.lock"
flock -w 900 9
[ "$(cat "$home/.complete" 2>/dev/null)" = "$wanted" ] && exit 0
fetch() { # artifact type
  local file="$SVC_CACHE/downloads/$1-$TRINO_VERSION.$2"
  [ -s "$file" ] || { log "downloading $1 $TRINO_VERSION"; curl -fsSL --retry 3 -o "$file.part" "$maven/$1/$TRINO_VERSION/$1-$TRINO_VERSION.$2" && mv "$file.part" "$file"; }
  echo "$file"
}
# The server core is unpacked once: any .complete (an earlier plugin list included) means it is whole.
if [ ! -f "$home/.complete" ]; then
  rm -rf "$home" && mkdir -p "$home"
  tar -xzf "$(fetch trino-server-core tar.gz)" -C "$home" --strip-components=1
fi
for plugin in "${PLUGINS[@]}"; do
  [ -d "$home/plugin/$plugin" ] && continue
  archive="$(fetch "trino-$plugin" zip)"
  # unpacked aside and moved in whole, so a half-unpacked plugin is never taken for an installed one
  part="$home/plugin/.$plugin.part"
  rm -rf "$part" && mkdir -p "$part"
  (cd "$part" && python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(".")' "$archive")
  # the zips hold one top-level folder: that folder is the plugin
  inner=$(find "$part" -mindepth 1 -maxdepth 1 -type d | head -1)
  if [ -n "$inner" ] && [ -z "$(find "$part" -maxdepth 1 -name '*.jar' | head -1)" ]; then
    mv "$inner" "$home/plugin/$plugin" && rmdir "$part"
  else
    mv "$part" "$home/plugin/$plugin"
  fi
  log "trino plugin $plugin $TRINO_VERSION installed"
done
echo "$wanted" >"$home/.complete"
log "trino $TRINO_VERSION in $home ($wanted)"

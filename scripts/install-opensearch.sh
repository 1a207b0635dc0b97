#!/usr/bin/env bash
# Installs OpenSearch 2.19.1 for the retrieval service's search backend (issue 35), unpacked under
# $SVC_CACHE/opensearch-2.19.1, from Maven Central only. Downloads are cached; reruns are instant.
#
# Maven Central serves OpenSearch as its integ-test zip: the server with the transport module and nothing else.
# What the search backend needs beside it, each at exactly the server's version:
# - opensearch-security 2.19.1.0 (zip, a plugin): TLS and a user for svc;
# - analysis-common (a module, served as a jar with no descriptor): the english and french analysers and the
#   stemmer filters; the module's folder gets the descriptor the distribution would give it;
# - lang-painless (a module, a jar and its six dependencies) and opensearch-knn 2.19.1.0 (zip, a plugin that extends
#   lang-painless): k-NN on Lucene's HNSW. The plugin zip holds no native library, so only its Lucene engine can work.
# 2.19.1 because it is the one version for which Maven Central serves the k-NN plugin, the security plugin and the
# server together (k-NN 2.19.1.0 and 3.4/3.5 only; security 2.19.1.0, 2.19.3.0, 2.19.4.0, 3.4.0.0). It runs on Java 17.
set -euo pipefail
. "$(dirname "$0")/env.sh"
VERSION=2.19.1
home="$SVC_CACHE/opensearch-$VERSION"
wanted="$VERSION security analysis-common lang-painless knn"
[ "$(cat "$home/.complete" 2>/dev/null)" = "$wanted" ] && exit 0
mkdir -p "$SVC_CACHE/downloads"
exec 9>"$home.lock"
flock -w 900 9
[ "$(cat "$home/.complete" 2>/dev/null)" = "$wanted" ] && exit 0
maven="https://repo1.maven.org/maven2"
fetch() { # path-under-maven
  local file="$SVC_CACHE/downloads/$(basename "$1")"
  [ -s "$file" ] || { log "downloading $(basename "$1")"; curl -fsSL --retry 3 -o "$file.part" "$maven/$1" && mv "$file.part" "$file"; }
  echo "$file"
}
unzip_to() { python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"; }
# A module folder from a jar and its dependencies, with the descriptor its build would write.
module() { # name classname extended-plugins jar-paths...
  local name="$1" classname="$2" extended="$3" dir="$part/modules/$1"
  shift 3
  mkdir -p "$dir"
  for jar in "$@"; do cp "$(fetch "$jar")" "$dir/"; done
  cat >"$dir/plugin-descriptor.properties" <<PROPS
description=$name module (assembled by scripts/install-opensearch.sh)
version=$VERSION
name=$name
classname=$classname
java.version=11
opensearch.version=$VERSION
extended.plugins=$extended
has.native.controller=false
PROPS
}

part="$home.part"
rm -rf "$part" "$home"
mkdir -p "$part"
unzip_to "$(fetch "org/opensearch/distribution/integ-test-zip/opensearch/$VERSION/opensearch-$VERSION.zip")" "$part.unzip"
mv "$part.unzip/opensearch-$VERSION"/* "$part/" && rm -rf "$part.unzip"
chmod +x "$part"/bin/*

module analysis-common org.opensearch.analysis.common.CommonAnalysisPlugin lang-painless \
  "org/opensearch/plugin/analysis-common/$VERSION/analysis-common-$VERSION.jar"
module lang-painless org.opensearch.painless.PainlessPlugin "" \
  "org/opensearch/plugin/lang-painless/$VERSION/lang-painless-$VERSION.jar" \
  "org/opensearch/plugin/opensearch-scripting-painless-spi/$VERSION/opensearch-scripting-painless-spi-$VERSION.jar" \
  org/antlr/antlr4-runtime/4.13.1/antlr4-runtime-4.13.1.jar \
  org/ow2/asm/asm/9.7/asm-9.7.jar org/ow2/asm/asm-util/9.7/asm-util-9.7.jar org/ow2/asm/asm-tree/9.7/asm-tree-9.7.jar \
  org/ow2/asm/asm-commons/9.7/asm-commons-9.7.jar org/ow2/asm/asm-analysis/9.7/asm-analysis-9.7.jar
# Painless compiles scripts to classes at run time: its own class loader, under the security manager of 2.x.
cat >"$part/modules/lang-painless/plugin-security.policy" <<'POLICY'
grant {
  permission java.lang.RuntimePermission "createClassLoader";
  permission java.lang.RuntimePermission "getClassLoader";
};
POLICY

for plugin in opensearch-security opensearch-knn; do
  unzip_to "$(fetch "org/opensearch/plugin/$plugin/$VERSION.0/$plugin-$VERSION.0.zip")" "$part/plugins/$plugin"
done
chmod +x "$part"/plugins/opensearch-security/tools/*.sh
mv "$part" "$home"
echo "$wanted" >"$home/.complete"
log "opensearch $VERSION in $home ($wanted)"

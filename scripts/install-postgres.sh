#!/usr/bin/env bash
# Installs PostgreSQL from Debian's packages and builds pgvector from Debian trixie's source package
# (bookworm ships no pgvector binary). Idempotent; the source is cached in $SVC_CACHE.
set -euo pipefail
. "$(dirname "$0")/env.sh"
apt_install "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" build-essential dpkg-dev
ext_dir="$(/usr/lib/postgresql/$PG_MAJOR/bin/pg_config --sharedir)/extension"
if [ -f "$ext_dir/vector--$PGVECTOR_VERSION.sql" ]; then exit 0; fi

src="$SVC_CACHE/pgvector-$PGVECTOR_VERSION"
if [ ! -f "$src/Makefile" ]; then
  tarball=$(ls "$SVC_CACHE"/pgvector_"$PGVECTOR_VERSION".orig.tar.* 2>/dev/null | head -1 || true)
  if [ -z "$tarball" ]; then
    list=/etc/apt/sources.list.d/svc-trixie-src.list
    if [ ! -f "$list" ]; then
      echo "deb-src http://deb.debian.org/debian trixie main" > "$list"
      unset SVC_APT_UPDATED
    fi
    apt_ready
    (cd "$SVC_CACHE" && apt-get source --download-only -qq pgvector >/dev/null)
    tarball=$(ls "$SVC_CACHE"/pgvector_"$PGVECTOR_VERSION".orig.tar.* | head -1)
  fi
  mkdir -p "$src" && tar -xf "$tarball" -C "$src" --strip-components=1
fi
log "building pgvector $PGVECTOR_VERSION"
make -s -C "$src" PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" OPTFLAGS="" >/dev/null
make -s -C "$src" PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" install >/dev/null

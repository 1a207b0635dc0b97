# Shared settings for the scripts that install and start real servers on loopback.
# Everything downloaded or built is cached under $SVC_CACHE so a second run is fast.
SVC_CACHE="${SVC_CACHE:-$HOME/.cache/svc}"
SVC_BIN="$SVC_CACHE/bin"
SVC_RUN="${SVC_RUN:-$SVC_CACHE/run}"
OPA_VERSION="v1.22.2"
PGVECTOR_VERSION="0.8.0"
PG_MAJOR=15
KEYCLOAK_VERSION="26.7.3"
OAUTH2_PROXY_VERSION="v7.15.4"
# The Node releases the unit suite also runs on (the npm registry's `node` package): scripts/install-node.sh.
NODE_VERSIONS="22.23.3 24.21.0"
export GOMODCACHE="$SVC_CACHE/go/mod" GOCACHE="$SVC_CACHE/go/build" GOFLAGS="-modcacherw"
mkdir -p "$SVC_BIN" "$SVC_RUN"
export PATH="$SVC_BIN:$PATH"

log() { echo "[svc-scripts] $*" >&2; }

# apt-get update at most once per run of a script chain.
apt_ready() {
  if [ -z "${SVC_APT_UPDATED:-}" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    export SVC_APT_UPDATED=1
  fi
}

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  apt_ready
  log "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

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

# A virtual environment under $SVC_CACHE/<name> holding exactly the pinned packages, built once: a second call with
# the same pins is a no-op, and two runs building at once take turns (a half-built venv is never shared).
# Usage: python_venv NAME PIN... ; sets $venv to its folder. Pip's cache is under $SVC_CACHE.
python_venv() {
  local name="$1"
  shift
  venv="$SVC_CACHE/$name"
  local stamp="$venv/.svc-pins" wanted
  wanted="$(printf '%s\n' "$@")"
  [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ] && return 0
  mkdir -p "$SVC_CACHE"
  exec 9>"$SVC_CACHE/$name.lock"
  flock -w 900 9
  if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
    flock -u 9
    return 0
  fi
  local python=python3
  if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    # Debian splits venv and ensurepip out of python3.
    apt_install python3 python3-venv
    python=/usr/bin/python3
  fi
  rm -rf "$venv"
  log "creating $venv with $($python --version 2>&1)"
  "$python" -m venv "$venv"
  log "pip install $* (first run only)"
  PIP_CACHE_DIR="$SVC_CACHE/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet "$@" >&2
  echo "$wanted" >"$stamp"
  flock -u 9
}

#!/usr/bin/env bash
# Debian's Chromium for the browser tests (driven by playwright-core; no browser download of its own).
set -euo pipefail
. "$(dirname "$0")/env.sh"
apt_install chromium

#!/usr/bin/env bash
# Installs Schemathesis from PyPI in a virtual environment under $SVC_CACHE, for the API fuzzing suite
# (tests/integration/api-fuzz.test.ts). Prints the path of its `st` command on stdout. Pinned; a no-op once the
# pinned version is installed (python_venv in env.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
python_venv schemathesis-venv schemathesis==4.32.5
echo "$venv/bin/st"

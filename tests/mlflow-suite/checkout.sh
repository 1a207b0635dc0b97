#!/usr/bin/env bash
# Writes MLflow's test tree (tests/ and pyproject.toml, where pytest's settings live) at a ref out of a clone of
# MLflow's repository, for MLFLOW_TESTS_DIR. The files are MLflow's: never committed here, and not in MLflow's PyPI
# distribution. Usage: checkout.sh <clone or git dir> [ref, default: the tag of the pinned client, else HEAD] [dest]
# Prints the folder to give as MLFLOW_TESTS_DIR.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../../scripts/env.sh"
repo="${1:?usage: checkout.sh <MLflow clone or git dir> [ref] [dest]}"
git_dir="$repo"
[ -d "$repo/.git" ] && git_dir="$repo/.git"
ref="${2:-}"
if [ -z "$ref" ]; then
  # The tag matching the client that scripts/install-mlflow.sh pins, when the clone has it.
  ref="$(git --git-dir="$git_dir" rev-parse -q --verify 'refs/tags/v3.17.2^{commit}' >/dev/null && echo v3.17.2 || echo HEAD)"
fi
commit="$(git --git-dir="$git_dir" rev-parse "$ref^{commit}")"
dest="${3:-$SVC_CACHE/mlflow-tests/${commit:0:12}}"
if [ ! -f "$dest/tests/tracking/test_rest_tracking.py" ]; then
  mkdir -p "$dest"
  git --git-dir="$git_dir" archive "$commit" tests pyproject.toml | tar -x -C "$dest"
  echo "$ref $commit" >"$dest/.svc-ref"
fi
log "MLflow tests at $ref ($commit) in $dest"
echo "$dest"

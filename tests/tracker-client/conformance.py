"""Conformance of a tracking server with the official MLflow 3.x Python client.

Run with the venv of scripts/install-mlflow.sh against MLFLOW_TRACKING_URI:
    MLFLOW_TRACKING_URI=http://127.0.0.1:15000 $SVC_CACHE/mlflow-venv/bin/python tests/tracker-client/conformance.py
Every call the issue lists is made through the client, then read back. Each check prints PASS/FAIL with a reason;
the last lines are a JSON summary and 'N passed, N failed'; the exit code is 1 on any failure. Names carry a random
suffix, so the suite can run again on the same server. TRACKER_SVC_CHECKS=1 adds the checks only svc answers (the
neutral /api/2.0/tracker prefix).

The checks live in conformance_<area>.py; they share only the fixtures of conformance_fixtures.py, never each
other's results, so each runs and is reported on its own whatever failed before it.
"""

import os

import conformance_artifacts
import conformance_autolog
import conformance_registry
import conformance_runs
import conformance_search
import conformance_tracing
from conformance_fixtures import suite

checks = (
    conformance_runs.CHECKS
    + conformance_search.CHECKS
    + conformance_artifacts.CHECKS
    + conformance_autolog.CHECKS
    + conformance_registry.CHECKS
    + conformance_tracing.CHECKS
)
if os.environ.get("TRACKER_SVC_CHECKS") == "1":
    checks += conformance_runs.SVC_CHECKS

for fn in checks:
    suite.check(fn.__name__, fn)
suite.finish()

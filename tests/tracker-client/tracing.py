"""The tracing checks of the conformance suite on their own (conformance_tracing.py), for
tests/integration/tracker-tracing.test.ts:
    MLFLOW_TRACKING_URI=http://127.0.0.1:15000 $SVC_CACHE/mlflow-venv/bin/python tests/tracker-client/tracing.py
Same output as conformance.py: PASS/FAIL per check, a JSON summary, then 'N passed, N failed'."""

import conformance_tracing
from conformance_fixtures import suite

for fn in conformance_tracing.CHECKS:
    suite.check(fn.__name__, fn)
suite.finish()

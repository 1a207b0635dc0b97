"""Prints one trace as mlflow.get_trace returns it, as JSON: its info and every span (ids in hex, times in
nanoseconds, attributes decoded, events, status). For tests that export spans some other way and read them back
through the official client:
    MLFLOW_TRACKING_URI=... $SVC_CACHE/mlflow-venv/bin/python tests/tracker-client/read_trace.py tr-<hex>"""

import json
import os
import sys

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
import mlflow

trace = mlflow.get_trace(sys.argv[1])
print(
    json.dumps(
        {
            "trace_id": trace.info.trace_id,
            "experiment_id": trace.info.experiment_id,
            "state": str(trace.info.state.value if hasattr(trace.info.state, "value") else trace.info.state),
            "tags": trace.info.tags,
            "spans": [
                {
                    "name": s.name,
                    "span_id": s.span_id,
                    "parent_id": s.parent_id,
                    "start_time_ns": str(s.start_time_ns),
                    "end_time_ns": str(s.end_time_ns),
                    "attributes": {k: v for k, v in s.attributes.items() if k != "mlflow.traceRequestId"},
                    "events": [{"name": e.name, "timestamp": str(e.timestamp), "attributes": e.attributes} for e in s.events],
                    "status": {"code": s.status.status_code.value, "description": s.status.description},
                }
                for s in trace.data.spans
            ],
        }
    )
)

"""The benchmark's search through the official client: times MlflowClient.search_runs ordered by a metric (top 100)
over the benchmark's experiment, and returns the top 10 run names so bench/tracker/index.ts can check that svc and
MLflow answer alike. Prints one JSON line: {"p50": ms, "p99": ms, "top": [...]}.
Usage: MLFLOW_TRACKING_URI=... python bench/tracker/client_search.py <experiment_id> [iterations]"""

import json
import sys
import time

from mlflow import MlflowClient

experiment_id = sys.argv[1]
iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 30
client = MlflowClient()
times = []
top = []
for i in range(iterations + 3):
    t0 = time.perf_counter()
    runs = client.search_runs([experiment_id], order_by=["metrics.acc DESC"], max_results=100)
    if i >= 3:  # the first calls warm the client's imports and connections
        times.append((time.perf_counter() - t0) * 1000)
    top = [r.info.run_name for r in runs[:10]]
    assert len(runs) > 0, "search_runs returned no run"
times.sort()
print(json.dumps({"p50": times[len(times) // 2], "p99": times[min(len(times) - 1, int(len(times) * 0.99))], "top": top}))

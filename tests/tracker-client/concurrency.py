"""Concurrent writers lose nothing: 50 runs logging batches at once through the official MLflow client.

    MLFLOW_TRACKING_URI=http://... $SVC_CACHE/mlflow-venv/bin/python tests/tracker-client/concurrency.py
10 processes x 5 threads = 50 writers released together. Each creates its own run and logs BATCHES batches (metrics
over steps, new params, a tag overwritten every batch and a tag per batch) plus one batch into a run all writers share.
Then everything is read back: every param and tag with its value, every metric's full history, the latest value of
each metric (the highest step), and the runs as search_runs sees them. PASS/FAIL per aspect, a JSON summary, exit 1
on any loss.
"""

import multiprocessing as mp
import os
import threading
import time

os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
# The client's usage telemetry would call out of this machine, and its session id is not thread-safe (a KeyError
# under 50 writers in one interpreter).
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

PROCESSES, THREADS, BATCHES, STEPS, KEYS, PARAMS_PER_BATCH = 10, 5, 10, 10, 3, 5
WRITERS = PROCESSES * THREADS


def value_of(writer, key, step):
    return float(writer * 100_000 + key * 10_000 + step)


def writer_plan(writer):
    """What writer `writer` logs, batch by batch: (metrics as (key, value, timestamp, step), params, tags)."""
    base = 1_700_000_000_000
    batches = []
    for b in range(BATCHES):
        metrics = [
            (f"m{k}", value_of(writer, k, b * STEPS + s), base + b * STEPS + s, b * STEPS + s)
            for k in range(KEYS)
            for s in range(STEPS)
        ]
        params = {f"p{b}_{j}": f"w{writer}-b{b}-{j}" for j in range(PARAMS_PER_BATCH)}
        tags = {"last_batch": str(b), f"t{b}": f"w{writer}-{b}"}
        batches.append((metrics, params, tags))
    return batches


def _write(writer, experiment_id, shared_run, start_at, out):
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param, RunTag

    client = MlflowClient()
    while time.time() < start_at:
        time.sleep(0.005)
    try:
        run = client.create_run(experiment_id, run_name=f"writer-{writer:02d}", tags={"writer": str(writer)})
        run_id = run.info.run_id
        for metrics, params, tags in writer_plan(writer):
            client.log_batch(
                run_id,
                metrics=[Metric(k, v, ts, st) for k, v, ts, st in metrics],
                params=[Param(k, v) for k, v in params.items()],
                tags=[RunTag(k, v) for k, v in tags.items()],
            )
        # Every writer into one run: own param and tag keys, one shared metric at its own steps.
        client.log_batch(
            shared_run,
            metrics=[Metric("shared", float(writer * BATCHES + b), 1_700_000_000_000 + writer, writer * BATCHES + b) for b in range(BATCHES)],
            params=[Param(f"w{writer}", str(writer))],
            tags=[RunTag(f"w{writer}", str(writer)), RunTag("last_writer", "any")],
        )
        client.set_terminated(run_id)
        out.append((writer, run_id, None))
    except Exception as e:  # noqa: BLE001 - reported by the parent
        out.append((writer, None, f"{type(e).__name__}: {e}"))


def _process(first_writer, experiment_id, shared_run, start_at, queue):
    out = []
    threads = [
        threading.Thread(target=_write, args=(first_writer + t, experiment_id, shared_run, start_at, out)) for t in range(THREADS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put(out)


def main():
    from mlflow import MlflowClient
    from mlflow.entities import ViewType

    from harness import Suite, expect

    suite = Suite("tracker-concurrency")
    client = MlflowClient()
    S = suite.state

    def setup():
        S["exp"] = client.create_experiment(f"concurrency-{suite.suffix}")
        S["shared"] = client.create_run(S["exp"], run_name="shared").info.run_id

    def write_concurrently():
        exp, shared = suite.needs("exp", "shared")
        ctx = mp.get_context("spawn")  # fresh interpreters: no HTTP connection inherited from this one
        queue = ctx.Queue()
        start_at = time.time() + 8  # after every interpreter has imported mlflow
        procs = [ctx.Process(target=_process, args=(p * THREADS, exp, shared, start_at, queue)) for p in range(PROCESSES)]
        for p in procs:
            p.start()
        results = [r for _ in procs for r in queue.get(timeout=600)]
        for p in procs:
            p.join()
        errors = [f"writer {w}: {err}" for w, _, err in results if err]
        S["runs"] = {w: run_id for w, run_id, err in results if not err}
        assert not errors, f"{len(errors)} writers failed: {'; '.join(errors[:5])}"
        expect(len(S["runs"]), WRITERS, "writers that finished")

    def params_and_tags():
        runs = suite.needs("runs")
        lost = []
        for writer, run_id in runs.items():
            data = client.get_run(run_id).data
            want_params = {k: v for _, params, _ in writer_plan(writer) for k, v in params.items()}
            if data.params != want_params:
                missing = sorted(set(want_params) - set(data.params))
                wrong = sorted(k for k in want_params if k in data.params and data.params[k] != want_params[k])
                lost.append(f"writer {writer}: {len(data.params)}/{len(want_params)} params, missing {missing[:3]}, wrong {wrong[:3]}")
            want_tags = {"writer": str(writer), "last_batch": str(BATCHES - 1), **{f"t{b}": f"w{writer}-{b}" for b in range(BATCHES)}}
            got_tags = {k: v for k, v in data.tags.items() if not k.startswith("mlflow.")}
            if got_tags != want_tags:
                lost.append(f"writer {writer}: tags {got_tags} != {want_tags}")
        assert not lost, f"{len(lost)} runs lost or changed params/tags: {'; '.join(lost[:5])}"

    def metric_histories():
        runs = suite.needs("runs")
        lost, total = [], 0
        for writer, run_id in runs.items():
            for k in range(KEYS):
                want = {(b * STEPS + s, value_of(writer, k, b * STEPS + s)) for b in range(BATCHES) for s in range(STEPS)}
                history = client.get_metric_history(run_id, f"m{k}")
                got = {(m.step, m.value) for m in history}
                total += len(history)
                if got != want or len(history) != len(want):
                    lost.append(f"writer {writer} m{k}: {len(history)}/{len(want)} points, missing steps {sorted(s for s, _ in want - got)[:5]}")
        assert not lost, f"{len(lost)} histories incomplete: {'; '.join(lost[:5])}"
        expect(total, WRITERS * KEYS * BATCHES * STEPS, "metric points read back")

    def latest_values():
        runs = suite.needs("runs")
        wrong = []
        last = BATCHES * STEPS - 1
        for writer, run_id in runs.items():
            metrics = client.get_run(run_id).data.metrics
            want = {f"m{k}": value_of(writer, k, last) for k in range(KEYS)}
            if metrics != want:
                wrong.append(f"writer {writer}: {metrics} != {want}")
        assert not wrong, f"{len(wrong)} runs with a wrong latest value: {'; '.join(wrong[:3])}"

    def shared_run():
        shared = suite.needs("shared")
        run = client.get_run(shared)
        expect(run.data.params, {f"w{w}": str(w) for w in range(WRITERS)}, "params of the shared run")
        tags = {k: v for k, v in run.data.tags.items() if k.startswith("w")}
        expect(tags, {f"w{w}": str(w) for w in range(WRITERS)}, "tags of the shared run")
        expect(run.data.tags.get("last_writer"), "any", "tag every writer overwrote")
        history = client.get_metric_history(shared, "shared")
        expect(len(history), WRITERS * BATCHES, "points of the shared metric")
        expect(sorted(m.step for m in history), list(range(WRITERS * BATCHES)), "steps of the shared metric")
        top = WRITERS * BATCHES - 1
        expect(run.data.metrics.get("shared"), float(top), "latest value of the shared metric (highest step)")

    def searched():
        exp, runs = suite.needs("exp", "runs")
        found = client.search_runs([exp], filter_string="tags.writer != ''", order_by=["metrics.m0 DESC"], max_results=1000)
        expect(len(found), WRITERS, "runs found by search_runs")
        last = BATCHES * STEPS - 1
        expect([r.data.metrics["m0"] for r in found], [value_of(w, 0, last) for w in range(WRITERS - 1, -1, -1)], "order by latest m0")
        expect({r.info.status for r in found}, {"FINISHED"}, "statuses")
        expect(len(client.search_runs([exp], run_view_type=ViewType.ALL, max_results=1000)), WRITERS + 1, "all runs")

    for fn in (setup, write_concurrently, params_and_tags, metric_histories, latest_values, shared_run, searched):
        suite.check(fn.__name__, fn)
    suite.finish()


if __name__ == "__main__":
    if not os.environ.get("MLFLOW_TRACKING_URI"):
        raise SystemExit("MLFLOW_TRACKING_URI must name the server under test")
    main()

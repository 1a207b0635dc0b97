"""Conformance checks: the server, experiments, runs and their params, metrics and tags, values at the limits, the
error wire."""

import math
import sys
import time

import mlflow
import requests
from mlflow.entities import Metric, Param, RunTag, ViewType

from conformance_fixtures import EXPERIMENT_NAME, client, experiment, logged_run, sfx, uri
from harness import expect, raises


def health():
    r = requests.get(f"{uri}/health", timeout=10)
    expect(r.status_code, 200, "GET /health status")


def default_experiment():
    exp = client.get_experiment("0")
    expect(exp.name, "Default", "experiment 0's name")


def missing_things():
    assert client.get_experiment_by_name(f"no-such-{sfx}") is None, "get_experiment_by_name of a missing name"
    raises("RESOURCE_DOES_NOT_EXIST", lambda: client.get_run("0" * 32), "get_run of a missing run")
    raises("RESOURCE_DOES_NOT_EXIST", lambda: client.get_experiment("987654321"), "get_experiment of a missing id")


def set_experiment():
    name = f"conf-set-{sfx}"
    exp = mlflow.set_experiment(name)
    assert exp.experiment_id, "set_experiment returned no id"
    again = mlflow.set_experiment(name)
    expect(again.experiment_id, exp.experiment_id, "set_experiment twice: the same experiment")
    expect(client.get_experiment_by_name(name).experiment_id, exp.experiment_id, "get_experiment_by_name id")
    expect(client.get_experiment(exp.experiment_id).lifecycle_stage, "active", "lifecycle_stage")
    raises("RESOURCE_ALREADY_EXISTS", lambda: client.create_experiment(name), "create_experiment of an existing name")
    client.set_experiment_tag(exp.experiment_id, "team", f"t-{sfx}")
    expect(client.get_experiment(exp.experiment_id).tags.get("team"), f"t-{sfx}", "experiment tag read back")


def log_run():
    # the logging itself is the fixture (it asserts the open run's status); this check reports it on its own
    assert logged_run(), "no run id"


def read_run():
    run_id = logged_run()
    run = client.get_run(run_id)
    expect(run.info.status, "FINISHED", "status after end_run")
    assert run.info.end_time and run.info.end_time >= run.info.start_time, f"end_time {run.info.end_time} after start"
    expect(run.info.run_name, f"main-{sfx}", "run_name")
    expect(run.info.experiment_id, experiment(), "experiment_id")
    expect(run.info.lifecycle_stage, "active", "lifecycle_stage")
    expect(run.data.params, {"alpha": "0.5", "layers": "3", "optimizer": "adam", "note": "a b/c=d"}, "params")
    expect(run.data.metrics["loss"], 0.2, "latest loss (step 4)")
    expect(run.data.metrics["acc"], 0.95, "latest acc")
    expect(run.data.metrics["f1"], 0.85, "latest f1")
    assert math.isnan(run.data.metrics["nan_metric"]), f"NaN metric read back as {run.data.metrics['nan_metric']!r}"
    # MLflow's SQL store keeps infinities as the largest finite doubles; both readings are the client's contract.
    assert run.data.metrics["pos_inf"] >= sys.float_info.max, f"+inf metric read back as {run.data.metrics['pos_inf']!r}"
    assert run.data.metrics["neg_inf"] <= -sys.float_info.max, f"-inf metric read back as {run.data.metrics['neg_inf']!r}"
    expect(run.data.tags.get("stage"), "second", "overwritten tag")
    expect(run.data.tags.get("owner"), "conformance", "set_tags tag")
    expect(run.data.tags.get("empty"), "", "empty tag value")
    expect(run.data.tags.get("mlflow.runName"), f"main-{sfx}", "mlflow.runName tag")


def metric_history():
    run_id = logged_run()
    history = client.get_metric_history(run_id, "loss")
    expect(sorted((m.step, m.value) for m in history), [(s, 1.0 / (s + 1)) for s in range(5)], "loss history")
    acc = client.get_metric_history(run_id, "acc")
    expect(sorted((m.step, m.value) for m in acc), [(0, 0.9), (1, 0.95)], "acc history")
    assert all(m.timestamp > 0 for m in history), "every point has a timestamp"
    expect(client.get_metric_history(run_id, f"absent-{sfx}"), [], "history of a metric never logged")


def params_immutable():
    run_id = client.create_run(experiment(), run_name=f"params-{sfx}").info.run_id
    client.log_param(run_id, "alpha", "0.5")
    client.log_param(run_id, "alpha", "0.5")  # the same value again is accepted
    raises("INVALID_PARAMETER_VALUE", lambda: client.log_param(run_id, "alpha", "0.7"), "changing a param")
    expect(client.get_run(run_id).data.params["alpha"], "0.5", "param after a refused change")


def log_batch_direct():
    run_id = client.create_run(experiment(), run_name=f"batch-{sfx}").info.run_id
    now = int(time.time() * 1000)
    client.log_batch(
        run_id,
        metrics=[Metric("batch_m", float(i), now + i, i) for i in range(20)],
        params=[Param(f"bp{i}", str(i)) for i in range(10)],
        tags=[RunTag("batch_tag", "x")],
    )
    # Repeating the same batch (a client retry) is accepted.
    client.log_batch(run_id, params=[Param(f"bp{i}", str(i)) for i in range(10)])
    run = client.get_run(run_id)
    expect(run.data.metrics["batch_m"], 19.0, "latest batch_m")
    expect({k: v for k, v in run.data.params.items() if k.startswith("bp")}, {f"bp{i}": str(i) for i in range(10)}, "batch params")
    expect(run.data.tags.get("batch_tag"), "x", "batch tag")
    expect(len(client.get_metric_history(run_id, "batch_m")), 20, "batch_m history length")


def resume_run():
    mlflow.set_experiment(experiment_id=experiment())
    with mlflow.start_run(run_name=f"resumed-{sfx}") as first:
        for step in range(5):
            mlflow.log_metric("loss", 1.0 / (step + 1), step=step)
    run_id = first.info.run_id
    with mlflow.start_run(run_id=run_id) as run:
        expect(run.info.run_id, run_id, "resumed run id")
        expect(client.get_run(run_id).info.status, "RUNNING", "status while resumed")
        mlflow.log_metric("loss", 0.1, step=5)
        mlflow.log_param("resumed", "yes")
    run = client.get_run(run_id)
    expect(run.info.status, "FINISHED", "status after the resumed run ends")
    expect(run.data.metrics["loss"], 0.1, "latest loss after resume")
    expect(run.data.params.get("resumed"), "yes", "param logged while resumed")
    expect(len(client.get_metric_history(run_id, "loss")), 6, "loss history after resume")


def failed_run_status():
    run = client.create_run(experiment(), run_name=f"failing-{sfx}")
    client.set_terminated(run.info.run_id, status="FAILED")
    expect(client.get_run(run.info.run_id).info.status, "FAILED", "status set by set_terminated")
    client.update_run(run.info.run_id, name=f"renamed-{sfx}")
    expect(client.get_run(run.info.run_id).info.run_name, f"renamed-{sfx}", "run_name after update_run")


def search_experiments():
    # experiments of its own, so that no other check's experiment matches its filters
    first_name, second_name = f"conf-find1-{sfx}", f"conf-find2-{sfx}"
    first_id = client.create_experiment(first_name)
    client.create_experiment(second_name)
    client.set_experiment_tag(first_id, "team", f"se-{sfx}")
    pattern = f"name LIKE 'conf-find%{sfx}'"
    one = client.search_experiments(filter_string=f"name = '{first_name}'")
    expect([e.name for e in one], [first_name], "search_experiments by name")
    mine = client.search_experiments(filter_string=pattern, order_by=["name ASC"])
    expect([e.name for e in mine], [first_name, second_name], "search_experiments LIKE, ordered by name")
    tagged = client.search_experiments(filter_string=f"tags.team = 'se-{sfx}'")
    expect([e.name for e in tagged], [first_name], "search_experiments by tag")
    page1 = client.search_experiments(filter_string=pattern, order_by=["name DESC"], max_results=1)
    expect([e.name for e in page1], [second_name], "first page of one")
    assert page1.token, "a page_token for the second page"
    page2 = client.search_experiments(filter_string=pattern, order_by=["name DESC"], max_results=1, page_token=page1.token)
    expect([e.name for e in page2], [first_name], "second page of one")
    names = {e.name for e in mlflow.search_experiments()}
    assert "Default" in names and first_name in names, "mlflow.search_experiments lists Default and the new experiment"


def delete_experiment():
    name = f"conf-gone-{sfx}"
    exp = client.create_experiment(name)
    client.delete_experiment(exp)
    expect(client.get_experiment(exp).lifecycle_stage, "deleted", "experiment lifecycle_stage after delete")
    deleted = client.search_experiments(view_type=ViewType.DELETED_ONLY, filter_string=f"name = '{name}'")
    expect([e.name for e in deleted], [name], "DELETED_ONLY experiments")
    client.restore_experiment(exp)
    expect(client.get_experiment(exp).lifecycle_stage, "active", "experiment after restore")
    client.rename_experiment(exp, f"{name}-renamed")
    expect(client.get_experiment(exp).name, f"{name}-renamed", "experiment renamed")


def error_wire():
    r = requests.get(f"{uri}/api/2.0/mlflow/runs/get", params={"run_id": "0" * 32}, timeout=10)
    expect(r.status_code, 404, "runs/get of a missing run: status")
    body = r.json()
    expect(body.get("error_code"), "RESOURCE_DOES_NOT_EXIST", "runs/get of a missing run: error_code")
    assert body.get("message"), "error body has a message"
    r = requests.post(f"{uri}/api/2.0/mlflow/runs/search", json={"experiment_ids": ["0"], "filter": "metrics.x >>> 1"}, timeout=10)
    expect((r.status_code, r.json().get("error_code")), (400, "INVALID_PARAMETER_VALUE"), "runs/search with a bad filter")


def values_at_limits():
    run_id = client.create_run(experiment(), run_name=f"limits-{sfx}").info.run_id
    long_param, long_tag = "p" * 6000, "t" * 8000
    client.log_param(run_id, "long", long_param)
    client.set_tag(run_id, "long", long_tag)
    client.log_param(run_id, "unicode", "значение ✓ 値")
    client.log_metric(run_id, "train/loss rate", 1.5)
    data = client.get_run(run_id).data
    expect(len(data.params["long"]), 6000, "a 6000-character param")
    expect(len(data.tags["long"]), 8000, "an 8000-character tag")
    expect(data.params["unicode"], "значение ✓ 値", "a unicode param value")
    expect(data.metrics["train/loss rate"], 1.5, "a metric key with a slash and a space")
    # Over the limit, MLflow's server keeps the first 6000 (param) or 8000 (tag) characters (the client truncates too).
    api = f"{uri}/api/2.0/mlflow"
    r = requests.post(f"{api}/runs/log-parameter", json={"run_id": run_id, "key": "too_long", "value": "x" * 6001}, timeout=10)
    expect(r.status_code, 200, "POST runs/log-parameter with a 6001-character value")
    r = requests.post(f"{api}/runs/set-tag", json={"run_id": run_id, "key": "too_long", "value": "x" * 8001}, timeout=10)
    expect(r.status_code, 200, "POST runs/set-tag with an 8001-character value")
    data = client.get_run(run_id).data
    expect((len(data.params["too_long"]), len(data.tags["too_long"])), (6000, 8000), "over-long values kept truncated")
    raises("INVALID_PARAMETER_VALUE", lambda: client.log_metric(run_id, "../escape", 1.0), "a metric key with '..'")


def large_batches():
    exp = experiment()
    run_id = client.create_run(exp, run_name=f"large-batch-{sfx}").info.run_id
    now = int(time.time() * 1000)
    # More than one request's worth: the client splits into batches of 1000 metrics and 100 params and tags.
    client.log_batch(
        run_id,
        metrics=[Metric(f"k{i % 50}", float(i), now, i // 50) for i in range(2500)],
        params=[Param(f"p{i}", str(i)) for i in range(250)],
        tags=[RunTag(f"t{i}", str(i)) for i in range(150)],
    )
    data = client.get_run(run_id).data
    expect(len(data.params), 250, "params from a split batch")
    expect(len([k for k in data.tags if k.startswith("t")]), 150, "tags from a split batch")
    expect(data.metrics, {f"k{k}": float(49 * 50 + k) for k in range(50)}, "latest of 50 keys x 50 steps")
    expect(len(client.get_metric_history(run_id, "k7")), 50, "history of one key")
    mlflow.set_experiment(experiment_id=exp)
    with mlflow.start_run(run_id=run_id):
        mlflow.log_metrics({f"wide{i}": float(i) for i in range(1200)}, step=3)
    expect(len([k for k in client.get_run(run_id).data.metrics if k.startswith("wide")]), 1200, "log_metrics of 1200 keys")


def neutral_prefix():
    experiment()
    r = requests.get(f"{uri}/api/2.0/tracker/experiments/search", params={"max_results": 1000}, timeout=10)
    expect(r.status_code, 200, "GET /api/2.0/tracker/experiments/search")
    assert EXPERIMENT_NAME in [e["name"] for e in r.json().get("experiments", [])], "the experiment under the neutral prefix"
    r = requests.get(f"{uri}/api/2.0/tracker/registered-models/search", timeout=10)
    expect(r.status_code, 200, "GET /api/2.0/tracker/registered-models/search")


CHECKS = [
    health,
    default_experiment,
    missing_things,
    set_experiment,
    log_run,
    read_run,
    metric_history,
    params_immutable,
    log_batch_direct,
    resume_run,
    failed_run_status,
    search_experiments,
    delete_experiment,
    error_wire,
    values_at_limits,
    large_batches,
]
# only svc answers under the neutral /api/2.0/tracker prefix
SVC_CHECKS = [neutral_prefix]

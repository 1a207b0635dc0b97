"""Conformance of a tracking server with the official MLflow 3.x Python client.

Run with the venv of scripts/install-mlflow.sh against MLFLOW_TRACKING_URI:
    MLFLOW_TRACKING_URI=http://127.0.0.1:15000 $SVC_CACHE/mlflow-venv/bin/python tests/tracker-client/conformance.py
Every call the issue lists is made through the client, then read back. Each check prints PASS/FAIL with a reason;
the last lines are a JSON summary and 'N passed, N failed'; the exit code is 1 on any failure. Names carry a random
suffix, so the suite can run again on the same server. TRACKER_SVC_CHECKS=1 adds the checks only svc answers (the
neutral /api/2.0/tracker prefix).
"""

import filecmp
import math
import os
import random
import sys
import tempfile
import time

import numpy as np
import requests

os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # it would call out of this machine
import mlflow
from mlflow import MlflowClient
from mlflow.entities import Metric, Param, RunTag, ViewType

from harness import Suite, expect, raises

uri = os.environ.get("MLFLOW_TRACKING_URI")
if not uri:
    raise SystemExit("MLFLOW_TRACKING_URI must name the server under test")
suite = Suite("tracker-conformance")
sfx = suite.suffix
client = MlflowClient()
S = suite.state


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
    name = f"conf-{sfx}"
    exp = mlflow.set_experiment(name)
    assert exp.experiment_id, "set_experiment returned no id"
    again = mlflow.set_experiment(name)
    expect(again.experiment_id, exp.experiment_id, "set_experiment twice: the same experiment")
    expect(client.get_experiment_by_name(name).experiment_id, exp.experiment_id, "get_experiment_by_name id")
    expect(client.get_experiment(exp.experiment_id).lifecycle_stage, "active", "lifecycle_stage")
    raises("RESOURCE_ALREADY_EXISTS", lambda: client.create_experiment(name), "create_experiment of an existing name")
    client.set_experiment_tag(exp.experiment_id, "team", f"t-{sfx}")
    expect(client.get_experiment(exp.experiment_id).tags.get("team"), f"t-{sfx}", "experiment tag read back")
    S["exp"] = exp.experiment_id
    S["exp_name"] = name


def log_run():
    exp = suite.needs("exp")
    mlflow.set_experiment(experiment_id=exp)
    with mlflow.start_run(run_name=f"main-{sfx}") as run:
        expect(run.info.status, "RUNNING", "status of an open run")
        mlflow.log_param("alpha", 0.5)
        mlflow.log_params({"layers": 3, "optimizer": "adam", "note": "a b/c=d"})
        for step in range(5):
            mlflow.log_metric("loss", 1.0 / (step + 1), step=step)
        mlflow.log_metrics({"acc": 0.9, "f1": 0.8}, step=0)
        mlflow.log_metrics({"acc": 0.95, "f1": 0.85}, step=1)
        mlflow.log_metric("nan_metric", float("nan"))
        mlflow.log_metric("pos_inf", float("inf"))
        mlflow.log_metric("neg_inf", float("-inf"))
        mlflow.set_tag("stage", "first")
        mlflow.set_tag("stage", "second")  # tags are overwritten
        mlflow.set_tags({"owner": "conformance", "empty": ""})
    S["run"] = run.info.run_id


def read_run():
    run_id = suite.needs("run")
    run = client.get_run(run_id)
    expect(run.info.status, "FINISHED", "status after end_run")
    assert run.info.end_time and run.info.end_time >= run.info.start_time, f"end_time {run.info.end_time} after start"
    expect(run.info.run_name, f"main-{sfx}", "run_name")
    expect(run.info.experiment_id, S["exp"], "experiment_id")
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
    run_id = suite.needs("run")
    history = client.get_metric_history(run_id, "loss")
    expect(sorted((m.step, m.value) for m in history), [(s, 1.0 / (s + 1)) for s in range(5)], "loss history")
    acc = client.get_metric_history(run_id, "acc")
    expect(sorted((m.step, m.value) for m in acc), [(0, 0.9), (1, 0.95)], "acc history")
    assert all(m.timestamp > 0 for m in history), "every point has a timestamp"
    expect(client.get_metric_history(run_id, f"absent-{sfx}"), [], "history of a metric never logged")


def params_immutable():
    run_id = suite.needs("run")
    client.log_param(run_id, "alpha", "0.5")  # the same value again is accepted
    raises("INVALID_PARAMETER_VALUE", lambda: client.log_param(run_id, "alpha", "0.7"), "changing a param")
    expect(client.get_run(run_id).data.params["alpha"], "0.5", "param after a refused change")


def log_batch_direct():
    run_id = suite.needs("run")
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
    run_id = suite.needs("run")
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
    exp = suite.needs("exp")
    run = client.create_run(exp, run_name=f"failing-{sfx}")
    client.set_terminated(run.info.run_id, status="FAILED")
    expect(client.get_run(run.info.run_id).info.status, "FAILED", "status set by set_terminated")
    client.update_run(run.info.run_id, name=f"renamed-{sfx}")
    expect(client.get_run(run.info.run_id).info.run_name, f"renamed-{sfx}", "run_name after update_run")


def make_artifact_tree(root):
    rng = random.Random(7)
    os.makedirs(os.path.join(root, "tree", "sub", "deeper"))
    with open(os.path.join(root, "notes.txt"), "w") as f:
        f.write(f"notes for {sfx}\n")
    with open(os.path.join(root, "blob.bin"), "wb") as f:
        f.write(bytes(rng.getrandbits(8) for _ in range(300_000)))
    files = {
        "tree/a.csv": "x,y\n1,2\n",
        "tree/with space.txt": "space in the name\n",
        "tree/sub/b.json": '{"k": 1}',
        "tree/sub/deeper/c.txt": "deep\n",
        "tree/empty.txt": "",
    }
    for rel, text in files.items():
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)


def artifacts():
    exp = suite.needs("exp")
    src = tempfile.mkdtemp()
    make_artifact_tree(src)
    mlflow.set_experiment(experiment_id=exp)
    with mlflow.start_run(run_name=f"artifacts-{sfx}") as run:
        mlflow.log_artifact(os.path.join(src, "notes.txt"))
        mlflow.log_artifact(os.path.join(src, "blob.bin"), artifact_path="bin")
        mlflow.log_artifacts(os.path.join(src, "tree"), artifact_path="tree")
        mlflow.log_text("hello text", "texts/hello.txt")
        mlflow.log_dict({"a": [1, 2]}, "dicts/d.json")
    run_id = run.info.run_id
    S["artifact_run"] = run_id

    top = {f.path: f.is_dir for f in client.list_artifacts(run_id)}
    expect(top, {"notes.txt": False, "bin": True, "tree": True, "texts": True, "dicts": True}, "top-level listing")
    # proto3 JSON leaves a zero file_size out: the client reads it as None.
    tree = {f.path: (f.is_dir, f.file_size or None) for f in client.list_artifacts(run_id, "tree")}
    expect(
        tree,
        {"tree/a.csv": (False, 8), "tree/with space.txt": (False, 18), "tree/sub": (True, None), "tree/empty.txt": (False, None)},
        "listing of tree/",
    )
    expect([f.file_size for f in client.list_artifacts(run_id, "bin")], [300_000], "size of bin/blob.bin")

    dst = tempfile.mkdtemp()
    got = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="tree", dst_path=dst)
    cmp = filecmp.dircmp(os.path.join(src, "tree"), got)
    diff = _dir_differences(cmp)
    assert not diff, f"downloaded tree/ differs from what was logged: {diff}"
    blob = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="bin/blob.bin", dst_path=tempfile.mkdtemp())
    assert filecmp.cmp(os.path.join(src, "blob.bin"), blob, shallow=False), "bin/blob.bin bytes differ"
    whole = mlflow.artifacts.download_artifacts(run_id=run_id, dst_path=tempfile.mkdtemp())
    assert filecmp.cmp(os.path.join(src, "notes.txt"), os.path.join(whole, "notes.txt"), shallow=False), "notes.txt differs"
    expect(mlflow.artifacts.load_text(f"runs:/{run_id}/texts/hello.txt"), "hello text", "log_text read back")
    expect(mlflow.artifacts.load_dict(f"runs:/{run_id}/dicts/d.json"), {"a": [1, 2]}, "log_dict read back")


def _dir_differences(cmp, prefix=""):
    diff = [prefix + n for n in cmp.left_only + cmp.right_only + cmp.funny_files]
    _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
    diff += [prefix + n for n in mismatch + errors]
    for name, sub in cmp.subdirs.items():
        diff += _dir_differences(sub, prefix + name + "/")
    return diff


def training_data():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, y


def log_model():
    from sklearn.linear_model import LogisticRegression

    exp = suite.needs("exp")
    X, y = training_data()
    model = LogisticRegression(max_iter=300).fit(X, y)
    mlflow.set_experiment(experiment_id=exp)
    with mlflow.start_run(run_name=f"model-{sfx}") as run:
        mlflow.log_param("max_iter", 300)
        mlflow.log_metric("train_acc", float(model.score(X, y)), step=0)
        info = mlflow.sklearn.log_model(model, name="model", input_example=X.iloc[:3])
    run_id = run.info.run_id
    S.update(model=model, X=X, model_run=run_id, model_id=info.model_id)

    assert info.model_id, "log_model returned no model_id"
    expect(info.model_uri, f"models:/{info.model_id}", "ModelInfo.model_uri")
    logged = client.get_logged_model(info.model_id)
    expect(logged.name, "model", "logged model name")
    expect(logged.source_run_id, run_id, "logged model source_run_id")
    expect(logged.experiment_id, exp, "logged model experiment_id")
    expect(str(logged.status), "READY", "logged model status")
    expect(logged.params.get("max_iter"), "300", "logged model params copied from the run")
    expect({m.key: m.value for m in logged.metrics or []}, {"train_acc": float(model.score(X, y))}, "logged model metrics")
    outputs = client.get_run(run_id).outputs
    expect([o.model_id for o in outputs.model_outputs] if outputs else [], [info.model_id], "run outputs")
    found = client.search_logged_models(experiment_ids=[exp], filter_string=f"source_run_id = '{run_id}'")
    expect([m.model_id for m in found], [info.model_id], "search_logged_models by source_run_id")


def load_logged_model():
    model, X, run_id, model_id = suite.needs("model", "X", "model_run", "model_id")
    want = model.predict(X)
    for model_uri in (f"models:/{model_id}", f"runs:/{run_id}/model"):
        got = mlflow.pyfunc.load_model(model_uri).predict(X)
        assert np.array_equal(np.asarray(got), want), f"{model_uri} predicts differently"
    sk = mlflow.sklearn.load_model(f"models:/{model_id}")
    assert np.array_equal(sk.predict(X), want), "sklearn flavour predicts differently"


def search_runs_setup():
    name = f"conf-search-{sfx}"
    exp = client.create_experiment(name)
    ids = []
    now = int(time.time() * 1000)
    for i in range(12):
        run = client.create_run(exp, run_name=f"sr-{i:02d}", start_time=now + i)
        client.log_batch(
            run.info.run_id,
            metrics=[Metric("acc", i / 10, now, 0), Metric("loss", float(12 - i), now, 0)],
            params=[Param("kind", "a" if i % 2 == 0 else "b"), Param("idx", str(i))],
            tags=[RunTag("group", f"g{i % 3}")],
        )
        client.set_terminated(run.info.run_id)
        ids.append(run.info.run_id)
    S.update(search_exp=exp, search_exp_name=name, search_ids=ids)


def _names(runs):
    return [r.info.run_name for r in runs]


def search_runs_filters():
    exp, ids = suite.needs("search_exp", "search_ids")
    cases = [
        ("metrics.acc > 0.55", {6, 7, 8, 9, 10, 11}),
        ("params.kind = 'a' and metrics.acc >= 0.4", {4, 6, 8, 10}),
        ("tags.group = 'g1'", {1, 4, 7, 10}),
        ("attributes.run_name LIKE 'sr-0%'", set(range(10))),
        ("attributes.run_name ILIKE 'SR-1%'", {10, 11}),
        ("attributes.status = 'FINISHED'", set(range(12))),
        ("params.idx != '3'", set(range(12)) - {3}),
        ("metrics.loss <= 2", {10, 11}),
        (f"attributes.run_id IN ('{ids[2]}', '{ids[5]}')", {2, 5}),
        ("params.kind LIKE 'b' AND tags.group != 'g0' AND metrics.loss > 4", {1, 5, 7}),
        ("tags.`group` = 'g2'", {2, 5, 8, 11}),
        ("run_name = 'sr-03'", {3}),
    ]
    bad = []
    for flt, want in cases:
        got = {int(n[3:]) for n in _names(client.search_runs([exp], filter_string=flt, max_results=100))}
        if got != want:
            bad.append(f"{flt!r}: expected {sorted(want)}, got {sorted(got)}")
    assert not bad, "; ".join(bad)


def search_runs_order():
    exp = suite.needs("search_exp")
    top = client.search_runs([exp], order_by=["metrics.acc DESC"], max_results=5)
    expect(_names(top), [f"sr-{i:02d}" for i in (11, 10, 9, 8, 7)], "order_by metrics.acc DESC, max_results 5")
    asc = client.search_runs([exp], order_by=["metrics.loss ASC"], max_results=3)
    expect(_names(asc), ["sr-11", "sr-10", "sr-09"], "order_by metrics.loss ASC")
    by_param = client.search_runs([exp], order_by=["params.idx ASC"], max_results=4)
    expect(_names(by_param), ["sr-00", "sr-01", "sr-10", "sr-11"], "order_by params.idx (string order)")
    by_time = client.search_runs([exp], order_by=["attributes.start_time DESC"], max_results=2)
    expect(_names(by_time), ["sr-11", "sr-10"], "order_by attributes.start_time DESC")
    two_keys = client.search_runs([exp], order_by=["params.kind DESC", "metrics.acc ASC"], max_results=3)
    expect(_names(two_keys), ["sr-01", "sr-03", "sr-05"], "order_by params.kind DESC, metrics.acc ASC")


def search_runs_paging():
    exp = suite.needs("search_exp")
    seen, token, pages = [], None, 0
    while True:
        page = client.search_runs([exp], order_by=["metrics.acc DESC"], max_results=5, page_token=token)
        seen += _names(page)
        pages += 1
        token = page.token
        if not token or pages > 5:
            break
    expect(pages, 3, "pages of 5 over 12 runs")
    expect(seen, [f"sr-{i:02d}" for i in range(11, -1, -1)], "runs over all pages, in order")


def search_runs_pandas():
    name = suite.needs("search_exp_name")
    df = mlflow.search_runs(experiment_names=[name], order_by=["metrics.acc DESC"], max_results=4)
    expect(len(df), 4, "rows of mlflow.search_runs with max_results=4")
    for col in ("run_id", "metrics.acc", "metrics.loss", "params.kind", "params.idx", "tags.group", "tags.mlflow.runName"):
        assert col in df.columns, f"column {col} missing from {list(df.columns)}"
    expect(list(df["metrics.acc"]), [1.1, 1.0, 0.9, 0.8], "metrics.acc column")
    expect(list(df["params.idx"]), ["11", "10", "9", "8"], "params.idx column")
    filtered = mlflow.search_runs(experiment_names=[name], filter_string="params.kind = 'b' and metrics.acc < 0.4")
    expect(sorted(filtered["params.idx"]), ["1", "3"], "filtered pandas search")


def search_runs_invalid():
    exp = suite.needs("search_exp")
    for flt in ("metrics.acc >>> 1", "params.kind = a", "metrics.acc > 1 OR metrics.acc < 0", "foo.bar = '1'"):
        raises("INVALID_PARAMETER_VALUE", lambda: client.search_runs([exp], filter_string=flt), f"filter {flt!r}")
    raises("INVALID_PARAMETER_VALUE", lambda: client.search_runs([exp], order_by=["metrics.acc SIDEWAYS"]), "bad order_by")


def delete_and_restore_run():
    exp, ids = suite.needs("search_exp", "search_ids")
    client.delete_run(ids[0])
    expect(client.get_run(ids[0]).info.lifecycle_stage, "deleted", "lifecycle_stage after delete_run")
    expect(len(client.search_runs([exp])), 11, "active runs after one delete")
    expect(_names(client.search_runs([exp], run_view_type=ViewType.DELETED_ONLY)), ["sr-00"], "DELETED_ONLY")
    expect(len(client.search_runs([exp], run_view_type=ViewType.ALL)), 12, "ALL")
    client.restore_run(ids[0])
    expect(client.get_run(ids[0]).info.lifecycle_stage, "active", "lifecycle_stage after restore_run")
    expect(len(client.search_runs([exp])), 12, "active runs after restore")


def search_experiments():
    exp_name, search_name = suite.needs("exp_name", "search_exp_name")
    one = client.search_experiments(filter_string=f"name = '{exp_name}'")
    expect([e.name for e in one], [exp_name], "search_experiments by name")
    mine = client.search_experiments(filter_string=f"name LIKE 'conf-%{sfx}'", order_by=["name ASC"])
    expect([e.name for e in mine], sorted([exp_name, search_name]), "search_experiments LIKE, ordered by name")
    tagged = client.search_experiments(filter_string=f"tags.team = 't-{sfx}'")
    expect([e.name for e in tagged], [exp_name], "search_experiments by tag")
    first = client.search_experiments(filter_string=f"name LIKE 'conf-%{sfx}'", order_by=["name DESC"], max_results=1)
    expect([e.name for e in first], [search_name], "first page of one")
    assert first.token, "a page_token for the second page"
    second = client.search_experiments(
        filter_string=f"name LIKE 'conf-%{sfx}'", order_by=["name DESC"], max_results=1, page_token=first.token
    )
    expect([e.name for e in second], [exp_name], "second page of one")
    names = {e.name for e in mlflow.search_experiments()}
    assert "Default" in names and exp_name in names, "mlflow.search_experiments lists Default and the new experiment"


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


def register_models():
    run_id, model_id = suite.needs("model_run", "model_id")
    name = f"conf-model-{sfx}"
    v1 = mlflow.register_model(f"runs:/{run_id}/model", name)
    expect(str(v1.version), "1", "version from runs:/ source")
    expect(v1.run_id, run_id, "version 1 run_id")
    v2 = mlflow.register_model(f"models:/{model_id}", name)
    expect(str(v2.version), "2", "version from models:/ source")
    expect(v2.run_id, run_id, "version 2 run_id")
    v3 = mlflow.register_model(f"models:/{model_id}", name)
    expect(str(v3.version), "3", "third version")
    for v in (v1, v2, v3):
        got = client.get_model_version(name, v.version)
        expect(got.status, "READY", f"status of version {v.version}")
        expect(got.current_stage, "None", f"initial stage of version {v.version}")
        assert got.source, f"version {v.version} has a source"
    rm = client.get_registered_model(name)
    expect(rm.name, name, "registered model name")
    expect(sorted(str(v.version) for v in rm.latest_versions), ["3"], "latest_versions of stage None")
    S["rm"] = name


def registered_model_calls():
    run_id = suite.needs("model_run")
    name = f"conf-rm-{sfx}"
    created = client.create_registered_model(name, tags={"team": "a"}, description="first")
    expect(created.name, name, "create_registered_model name")
    raises("RESOURCE_ALREADY_EXISTS", lambda: client.create_registered_model(name), "create an existing registered model")
    got = client.get_registered_model(name)
    expect((got.description, got.tags), ("first", {"team": "a"}), "description and tags")
    client.update_registered_model(name, description="second")
    expect(client.get_registered_model(name).description, "second", "description after update")
    client.set_registered_model_tag(name, "env", "prod")
    client.delete_registered_model_tag(name, "team")
    expect(client.get_registered_model(name).tags, {"env": "prod"}, "tags after set and delete")
    renamed = f"conf-rm2-{sfx}"
    client.rename_registered_model(name, renamed)
    expect(client.get_registered_model(renamed).name, renamed, "renamed model")
    raises("RESOURCE_DOES_NOT_EXIST", lambda: client.get_registered_model(name), "the old name after rename")

    source = client.get_run(run_id).info.artifact_uri + "/model"
    mv = client.create_model_version(renamed, source=source, run_id=run_id, tags={"k": "v"}, description="mv")
    expect(str(mv.version), "1", "create_model_version version")
    got = client.get_model_version(renamed, "1")
    expect((got.source, got.run_id, got.description, got.tags), (source, run_id, "mv", {"k": "v"}), "model version fields")
    client.update_model_version(renamed, "1", description="mv2")
    client.set_model_version_tag(renamed, "1", "q", "w")
    client.delete_model_version_tag(renamed, "1", "k")
    got = client.get_model_version(renamed, "1")
    expect((got.description, got.tags), ("mv2", {"q": "w"}), "model version after update and tags")
    client.create_model_version(renamed, source=source, run_id=run_id)

    rms = client.search_registered_models(filter_string=f"name LIKE 'conf-%{sfx}'", order_by=["name ASC"])
    expect([m.name for m in rms], sorted([renamed, suite.state.get("rm", f"conf-model-{sfx}")]), "search_registered_models LIKE")
    page1 = client.search_registered_models(filter_string=f"name LIKE 'conf-%{sfx}'", max_results=1, order_by=["name DESC"])
    assert len(page1) == 1 and page1.token, "first page of one with a token"
    page2 = client.search_registered_models(
        filter_string=f"name LIKE 'conf-%{sfx}'", max_results=1, order_by=["name DESC"], page_token=page1.token
    )
    expect(len(page2), 1, "second page of one")
    assert page2[0].name != page1[0].name, "pages repeat a model"
    exact = client.search_registered_models(filter_string=f"name = '{renamed}'")
    expect([m.name for m in exact], [renamed], "search_registered_models by name")

    mvs = client.search_model_versions(f"name = '{renamed}'")
    expect(sorted(str(v.version) for v in mvs), ["1", "2"], "search_model_versions by name")
    by_run = client.search_model_versions(f"run_id = '{run_id}' and name = '{renamed}'")
    expect(len(by_run), 2, "search_model_versions by run_id")
    client.delete_model_version(renamed, "1")
    raises("RESOURCE_DOES_NOT_EXIST", lambda: client.get_model_version(renamed, "1"), "a deleted version")
    expect([str(v.version) for v in client.search_model_versions(f"name = '{renamed}'")], ["2"], "versions after delete")
    client.delete_registered_model(renamed)
    raises("RESOURCE_DOES_NOT_EXIST", lambda: client.get_registered_model(renamed), "a deleted registered model")


def stages():
    name = suite.needs("rm")
    v1 = client.transition_model_version_stage(name, "1", "Staging")
    expect(v1.current_stage, "Staging", "v1 after transition to Staging")
    v2 = client.transition_model_version_stage(name, "2", "Production")
    expect(v2.current_stage, "Production", "v2 after transition to Production")
    v3 = client.transition_model_version_stage(name, "3", "Production", archive_existing_versions=True)
    expect(v3.current_stage, "Production", "v3 after transition to Production")
    stage_of = {str(v): client.get_model_version(name, str(v)).current_stage for v in (1, 2, 3)}
    expect(stage_of, {"1": "Staging", "2": "Archived", "3": "Production"}, "stages after archive_existing_versions")
    expect([str(v.version) for v in client.get_latest_versions(name, stages=["Production"])], ["3"], "latest Production")
    expect([str(v.version) for v in client.get_latest_versions(name, stages=["Staging"])], ["1"], "latest Staging")
    every = {v.current_stage: str(v.version) for v in client.get_latest_versions(name)}
    expect(every, {"Staging": "1", "Archived": "2", "Production": "3"}, "latest per stage")
    raises(
        "INVALID_PARAMETER_VALUE",
        lambda: client.transition_model_version_stage(name, "1", "Nowhere"),
        "transition to an unknown stage",
    )


def aliases():
    name = suite.needs("rm")
    client.set_registered_model_alias(name, "champion", "3")
    client.set_registered_model_alias(name, "temp", "1")
    expect(str(client.get_model_version_by_alias(name, "champion").version), "3", "version by alias")
    expect(client.get_registered_model(name).aliases, {"champion": "3", "temp": "1"}, "registered model aliases")
    expect(client.get_model_version(name, "3").aliases, ["champion"], "model version aliases")
    client.delete_registered_model_alias(name, "temp")
    expect(client.get_registered_model(name).aliases, {"champion": "3"}, "aliases after delete")
    # MLflow answers a missing alias with 400 INVALID_PARAMETER_VALUE, not 404.
    raises("INVALID_PARAMETER_VALUE", lambda: client.get_model_version_by_alias(name, "temp"), "a deleted alias")


def load_registered():
    name, model, X = suite.needs("rm", "model", "X")
    want = model.predict(X)
    for model_uri in (f"models:/{name}@champion", f"models:/{name}/Production", f"models:/{name}/1"):
        got = mlflow.pyfunc.load_model(model_uri).predict(X)
        assert np.array_equal(np.asarray(got), want), f"{model_uri} predicts differently from the original model"


def autolog():
    from sklearn.linear_model import LinearRegression

    exp = suite.needs("exp")
    X, y = training_data()
    mlflow.set_experiment(experiment_id=exp)
    mlflow.sklearn.autolog(log_input_examples=False, silent=True)
    try:
        with mlflow.start_run(run_name=f"autolog-{sfx}") as run:
            LinearRegression().fit(X, y)
    finally:
        mlflow.sklearn.autolog(disable=True)
    got = client.get_run(run.info.run_id)
    assert "fit_intercept" in got.data.params, f"autolog params: {got.data.params}"
    assert "training_score" in got.data.metrics, f"autolog metrics: {got.data.metrics}"
    expect(got.data.tags.get("estimator_name"), "LinearRegression", "autolog estimator_name tag")
    models = got.outputs.model_outputs if got.outputs else []
    expect(len(models), 1, "autolog logged one model")
    expect(len(got.inputs.dataset_inputs) if got.inputs else 0, 1, "autolog logged the training dataset")
    by_dataset = client.search_runs([exp], filter_string=f"dataset.name = '{got.inputs.dataset_inputs[0].dataset.name}'")
    assert run.info.run_id in [r.info.run_id for r in by_dataset], "search_runs by dataset.name finds the autolog run"


def values_at_limits():
    exp = suite.needs("exp")
    run = client.create_run(exp, run_name=f"limits-{sfx}")
    run_id = run.info.run_id
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
    exp = suite.needs("exp")
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


def multipart_artifacts():
    exp = suite.needs("exp")
    src = os.path.join(tempfile.mkdtemp(), "big.bin")
    with open(src, "wb") as f:
        f.write(os.urandom(6 * 1024 * 1024 + 123))
    # The client tries a multipart upload for a file this large; a server may decline with 501 and take one PUT.
    saved = {k: os.environ.get(k) for k in ("MLFLOW_ENABLE_PROXY_MULTIPART_UPLOAD", "MLFLOW_MULTIPART_UPLOAD_MINIMUM_FILE_SIZE", "MLFLOW_MULTIPART_UPLOAD_CHUNK_SIZE")}
    os.environ.update(
        MLFLOW_ENABLE_PROXY_MULTIPART_UPLOAD="true",
        MLFLOW_MULTIPART_UPLOAD_MINIMUM_FILE_SIZE=str(5 * 1024 * 1024),
        MLFLOW_MULTIPART_UPLOAD_CHUNK_SIZE=str(5 * 1024 * 1024),
    )
    try:
        mlflow.set_experiment(experiment_id=exp)
        with mlflow.start_run(run_name=f"multipart-{sfx}") as run:
            mlflow.log_artifact(src, artifact_path="large")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    got = mlflow.artifacts.download_artifacts(run_id=run.info.run_id, artifact_path="large/big.bin", dst_path=tempfile.mkdtemp())
    assert filecmp.cmp(src, got, shallow=False), "a 6 MiB artifact sent by the multipart path reads back different"


def artifact_paths_confined():
    run_id = suite.needs("artifact_run")
    exp = S["exp"]
    base = f"{uri}/api/2.0/mlflow-artifacts/artifacts"
    bad = []
    for path in (f"{exp}/{run_id}/artifacts/../../../../etc/passwd", "../outside", "/etc/passwd", f"{exp}/{run_id}/artifacts/%2e%2e/%2e%2e/x"):
        r = requests.get(f"{base}/{path}", timeout=10)
        if r.status_code < 400 or r.status_code >= 500:
            bad.append(f"GET {path} -> {r.status_code}")
        r = requests.get(base, params={"path": path}, timeout=10)
        if r.status_code < 400 or r.status_code >= 500:
            bad.append(f"list {path} -> {r.status_code} {r.text[:100]}")
    # A server behind a URL parser that resolves dot segments (as WHATWG URLs do) sees the path at the root
    # instead: acceptable when the file lands there, inside the root; MLflow refuses the request with 400.
    name = f"escaped-{sfx}.txt"
    r = requests.put(f"{base}/{exp}/{run_id}/artifacts/%2e%2e/%2e%2e/%2e%2e/{name}", data=b"x", timeout=10)
    if 200 <= r.status_code < 300:
        back = requests.get(f"{base}/{name}", timeout=10)
        if (back.status_code, back.content) != (200, b"x"):
            bad.append(f"PUT ../../../{name} -> {r.status_code}, but GET {name} at the root -> {back.status_code}")
    elif r.status_code >= 500:
        bad.append(f"PUT ../../../{name} -> {r.status_code}")
    assert not bad, "requests outside the artifact root answered other than 4xx: " + "; ".join(bad)


def registry_search_by_tag():
    name = suite.needs("rm")
    client.set_registered_model_tag(name, "flavour", f"sk-{sfx}")
    found = client.search_registered_models(filter_string=f"tags.flavour = 'sk-{sfx}'")
    expect([m.name for m in found], [name], "search_registered_models by tag")
    client.set_model_version_tag(name, "2", "quality", f"good-{sfx}")
    versions = client.search_model_versions(f"tags.quality = 'good-{sfx}'")
    expect([(v.name, str(v.version)) for v in versions], [(name, "2")], "search_model_versions by tag")


def neutral_prefix():
    exp_name = suite.needs("exp_name")
    r = requests.get(f"{uri}/api/2.0/tracker/experiments/search", params={"max_results": 1000}, timeout=10)
    expect(r.status_code, 200, "GET /api/2.0/tracker/experiments/search")
    assert exp_name in [e["name"] for e in r.json().get("experiments", [])], "the experiment under the neutral prefix"
    r = requests.get(f"{uri}/api/2.0/tracker/registered-models/search", timeout=10)
    expect(r.status_code, 200, "GET /api/2.0/tracker/registered-models/search")


def error_wire():
    r = requests.get(f"{uri}/api/2.0/mlflow/runs/get", params={"run_id": "0" * 32}, timeout=10)
    expect(r.status_code, 404, "runs/get of a missing run: status")
    body = r.json()
    expect(body.get("error_code"), "RESOURCE_DOES_NOT_EXIST", "runs/get of a missing run: error_code")
    assert body.get("message"), "error body has a message"
    r = requests.post(f"{uri}/api/2.0/mlflow/runs/search", json={"experiment_ids": ["0"], "filter": "metrics.x >>> 1"}, timeout=10)
    expect((r.status_code, r.json().get("error_code")), (400, "INVALID_PARAMETER_VALUE"), "runs/search with a bad filter")


checks = [
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
    artifacts,
    log_model,
    load_logged_model,
    search_runs_setup,
    search_runs_filters,
    search_runs_order,
    search_runs_paging,
    search_runs_pandas,
    search_runs_invalid,
    delete_and_restore_run,
    search_experiments,
    delete_experiment,
    register_models,
    registered_model_calls,
    stages,
    aliases,
    load_registered,
    autolog,
    error_wire,
    values_at_limits,
    large_batches,
    multipart_artifacts,
    artifact_paths_confined,
    registry_search_by_tag,
]
if os.environ.get("TRACKER_SVC_CHECKS") == "1":
    checks.append(neutral_prefix)

for fn in checks:
    suite.check(fn.__name__, fn)
suite.finish()

"""Conformance checks: artifacts (listing, download, multipart upload, paths kept inside the root), logged models and
autolog."""

import filecmp
import os
import random
import tempfile

import mlflow
import numpy as np
import requests

from conformance_fixtures import client, experiment, logged_model, sfx, training_data, uri
from harness import expect


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


def _dir_differences(cmp, prefix=""):
    diff = [prefix + n for n in cmp.left_only + cmp.right_only + cmp.funny_files]
    _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
    diff += [prefix + n for n in mismatch + errors]
    for name, sub in cmp.subdirs.items():
        diff += _dir_differences(sub, prefix + name + "/")
    return diff


def artifacts():
    src = tempfile.mkdtemp()
    make_artifact_tree(src)
    mlflow.set_experiment(experiment_id=experiment())
    with mlflow.start_run(run_name=f"artifacts-{sfx}") as run:
        mlflow.log_artifact(os.path.join(src, "notes.txt"))
        mlflow.log_artifact(os.path.join(src, "blob.bin"), artifact_path="bin")
        mlflow.log_artifacts(os.path.join(src, "tree"), artifact_path="tree")
        mlflow.log_text("hello text", "texts/hello.txt")
        mlflow.log_dict({"a": [1, 2]}, "dicts/d.json")
    run_id = run.info.run_id

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


def multipart_artifacts():
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
        mlflow.set_experiment(experiment_id=experiment())
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
    exp = experiment()
    run_id = client.create_run(exp, run_name=f"confined-{sfx}").info.run_id
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


def log_model():
    m = logged_model()
    info, run_id, model, X = m["info"], m["run_id"], m["model"], m["X"]
    assert info.model_id, "log_model returned no model_id"
    expect(info.model_uri, f"models:/{info.model_id}", "ModelInfo.model_uri")
    logged = client.get_logged_model(info.model_id)
    expect(logged.name, "model", "logged model name")
    expect(logged.source_run_id, run_id, "logged model source_run_id")
    expect(logged.experiment_id, experiment(), "logged model experiment_id")
    expect(str(logged.status), "READY", "logged model status")
    expect(logged.params.get("max_iter"), "300", "logged model params copied from the run")
    _, y = training_data()
    expect({m.key: m.value for m in logged.metrics or []}, {"train_acc": float(model.score(X, y))}, "logged model metrics")
    outputs = client.get_run(run_id).outputs
    expect([o.model_id for o in outputs.model_outputs] if outputs else [], [info.model_id], "run outputs")
    found = client.search_logged_models(experiment_ids=[experiment()], filter_string=f"source_run_id = '{run_id}'")
    expect([m.model_id for m in found], [info.model_id], "search_logged_models by source_run_id")


def load_logged_model():
    m = logged_model()
    want = m["model"].predict(m["X"])
    for model_uri in (f"models:/{m['model_id']}", f"runs:/{m['run_id']}/model"):
        got = mlflow.pyfunc.load_model(model_uri).predict(m["X"])
        assert np.array_equal(np.asarray(got), want), f"{model_uri} predicts differently"
    sk = mlflow.sklearn.load_model(f"models:/{m['model_id']}")
    assert np.array_equal(sk.predict(m["X"]), want), "sklearn flavour predicts differently"


def autolog():
    from sklearn.linear_model import LinearRegression

    exp = experiment()
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


CHECKS = [
    artifacts,
    multipart_artifacts,
    artifact_paths_confined,
    log_model,
    load_logged_model,
    autolog,
]

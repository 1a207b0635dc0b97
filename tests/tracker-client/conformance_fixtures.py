"""What the conformance checks share: the client, the suite, and the data several checks read (fixtures, made once
on first use) or each make for themselves (factories). No check reads what another check left behind, so a failing
check never blocks the ones after it; a check that changes data works on data of its own."""

import os
import time

os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # it would call out of this machine
import mlflow
from mlflow import MlflowClient
from mlflow.entities import Metric, Param, RunTag

from harness import Suite, expect

uri = os.environ.get("MLFLOW_TRACKING_URI")
if not uri:
    raise SystemExit("MLFLOW_TRACKING_URI must name the server under test")
suite = Suite("tracker-conformance")
sfx = suite.suffix
client = MlflowClient()
EXPERIMENT_NAME = f"conf-{sfx}"


@suite.fixture
def experiment():
    """The experiment the checks log their runs in (its id)."""
    return client.create_experiment(EXPERIMENT_NAME)


@suite.fixture
def logged_run():
    """A finished run with params, metric histories (NaN and infinities too) and overwritten tags (its id)."""
    mlflow.set_experiment(experiment_id=experiment())
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
    return run.info.run_id


def training_data():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, y


@suite.fixture
def logged_model():
    """A scikit-learn model logged in a run: {model, X, run_id, model_id, train_acc}."""
    from sklearn.linear_model import LogisticRegression

    X, y = training_data()
    model = LogisticRegression(max_iter=300).fit(X, y)
    mlflow.set_experiment(experiment_id=experiment())
    with mlflow.start_run(run_name=f"model-{sfx}") as run:
        mlflow.log_param("max_iter", 300)
        mlflow.log_metric("train_acc", float(model.score(X, y)), step=0)
        info = mlflow.sklearn.log_model(model, name="model", input_example=X.iloc[:3])
    return {"model": model, "X": X, "run_id": run.info.run_id, "model_id": info.model_id, "info": info}


def make_search_experiment(label):
    """An experiment of 12 finished runs sr-00..sr-11: acc i/10, loss 12-i, kind a/b by parity, idx i, group g(i%3).
    Returns (experiment id, name, run ids)."""
    name = f"conf-{label}-{sfx}"
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
    return exp, name, ids


@suite.fixture
def search_experiment():
    """The 12 runs the read-only search checks query (see make_search_experiment)."""
    return make_search_experiment("search")


def register_versions(label, count):
    """A registered model of its own with `count` versions of the logged model: version 1 from its runs:/ source, the
    others from its models:/ source. Returns the model's name."""
    m = logged_model()
    name = f"conf-{label}-{sfx}"
    mlflow.register_model(f"runs:/{m['run_id']}/model", name)
    for _ in range(count - 1):
        mlflow.register_model(f"models:/{m['model_id']}", name)
    return name

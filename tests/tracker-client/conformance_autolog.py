"""Conformance checks: autologging of the gradient-boosting flavours the tracker specification names (XGBoost and
LightGBM; scikit-learn's is in conformance_artifacts.py). Each trains a small booster with evaluation sets under
`mlflow.<flavour>.autolog()` and reads back what autolog sent: its params, one metric value per boosting round,
and a logged model that loads through the flavour and predicts what the trained booster predicts."""

import mlflow
import numpy as np

from conformance_fixtures import client, experiment, sfx, training_data
from harness import expect

ROUNDS = 6


def _autologged_run(flavour, train):
    """Runs train() in a run of its own with the flavour's autolog on; returns (run, the booster train() made)."""
    mlflow.set_experiment(experiment_id=experiment())
    flavour.autolog(log_input_examples=False, silent=True)
    try:
        with mlflow.start_run(run_name=f"autolog-{flavour.__name__.split('.')[-1]}-{sfx}") as run:
            booster = train()
    finally:
        flavour.autolog(disable=True)
    return client.get_run(run.info.run_id), booster


def _expect_history_per_round(run_id, key):
    history = client.get_metric_history(run_id, key)
    expect(sorted(m.step for m in history), list(range(ROUNDS)), f"steps of the {key} history (one per round)")
    assert all(np.isfinite(m.value) for m in history), f"{key} history holds a value that is not finite: {history}"


def _logged_model_id(run):
    models = run.outputs.model_outputs if run.outputs else []
    expect(len(models), 1, "autolog logged one model")
    return models[0].model_id


def _expect_loads_and_predicts(flavour, run, predict, booster):
    """The logged model loads through its flavour, by model id and by run, and predicts as the trained booster."""
    want = predict(booster)
    for uri in (f"models:/{_logged_model_id(run)}", f"runs:/{run.info.run_id}/model"):
        got = predict(flavour.load_model(uri))
        assert np.allclose(got, want), f"{uri} predicts differently from the booster autolog trained"


def xgboost_autolog():
    import xgboost as xgb

    X, y = training_data()
    params = {"objective": "multi:softprob", "num_class": 3, "max_depth": 3, "eta": 0.3, "seed": 7}

    def train():
        dtrain = xgb.DMatrix(X, label=y)
        return xgb.train(params, dtrain, num_boost_round=ROUNDS, evals=[(dtrain, "train")])

    run, booster = _autologged_run(mlflow.xgboost, train)
    got = run.data.params
    expect(
        {k: got.get(k) for k in ("max_depth", "eta", "objective", "num_class", "num_boost_round")},
        {"max_depth": "3", "eta": "0.3", "objective": "multi:softprob", "num_class": "3", "num_boost_round": str(ROUNDS)},
        "xgboost autolog params",
    )
    _expect_history_per_round(run.info.run_id, "train-mlogloss")
    _expect_loads_and_predicts(mlflow.xgboost, run, lambda model: model.predict(xgb.DMatrix(X)), booster)


def lightgbm_autolog():
    import lightgbm as lgb

    X, y = training_data()
    params = {"objective": "multiclass", "num_class": 3, "num_leaves": 7, "learning_rate": 0.2, "seed": 7, "verbose": -1}

    def train():
        dtrain = lgb.Dataset(X, label=y)
        return lgb.train(params, dtrain, num_boost_round=ROUNDS, valid_sets=[dtrain], valid_names=["train"])

    run, booster = _autologged_run(mlflow.lightgbm, train)
    got = run.data.params
    expect(
        {k: got.get(k) for k in ("num_leaves", "learning_rate", "objective", "num_class", "num_boost_round")},
        {"num_leaves": "7", "learning_rate": "0.2", "objective": "multiclass", "num_class": "3", "num_boost_round": str(ROUNDS)},
        "lightgbm autolog params",
    )
    _expect_history_per_round(run.info.run_id, "train-multi_logloss")
    _expect_loads_and_predicts(mlflow.lightgbm, run, lambda model: model.predict(X), booster)


CHECKS = [xgboost_autolog, lightgbm_autolog]

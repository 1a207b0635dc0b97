"""Conformance checks: search_runs (filters, ordering, pages, pandas, refusals) and deleting and restoring a run."""

import mlflow
from mlflow.entities import ViewType

from conformance_fixtures import client, make_search_experiment, search_experiment
from harness import expect, raises


def _names(runs):
    return [r.info.run_name for r in runs]


def search_runs_setup():
    exp, _, ids = search_experiment()
    expect(len(ids), 12, "runs created")
    expect(len(client.search_runs([exp], max_results=100)), 12, "runs found in the new experiment")


def search_runs_filters():
    exp, _, ids = search_experiment()
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
    exp = search_experiment()[0]
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
    exp = search_experiment()[0]
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
    name = search_experiment()[1]
    df = mlflow.search_runs(experiment_names=[name], order_by=["metrics.acc DESC"], max_results=4)
    expect(len(df), 4, "rows of mlflow.search_runs with max_results=4")
    for col in ("run_id", "metrics.acc", "metrics.loss", "params.kind", "params.idx", "tags.group", "tags.mlflow.runName"):
        assert col in df.columns, f"column {col} missing from {list(df.columns)}"
    expect(list(df["metrics.acc"]), [1.1, 1.0, 0.9, 0.8], "metrics.acc column")
    expect(list(df["params.idx"]), ["11", "10", "9", "8"], "params.idx column")
    filtered = mlflow.search_runs(experiment_names=[name], filter_string="params.kind = 'b' and metrics.acc < 0.4")
    expect(sorted(filtered["params.idx"]), ["1", "3"], "filtered pandas search")


def search_runs_invalid():
    exp = search_experiment()[0]
    for flt in ("metrics.acc >>> 1", "params.kind = a", "metrics.acc > 1 OR metrics.acc < 0", "foo.bar = '1'"):
        raises("INVALID_PARAMETER_VALUE", lambda: client.search_runs([exp], filter_string=flt), f"filter {flt!r}")
    raises("INVALID_PARAMETER_VALUE", lambda: client.search_runs([exp], order_by=["metrics.acc SIDEWAYS"]), "bad order_by")


def delete_and_restore_run():
    # runs of its own: the searches above must not see a run come and go
    exp, _, ids = make_search_experiment("deleting")
    client.delete_run(ids[0])
    expect(client.get_run(ids[0]).info.lifecycle_stage, "deleted", "lifecycle_stage after delete_run")
    expect(len(client.search_runs([exp])), 11, "active runs after one delete")
    expect(_names(client.search_runs([exp], run_view_type=ViewType.DELETED_ONLY)), ["sr-00"], "DELETED_ONLY")
    expect(len(client.search_runs([exp], run_view_type=ViewType.ALL)), 12, "ALL")
    client.restore_run(ids[0])
    expect(client.get_run(ids[0]).info.lifecycle_stage, "active", "lifecycle_stage after restore_run")
    expect(len(client.search_runs([exp])), 12, "active runs after restore")


CHECKS = [
    search_runs_setup,
    search_runs_filters,
    search_runs_order,
    search_runs_paging,
    search_runs_pandas,
    search_runs_invalid,
    delete_and_restore_run,
]

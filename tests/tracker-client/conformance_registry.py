"""Conformance checks: the model registry (versions from runs:/ and models:/, the registered model and version calls,
stages, aliases, loading by alias and stage, search by tag). Each check registers a model of its own."""

import mlflow
import numpy as np

from conformance_fixtures import client, logged_model, register_versions, sfx
from harness import expect, raises


def register_models():
    m = logged_model()
    run_id, model_id = m["run_id"], m["model_id"]
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


def registered_model_calls():
    run_id = logged_model()["run_id"]
    name, other = f"conf-rm-{sfx}", f"conf-rm3-{sfx}"
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

    # a second model of its own to page over: no other check's model matches 'conf-rm%'
    client.create_registered_model(other)
    pattern = f"name LIKE 'conf-rm%{sfx}'"
    rms = client.search_registered_models(filter_string=pattern, order_by=["name ASC"])
    expect([m.name for m in rms], sorted([renamed, other]), "search_registered_models LIKE")
    page1 = client.search_registered_models(filter_string=pattern, max_results=1, order_by=["name DESC"])
    assert len(page1) == 1 and page1.token, "first page of one with a token"
    page2 = client.search_registered_models(filter_string=pattern, max_results=1, order_by=["name DESC"], page_token=page1.token)
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
    name = register_versions("stages", 3)
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
    name = register_versions("aliases", 3)
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
    m = logged_model()
    name = register_versions("loaded", 3)
    client.transition_model_version_stage(name, "2", "Production")
    client.set_registered_model_alias(name, "champion", "3")
    want = m["model"].predict(m["X"])
    for model_uri in (f"models:/{name}@champion", f"models:/{name}/Production", f"models:/{name}/1"):
        got = mlflow.pyfunc.load_model(model_uri).predict(m["X"])
        assert np.array_equal(np.asarray(got), want), f"{model_uri} predicts differently from the original model"


def registry_search_by_tag():
    name = register_versions("tagged", 2)
    client.set_registered_model_tag(name, "flavour", f"sk-{sfx}")
    found = client.search_registered_models(filter_string=f"tags.flavour = 'sk-{sfx}'")
    expect([m.name for m in found], [name], "search_registered_models by tag")
    client.set_model_version_tag(name, "2", "quality", f"good-{sfx}")
    versions = client.search_model_versions(f"tags.quality = 'good-{sfx}'")
    expect([(v.name, str(v.version)) for v in versions], [(name, "2")], "search_model_versions by tag")


CHECKS = [
    register_models,
    registered_model_calls,
    stages,
    aliases,
    load_registered,
    registry_search_by_tag,
]

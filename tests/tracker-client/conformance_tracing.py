"""Conformance checks: tracing. The client's @mlflow.trace spans go to the server over OTLP (/v1/traces) and come
back through mlflow.get_trace; an OpenTelemetry SDK (opentelemetry-exporter-otlp-proto-http) exports nested spans
to the same endpoint and the client reads them back; assessments (feedback, expectations) are logged, updated,
overridden and deleted through the client. Each check makes its own trace."""

import os

import mlflow
from mlflow.entities import AssessmentSource, AssessmentSourceType, Feedback, SpanEvent, SpanStatusCode, SpanType

from conformance_fixtures import client, sfx
from harness import expect

_experiments = {}


def _experiment(name):
    if name not in _experiments:
        _experiments[name] = client.create_experiment(f"{name}-{sfx}")
    return _experiments[name]


def _by_name(spans):
    return {s.name: s for s in spans}


def _check_nesting(spans):
    """Every child lies inside its parent in time, and every span ends after it starts."""
    by_id = {s.span_id: s for s in spans}
    for s in spans:
        assert s.end_time_ns >= s.start_time_ns, f"span {s.name} ends before it starts"
        if s.parent_id:
            p = by_id[s.parent_id]
            assert p.start_time_ns <= s.start_time_ns and s.end_time_ns <= p.end_time_ns, f"{s.name} outside {p.name}"


def tracing_decorated_spans_read_back():
    mlflow.set_experiment(experiment_id=_experiment("tracing"))

    @mlflow.trace(span_type=SpanType.TOOL, attributes={"tool.version": 2})
    def lookup(city):
        span = mlflow.get_current_active_span()
        span.add_event(SpanEvent("cache-miss", attributes={"city": city, "tries": 1}))
        return {"city": city, "temp": 21.5}

    @mlflow.trace(span_type=SpanType.LLM)
    def fail(prompt):
        raise ValueError(f"no model for {prompt}")

    @mlflow.trace(name="agent", span_type=SpanType.AGENT, attributes={"team": "blue"})
    def agent(question):
        found = lookup("Paris")
        try:
            fail(question)
        except ValueError:
            pass
        return f"{question}: {found['temp']}"

    answer = agent("weather?")
    mlflow.flush_trace_async_logging()
    trace_id = mlflow.get_last_active_trace_id()
    assert trace_id, "the client recorded no trace"

    trace = mlflow.get_trace(trace_id)
    expect(trace.info.tags.get("mlflow.trace.spansLocation"), "TRACKING_STORE", "spans kept by the tracking store")
    spans = trace.data.spans
    expect(sorted(s.name for s in spans), ["agent", "fail", "lookup"], "span names")
    by = _by_name(spans)
    root = by["agent"]
    expect(root.parent_id, None, "the root has no parent")
    expect(by["lookup"].parent_id, root.span_id, "lookup's parent")
    expect(by["fail"].parent_id, root.span_id, "fail's parent")
    expect({s.trace_id for s in spans}, {trace_id}, "every span's trace id")

    expect(root.span_type, SpanType.AGENT, "root span type")
    expect(root.inputs, {"question": "weather?"}, "root inputs")
    expect(root.outputs, answer, "root outputs")
    expect(root.get_attribute("team"), "blue", "root attribute")
    expect(root.status.status_code, SpanStatusCode.OK, "root status")

    tool = by["lookup"]
    expect(tool.span_type, SpanType.TOOL, "tool span type")
    expect(tool.inputs, {"city": "Paris"}, "tool inputs")
    expect(tool.outputs, {"city": "Paris", "temp": 21.5}, "tool outputs")
    expect(tool.get_attribute("tool.version"), 2, "integer attribute")
    events = [(e.name, e.attributes) for e in tool.events]
    expect(events, [("cache-miss", {"city": "Paris", "tries": 1})], "tool events")

    failed = by["fail"]
    expect(failed.status.status_code, SpanStatusCode.ERROR, "failing span status")
    assert "no model for weather?" in (failed.status.description or ""), f"status message: {failed.status.description!r}"
    exc = [e for e in failed.events if e.name == "exception"]
    assert exc and "ValueError" in str(exc[0].attributes.get("exception.type")), f"exception event: {failed.events}"

    _check_nesting(spans)
    info = trace.info
    expect(info.state.value if hasattr(info.state, "value") else str(info.state), "OK", "trace state")
    expect(info.request_time, root.start_time_ns // 1_000_000, "trace request time is the root's start")
    duration = (root.end_time_ns - root.start_time_ns) // 1_000_000
    assert abs(info.execution_duration - duration) <= 1, f"trace duration {info.execution_duration} vs root {duration}"

    # the same trace by search, with its spans
    found = mlflow.search_traces(locations=[_experiment("tracing")], return_type="list")
    expect([t.info.trace_id for t in found], [trace_id], "search_traces finds the trace")
    expect(sorted(s.name for s in found[0].data.spans), ["agent", "fail", "lookup"], "spans of the searched trace")


def tracing_otel_sdk_export_read_back():
    """opentelemetry-sdk with the OTLP/HTTP protobuf exporter, as any OpenTelemetry application sends spans."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    exp = _experiment("otel")
    exporter = OTLPSpanExporter(
        endpoint=os.environ["MLFLOW_TRACKING_URI"].rstrip("/") + "/v1/traces",
        headers={"x-mlflow-experiment-id": exp},
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "otel-check", "deployment": "test"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("conformance")
    with tracer.start_as_current_span("request", attributes={"http.method": "GET", "retries": 3}) as root:
        with tracer.start_as_current_span("db.query", attributes={"db.statement": "select 1", "rows": 1.5}) as q:
            q.add_event("sent", {"bytes": 42})
        with tracer.start_as_current_span("render") as r:
            r.set_status(Status(StatusCode.ERROR, "template missing"))
    provider.shutdown()
    sent = {s: ctx for s, ctx in (("request", root), ("db.query", q), ("render", r))}

    trace_id = "tr-" + format(root.get_span_context().trace_id, "032x")
    trace = mlflow.get_trace(trace_id)
    spans = _by_name(trace.data.spans)
    expect(sorted(spans), ["db.query", "render", "request"], "span names")
    for name, otel in sent.items():
        got = spans[name]
        expect(got.span_id, format(otel.get_span_context().span_id, "016x"), f"{name} span id")
        expect(got.start_time_ns, otel.start_time, f"{name} start time (ns)")
        expect(got.end_time_ns, otel.end_time, f"{name} end time (ns)")
        want_parent = format(otel.parent.span_id, "016x") if otel.parent else None
        expect(got.parent_id, want_parent, f"{name} parent")
    expect(spans["request"].get_attribute("http.method"), "GET", "string attribute")
    expect(spans["request"].get_attribute("retries"), 3, "int attribute")
    expect(spans["db.query"].get_attribute("rows"), 1.5, "double attribute")
    expect([(e.name, e.attributes) for e in spans["db.query"].events], [("sent", {"bytes": 42})], "events")
    expect(spans["render"].status.status_code, SpanStatusCode.ERROR, "error status")
    expect(spans["render"].status.description, "template missing", "error message")
    expect(trace.info.experiment_id, exp, "the experiment of the header")
    expect(trace.info.tags.get("service.name"), "otel-check", "resource attribute as a trace tag")
    expect(trace.info.tags.get("deployment"), "test", "resource attribute as a trace tag")


def tracing_assessments_logged_overridden_and_read_back():
    """mlflow.log_feedback and log_expectation; get, update, override and delete; get_trace and search_traces list them."""
    experiment_id = _experiment("assessments")
    mlflow.set_experiment(experiment_id=experiment_id)

    @mlflow.trace
    def answer(question):
        return "42"

    answer("the meaning?")
    mlflow.flush_trace_async_logging()
    trace_id = mlflow.get_last_active_trace_id()
    ada = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="ada")
    feedback = mlflow.log_feedback(trace_id=trace_id, name="correct", value=True, rationale="matches", source=ada, metadata={"round": "1"})
    expectation = mlflow.log_expectation(trace_id=trace_id, name="expected", value={"answer": "42", "confidence": 0.9})

    got = mlflow.get_assessment(trace_id, feedback.assessment_id)
    expect(got.value, True, "feedback value")
    expect(got.rationale, "matches", "rationale")
    expect((got.source.source_type, got.source.source_id), ("HUMAN", "ada"), "source")
    expect(got.metadata, {"round": "1"}, "metadata")
    expect(mlflow.get_assessment(trace_id, expectation.assessment_id).value, {"answer": "42", "confidence": 0.9}, "expectation value")

    updated = mlflow.update_assessment(
        trace_id=trace_id, assessment_id=feedback.assessment_id, assessment=Feedback(name="correct", value=False, rationale="off by one")
    )
    expect((updated.value, updated.rationale), (False, "off by one"), "updated feedback")
    expect(mlflow.get_assessment(trace_id, feedback.assessment_id).source.source_id, "ada", "source kept by an update")

    override = mlflow.override_feedback(trace_id=trace_id, assessment_id=feedback.assessment_id, value=True, rationale="re-checked")
    expect(mlflow.get_assessment(trace_id, feedback.assessment_id).valid, False, "overridden feedback is invalid")
    listed = {a.assessment_id: a for a in mlflow.get_trace(trace_id).info.assessments}
    expect(sorted(listed), sorted([feedback.assessment_id, expectation.assessment_id, override.assessment_id]), "get_trace lists them")
    expect(listed[override.assessment_id].overrides, feedback.assessment_id, "overrides")

    mlflow.delete_assessment(trace_id=trace_id, assessment_id=override.assessment_id)
    expect(mlflow.get_assessment(trace_id, feedback.assessment_id).valid, True, "valid again once its override is deleted")
    found = mlflow.search_traces(locations=[experiment_id], return_type="list")
    expect([sorted(a.name for a in t.info.assessments) for t in found], [["correct", "expected"]], "search_traces lists them")


def tracing_traces_linked_to_a_run_are_found_by_it():
    """MlflowClient.link_traces_to_run, then search_traces(run_id=...) finds the linked traces and no other."""
    experiment_id = _experiment("links")
    mlflow.set_experiment(experiment_id=experiment_id)

    @mlflow.trace
    def step(x):
        return x * 2

    ids = []
    for i in range(3):
        step(i)
        mlflow.flush_trace_async_logging()
        ids.append(mlflow.get_last_active_trace_id())
    run_id = client.create_run(experiment_id).info.run_id
    client.link_traces_to_run(ids[:2], run_id)
    client.link_traces_to_run(ids[:1], run_id)  # again: no error, no second link
    found = mlflow.search_traces(locations=[experiment_id], run_id=run_id, return_type="list")
    expect(sorted(t.info.trace_id for t in found), sorted(ids[:2]), "traces linked to the run")


CHECKS = [
    tracing_decorated_spans_read_back,
    tracing_otel_sdk_export_read_back,
    tracing_assessments_logged_overridden_and_read_back,
    tracing_traces_linked_to_a_run_are_found_by_it,
]

"""mlflow.openai.autolog against an OpenAI-compatible server (tests/support/scripted-gateway.ts, at
SVC_TEST_OPENAI_URL): the real openai SDK's chat and embedding calls become traces in the tracker, read back with
mlflow.get_trace, for tests/integration/tracker-tracing.test.ts. Same output as conformance.py."""

import os

import mlflow
import openai
from mlflow.entities import SpanType

from conformance_fixtures import client, sfx, suite
from harness import expect


def tracing_openai_autolog_chat_and_embeddings():
    mlflow.set_experiment(experiment_id=client.create_experiment(f"openai-autolog-{sfx}"))
    mlflow.openai.autolog()
    sdk = openai.OpenAI(base_url=os.environ["SVC_TEST_OPENAI_URL"], api_key="scripted")

    reply = sdk.chat.completions.create(model="svc-llm", messages=[{"role": "user", "content": "How many orders?"}], temperature=0)
    mlflow.flush_trace_async_logging()
    trace = mlflow.get_trace(mlflow.get_last_active_trace_id())
    [span] = trace.data.spans
    expect(span.span_type, SpanType.CHAT_MODEL, "span type")
    expect(span.inputs["messages"], [{"role": "user", "content": "How many orders?"}], "inputs")
    expect(span.inputs["model"], "svc-llm", "model")
    expect(span.outputs["choices"][0]["message"]["content"], reply.choices[0].message.content, "outputs")
    expect(trace.info.token_usage["total_tokens"], reply.usage.total_tokens, "token usage")
    expect(trace.info.state, "OK", "state")

    sdk.embeddings.create(model="svc-embed", input=["one", "two"])
    mlflow.flush_trace_async_logging()
    [embed] = mlflow.get_trace(mlflow.get_last_active_trace_id()).data.spans
    expect(embed.span_type, SpanType.EMBEDDING, "embedding span type")
    expect(embed.inputs["input"], ["one", "two"], "embedding inputs")
    mlflow.openai.autolog(disable=True)


CHECKS = [tracing_openai_autolog_chat_and_embeddings]

if __name__ == "__main__":
    for fn in CHECKS:
        suite.check(fn.__name__, fn)
    suite.finish()

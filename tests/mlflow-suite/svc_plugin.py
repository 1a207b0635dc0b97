"""pytest plugin: run MLflow's own REST test files against `svc serve tracker`, or against MLflow's server.

Loaded by run.ts with `-p svc_plugin`. It keeps only the tests that talk to a live server through the files'
server fixtures (`mlflow_client`, `client`, `workspace_mlflow_client`), in their SQL-store parametrisation (svc is a SQL store; the file
store is MLflow's own). With SVC_SUITE_SERVER=svc, the server those fixtures start (`ServerThread(app, port)`,
after `initialize_backend_stores(backend_uri, default_artifact_root=...)`) is replaced by `bin/svc serve tracker`
on a fresh data folder, with the fixture's default artifact root as TRACKER_ARTIFACT_ROOT; a second server a test
starts with `_init_server(...)` is svc as well. With
SVC_SUITE_SERVER=mlflow nothing is replaced: the fixtures run MLflow's real server, the baseline.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests

SERVER = os.environ.get("SVC_SUITE_SERVER", "svc")
SVC_ROOT = Path(os.environ.get("SVC_ROOT", Path(__file__).resolve().parents[2]))
# mlflow_server: tests/tracing/test_otel_loading.py, whose server comes from _init_server (svc in its stead below).
SERVER_FIXTURES = ("mlflow_client", "client", "workspace_mlflow_client", "mlflow_server")
# Fixtures whose tests are left out on both servers (none: the workspace tests run since svc has workspaces).
LEFT_OUT_FIXTURES: tuple[str, ...] = ()
# On svc, which workspace a caller may use is the policy's decision (svc.tracker), for the identity the ingress
# sets. The workspace tests stand in for the ingress with an administrator, who may use and manage every workspace.
SUITE_IDENTITY = {"X-User-Id": "mlflow-suite", "X-User-Role": "svc-admin"}
RESULTS = os.environ.get("SVC_SUITE_RESULTS")


def pytest_configure(config: pytest.Config) -> None:
    # Version drift between the test files (MLflow's repository) and the pinned client: the files' conftest calls
    # workspace_context.clear_workspace(), which 3.17.2 names clear_server_request_workspace(). Same on both servers.
    from mlflow.utils import workspace_context

    if not hasattr(workspace_context, "clear_workspace"):
        workspace_context.clear_workspace = getattr(workspace_context, "clear_server_request_workspace", lambda: None)


def _sql_store(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return True
    params = callspec.params
    return params.get("store_type", "sqlalchemy") == "sqlalchemy" and params.get("client", "sqlalchemy") == "sqlalchemy"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        names = getattr(item, "fixturenames", ())
        live = any(f in names for f in SERVER_FIXTURES) and not any(f in names for f in LEFT_OUT_FIXTURES)
        (keep if live and _sql_store(item) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


class SvcServer:
    """Stands in for the files' ServerThread(app, port): `svc serve tracker` on that port, a fresh data folder."""

    artifact_root: str | None = None
    # A data folder whose embedded database is initialised and migrated once; each server starts on a copy of it
    # (the same state a first start produces, without initialising a database per test).
    template: str | None = None

    def __init__(self, _app, port: int, extra_env: dict[str, str] | None = None):
        self.port = port
        self.extra_env = extra_env or {}
        self.url = f"http://127.0.0.1:{port}"
        self.data = tempfile.mkdtemp(prefix="svc-mlflow-suite-")
        if SvcServer.template:
            subprocess.run(["cp", "-a", f"{SvcServer.template}/.", self.data], check=True)
        self.proc: subprocess.Popen | None = None
        self.log = Path(self.data) / "server.log"

    def __enter__(self) -> str:
        env = {
            **os.environ,
            "SVC_DATA_DIR": self.data,
            "SVC_LOG_LEVEL": os.environ.get("SVC_SUITE_LOG_LEVEL", "warn"),
        }
        for name in ("SVC_PG_HOST", "MLFLOW_TRACKING_URI", "MLFLOW_REGISTRY_URI"):
            env.pop(name, None)
        if SvcServer.artifact_root:
            env["TRACKER_ARTIFACT_ROOT"] = SvcServer.artifact_root
        env.update(self.extra_env)
        self.proc = subprocess.Popen(
            [str(SVC_ROOT / "bin" / "svc"), "serve", "tracker", "--port", str(self.port)],
            env=env,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"svc serve tracker exited: {self.log.read_text()[-2000:]}")
            try:
                if requests.get(f"{self.url}/health", timeout=1).ok:
                    self._seed_workspaces()
                    return self.url
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"svc serve tracker did not answer /health in 120 s: {self.log.read_text()[-2000:]}")

    def _seed_workspaces(self) -> None:
        # workspace_mlflow_client writes the workspace "team-a" straight into MLflow's store before the server starts;
        # on svc the same workspace is created through its API, by the administrator the suite stands in for.
        if os.environ.get("MLFLOW_ENABLE_WORKSPACES", "").lower() != "true":
            return
        requests.post(
            f"{self.url}/api/3.0/mlflow/workspaces",
            json={"name": "team-a", "description": "Team A workspace"},
            headers=SUITE_IDENTITY,
            timeout=10,
        ).raise_for_status()

    def __exit__(self, *exc) -> None:
        self.stop()
        subprocess.run(["rm", "-rf", self.data], check=False)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


@pytest.fixture(scope="session", autouse=True)
def _svc_template():
    if SERVER != "svc":
        yield
        return
    server = SvcServer(None, _free_port())
    server.__enter__()
    server.stop()
    server.log.unlink()
    SvcServer.template = server.data
    yield
    subprocess.run(["rm", "-rf", SvcServer.template], check=False)


@contextlib.contextmanager
def _init_svc_server(backend_uri, root_artifact_uri, extra_env=None, **_options):
    # Stands in for the files' _init_server (tests/tracking/integration_test_utils.py), which starts a second MLflow
    # server in a subprocess (e.g. test_gateway_proxy_handler_rejects_invalid_requests): on svc, the second server
    # is svc too, on its own data folder, with the test's extra environment. backend_uri is the first server's URL
    # or store, which svc has no use for; an artifact root that is a URL of a server is not one svc can serve.
    server = SvcServer(None, _free_port(), extra_env)
    saved_root = SvcServer.artifact_root
    SvcServer.artifact_root = None if str(root_artifact_uri).startswith(("http://", "https://")) else root_artifact_uri
    try:
        with server as url:
            yield url
    finally:
        SvcServer.artifact_root = saved_root


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _capture_backend_stores(*_args, default_artifact_root=None, **_kwargs):
    # svc keeps its own database; the root the test asked for is what the server will be started with.
    SvcServer.artifact_root = default_artifact_root


@pytest.fixture(autouse=True)
def _svc_server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    if SERVER == "svc":
        module = request.module
        if hasattr(module, "ServerThread"):
            monkeypatch.setattr(module, "ServerThread", SvcServer)
        if hasattr(module, "initialize_backend_stores"):
            monkeypatch.setattr(module, "initialize_backend_stores", _capture_backend_stores)
        if hasattr(module, "_init_server"):
            monkeypatch.setattr(module, "_init_server", _init_svc_server)
        if "workspace_mlflow_client" in request.fixturenames:
            _send_identity(monkeypatch)
    yield
    SvcServer.artifact_root = None


def _send_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every request of the test (the client's session and the files' own requests.request calls) carries the
    # identity headers, as the ingress would add them; headers a call sets itself are kept.
    original = requests.Session.request

    def request(self, method, url, *args, headers=None, **kwargs):
        return original(self, method, url, *args, headers={**SUITE_IDENTITY, **(headers or {})}, **kwargs)

    monkeypatch.setattr(requests.Session, "request", request)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # One JSON line per test (its outcome across setup, call and teardown), for run.ts's tables.
    if not RESULTS:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        outcome = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        with open(RESULTS, "a") as f:
            f.write(json.dumps({"nodeid": report.nodeid, "outcome": outcome}) + "\n")

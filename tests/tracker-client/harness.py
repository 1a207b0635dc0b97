"""Shared pieces of the tracker client suites: named checks that print PASS/FAIL with a reason, the HTTP exchanges
behind a failure (so a report can name the endpoint, the request and the answer), and the closing JSON summary."""

import collections
import json
import os
import sys
import traceback
import uuid

import requests

# The client talks through requests.Session: remember the last exchanges so a failing check can show them.
_exchanges = collections.deque(maxlen=6)
_count = [0]
_original_request = requests.Session.request


def _recording_request(self, method, url, *args, **kwargs):
    _count[0] += 1
    response = _original_request(self, method, url, *args, **kwargs)
    body = kwargs.get("json") if kwargs.get("json") is not None else kwargs.get("params")
    shown = json.dumps(body, default=str)[:400] if body is not None else ""
    if kwargs.get("stream") or "json" not in response.headers.get("content-type", ""):
        answer = f"<{response.headers.get('content-type', 'no content-type')}>"
    else:
        answer = response.text[:400]
    _exchanges.append(f"{method.upper()} {url} {shown} -> {response.status_code} {answer}")
    return response


requests.Session.request = _recording_request


def exchanges_since(mark):
    """The exchanges recorded after `mark` (the value of _count[0] before a check)."""
    items = list(_exchanges)
    n = min(len(items), _count[0] - mark)
    return items[-n:] if n > 0 else []


class Suite:
    def __init__(self, name):
        self.name = name
        self.results = []
        self.suffix = uuid.uuid4().hex[:8]
        self.state = {}

    def check(self, name, fn):
        """Runs one check; an AssertionError or an exception is a failure whose reason is printed."""
        mark = _count[0]
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported, never raised
            reason = f"{type(e).__name__}: {e}".strip()
            if not isinstance(e, AssertionError) and os.environ.get("TRACKER_SUITE_TRACEBACK"):
                reason += "\n" + traceback.format_exc()
            http = exchanges_since(mark)[-3:]
            self.results.append({"check": name, "ok": False, "reason": reason, "http": http})
            print(f"FAIL {name}: {reason}")
            for line in http:
                print(f"     http: {line}")
        else:
            self.results.append({"check": name, "ok": True})
            print(f"PASS {name}")
        sys.stdout.flush()

    def fixture(self, make):
        """Decorator: data that several checks read, made on first use by whichever check asks first, and only once.
        When making it fails, each check that asks fails with that reason; the checks that do not ask still run."""
        made = {}

        def get():
            if "value" not in made and "reason" not in made:
                try:
                    made["value"] = make()
                except Exception as e:  # noqa: BLE001 - reported by every check that needs it
                    made["reason"] = f"{type(e).__name__}: {e}".strip()
            if "reason" in made:
                raise AssertionError(f"blocked: the fixture {make.__name__} could not be made ({made['reason']})")
            return made["value"]

        get.__name__ = make.__name__
        return get

    def needs(self, *keys):
        """State an earlier check left behind; a clear reason when that check failed."""
        missing = [k for k in keys if k not in self.state]
        if missing:
            raise AssertionError(f"blocked: an earlier check did not produce {', '.join(missing)}")
        return [self.state[k] for k in keys] if len(keys) > 1 else self.state[keys[0]]

    def finish(self):
        failed = [r for r in self.results if not r["ok"]]
        summary = {
            "suite": self.name,
            "tracking_uri": os.environ.get("MLFLOW_TRACKING_URI"),
            "passed": len(self.results) - len(failed),
            "failed": len(failed),
            "failures": [{k: r[k] for k in ("check", "reason", "http")} for r in failed],
        }
        print(json.dumps(summary))
        print(f"{summary['passed']} passed, {summary['failed']} failed")
        sys.exit(1 if failed else 0)


def expect(actual, expected, what):
    assert actual == expected, f"{what}: expected {expected!r}, got {actual!r}"


def error_code(exc):
    return getattr(exc, "error_code", None)


def raises(code, fn, what):
    """fn must raise an MlflowException carrying `code` (the wire's error_code)."""
    from mlflow.exceptions import MlflowException

    try:
        fn()
    except MlflowException as e:
        assert error_code(e) == code, f"{what}: expected error_code {code}, got {error_code(e)} ({e})"
        return e
    raise AssertionError(f"{what}: expected an MlflowException {code}, but the call succeeded")

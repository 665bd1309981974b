"""A flow asks in one server process; after that process stopped, another takes the flow
over, is answered, and resumes it: the resume there is a span linked to the ask made in the
first, through the trace context the store kept with the request.

Each server is ``pawflow serve``'s own app (``tests/fixtures/traced_serve.py``) recording
its spans with the SDK's in-memory exporter.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pawflow import open_store
from pawflow.client import Client
from pawflow.flow import FlowFile
from pawflow.flow import deployments as deps
from pawflow.server.credentials import issue_token
from pawflow.server.testing import free_port
from pawflow.testing import eventually
from tests.operations.test_prometheus import FLOW

pytestmark = pytest.mark.slow

TRACED_SERVE = Path(__file__).parents[1] / "fixtures" / "traced_serve.py"
Span = dict[str, Any]


class Traced:
    """One traced server process on ``db``."""

    def __init__(self, db: str, directory: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = (directory / f"serve-{self.port}.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(TRACED_SERVE), db, str(self.port)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=directory,
        )

        def up() -> bool:
            assert self.process.poll() is None, "the traced server exited"
            with contextlib.suppress(httpx.TransportError):
                return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
            return False

        eventually(up, timeout=60, interval=0.05)

    def spans(self) -> list[Span]:
        spans: list[Span] = httpx.get(f"{self.url}/test/spans", timeout=10).json()
        return spans

    def stop(self) -> None:
        """Stop as an operator does (Ctrl-C): the flow's lease is given up on the way out."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()


@contextlib.contextmanager
def traced(db: str, directory: Path) -> Iterator[Traced]:
    server = Traced(db, directory)
    try:
        yield server
    finally:
        server.stop()


def named(spans: list[Span], name: str, request_id: str) -> Span | None:
    return next(
        (
            s
            for s in spans
            if s["name"] == name and s["attributes"].get("pawflow.request_id") == request_id
        ),
        None,
    )


def linked_to(span: Span, other: Span) -> bool:
    return any(link["context"] == other["context"] for link in span["links"])


@pytest.mark.timeout(120)
def test_the_resume_in_another_process_is_linked_to_the_ask(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'pawflow.db'}"
    with open_store(db) as store:
        conversation = store.create_conversation("ada", "Releases").id
        token = issue_token(store, "ada")
        deployment, _ = deps.deploy(store, FLOW, conversation_id=conversation)

        with traced(db, tmp_path) as first:
            deps.inject(store, deployment.id, FlowFile.create(attributes={"n": "1"}))
            request = eventually(lambda: store.list_interactions(user="ada", status="pending"))[0]
            ask = eventually(lambda: named(first.spans(), "pawflow.ask", request.id))
        assert first.process.returncode is not None  # stopped: nothing of it runs any more
        assert ask["attributes"]["pawflow.kind"] == "confirm"
        assert ask["attributes"]["pawflow.conversation_id"] == conversation

        with traced(db, tmp_path) as second, Client(second.url, token) as client:
            client.respond_interaction(request.id, True)
            resume = eventually(
                lambda: named(second.spans(), "pawflow.resume", request.id), timeout=30
            )
            httpx.get(f"{second.url}/signin?token=not-a-real-sign-in-token-123")

            def with_signin() -> list[Span] | None:
                found = second.spans()
                return found if any("/signin" in s["name"] for s in found) else None

            spans = eventually(with_signin)

    # The resume, in the second process, is linked to the ask made in the first.
    assert linked_to(resume, ask)
    assert resume["context"]["trace_id"] != ask["context"]["trace_id"]
    assert resume["attributes"]["pawflow.requester"] == "flow"
    assert resume["attributes"]["pawflow.outcome"] == "answered"
    assert resume["attributes"]["pawflow.deployment_id"] == deployment.id
    # So are the answer (inside the HTTP request's span, from the FastAPI instrumentation)
    # and the delivery of the answer to the flow.
    answer = named(spans, "pawflow.answer", request.id)
    assert answer is not None and linked_to(answer, ask)
    parent = next(s for s in spans if s["context"]["span_id"] == answer["parent_id"])
    assert parent["kind"] == "SpanKind.SERVER"
    assert parent["context"]["trace_id"] == answer["context"]["trace_id"]
    deliveries = [s for s in spans if s["name"] == "pawflow.deliver" and linked_to(s, ask)]
    assert deliveries
    # No span carries a secret of a URL.
    assert "not-a-real-sign-in-token-123" not in str(spans)

"""Deployed flows inside a real ``pawflow serve`` process, restarted (killed) mid-wait."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from pawflow import open_store
from pawflow.demo.flows import DEMO_FLOW
from pawflow.demo.flows import deploy_expense_demo as demo_setup
from pawflow.flow import FlowFile, FlowService
from pawflow.flow import deployments as deps
from pawflow.flow.status import deployment_status
from pawflow.records import Interaction
from pawflow.server.testing import free_port
from pawflow.store import Store
from pawflow.testing import eventually

pytestmark = pytest.mark.slow

FLOW = """
name: release
tasks:
  ask:
    type: requestConfirmation
    properties: {message: "Release ${version}?"}
    next: wait
  wait:
    type: durableWait
    next: route
  route:
    type: routeOnAttribute
    properties:
      routes:
        approved: {attribute: durable.wait.value, path: $.answer, equals: true}
    next:
      approved: tell
      unmatched: tell
  tell:
    type: notifyUser
    properties:
      message: "release ${version}: ${route.relationship}"
"""


@contextmanager
def server(db: str) -> Iterator[subprocess.Popen[bytes]]:
    port = free_port()
    env = {
        **os.environ,
        "PAWFLOW_SWEEP_INTERVAL": "1",
        # A restarted server takes the deployment over once the dead one's lease ran out: a
        # short time to live, so the test does not wait out the default ten seconds.
        "PAWFLOW_LEASE_TTL": "3",
        "PAWFLOW_MAX_CLOCK_SKEW": "0.5",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "pawflow", "serve", "--db", db, "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def healthy() -> bool:
            assert process.poll() is None, "pawflow serve exited"
            try:
                return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).is_success
            except httpx.HTTPError:
                return False

        eventually(healthy, timeout=30, interval=0.1)
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def test_a_killed_server_resumes_the_parked_flowfile_after_restart(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'pawflow.db'}"
    with open_store(db) as store:
        conversation = store.create_conversation("alice", "Releases").id
        deployment, _ = deps.deploy(store, FLOW, conversation_id=conversation)
        deps.inject(store, deployment.id, FlowFile.create(attributes={"version": "3.1"}))

    with server(db) as process, open_store(db) as store:
        question = eventually(
            lambda: store.list_interactions(user="alice", status="pending"), timeout=30
        )[0]
        assert question.message == "Release 3.1?"
        eventually(lambda: store.pending_continuations(f"flow:{deployment.id}"), timeout=30)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)

    with open_store(db) as store:
        store.respond_interaction(question.id, True, user="alice")

    with server(db), open_store(db) as store:

        def told() -> list[str]:
            with store.unit(write=False) as u:
                history = u.messages.history(conversation, user="alice")
            return [m.content for m in history if m.role == "notification"]

        assert eventually(told, timeout=30) == ["release 3.1: approved"]
        eventually(lambda: store.pending_continuations(f"flow:{deployment.id}") == 0)


def test_demo_asks_for_an_expense_once(store: Store) -> None:
    assert DEMO_FLOW.is_file()
    store.ensure_user("local")
    conversation = store.create_conversation("local", "Demo").id
    demo_setup(store, "local", conversation)
    with FlowService(store, reconcile_interval=None):

        def asked() -> list[Interaction]:
            return store.list_interactions(user="local", status="pending", kind="form")

        [form] = eventually(asked)
        assert form.conversation_id == conversation
        assert set(form.response_schema["properties"]) == {"amount", "reason", "receipt"}
        demo_setup(store, "local", conversation)  # again, as on the next start
        assert len(deps.list_deployments(store)) == 1
        assert len(asked()) == 1


def test_a_restart_asks_for_no_other_expense_once_the_first_is_closed(store: Store) -> None:
    store.ensure_user("local")
    conversation = store.create_conversation("local", "Demo").id
    demo_setup(store, "local", conversation)
    [deployment] = deps.list_deployments(store)
    demo_setup(store, "local", conversation)  # a restart before the flow ran
    assert deployment_status(store, deployment.id).incoming == 1

    def idle() -> bool:
        status = deployment_status(store, deployment.id)
        busy = sum(status.total(name) for name in ("queued", "running", "parked"))
        return status.incoming + busy == 0

    def forms() -> list[Interaction]:
        return store.list_interactions(user="local", kind="form")

    with FlowService(store, reconcile_interval=None):
        [form] = eventually(lambda: [f for f in forms() if f.status == "pending"])
        store.cancel_interaction(form.id, user="local")  # closed: no longer pending
        eventually(idle)
        demo_setup(store, "local", conversation)  # the next start
        eventually(idle)
    assert [f.id for f in forms()] == [form.id]

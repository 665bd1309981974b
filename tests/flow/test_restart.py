"""Parked FlowFiles survive closing everything and reopening the same database file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pawflow import FakeClock, Store, open_store
from pawflow.flow import FlowFile, FlowInstance, FlowService
from pawflow.flow import deployments as deps
from pawflow.testing import eventually
from tests.flow.test_durable_flows import CHAIN, TIMER


@contextmanager
def running(path: Path, clock: FakeClock) -> Iterator[tuple[Store, FlowService]]:
    """A store and a flow service, as one server process would have them."""
    store = open_store(f"sqlite:///{path}", clock=clock)
    service = FlowService(store, reconcile_interval=None)
    try:
        service.start()
        yield store, service
    finally:
        service.stop()
        store.close()


def running_instance(service: FlowService, deployment_id: str) -> FlowInstance:
    instance = service.instance(deployment_id)
    assert instance is not None, "the instance is not running"
    return instance


def test_answer_after_a_restart_resumes_the_branch(tmp_path: Path, clock: FakeClock) -> None:
    db = tmp_path / "pawflow.db"
    with running(db, clock) as (store, service):
        conversation = store.create_conversation("alice").id
        deployment, _ = deps.deploy(store, CHAIN, conversation_id=conversation)
        service.reconcile()
        instance = running_instance(service, deployment.id)
        instance.inject(FlowFile.create("v2 notes", {"version": "2.0"}))
        question = eventually(lambda: store.list_interactions(user="alice", status="pending"))[0]
        eventually(lambda: store.pending_continuations(instance.target))

    clock.advance("1d")
    with open_store(f"sqlite:///{db}", clock=clock) as store:
        # Answered while no server runs: it stays resolved, waiting for its instance.
        store.respond_interaction(question.id, True, user="alice")
        store.sweep()
        assert store.pending_continuations(f"flow:{deployment.id}") == 1

    with running(db, clock) as (store, service):
        instance = running_instance(service, deployment.id)
        [ending] = eventually(lambda: instance.endings())
        assert (ending.task_id, ending.relationship) == ("route", "approved")
        assert ending.flowfile.content == b"v2 notes"
        assert ending.flowfile.attributes["version"] == "2.0"
        value = json.loads(ending.flowfile.attributes["durable.wait.value"])
        assert value == {"status": "answered", "answer": True}
        assert store.pending_continuations(instance.target) == 0


def test_answer_between_restarts_with_the_server_up(tmp_path: Path, clock: FakeClock) -> None:
    db = tmp_path / "pawflow.db"
    with running(db, clock) as (store, service):
        conversation = store.create_conversation("alice").id
        deployment, _ = deps.deploy(store, CHAIN, conversation_id=conversation)
        service.reconcile()
        instance = running_instance(service, deployment.id)
        instance.inject(FlowFile.create())
        question = eventually(lambda: store.list_interactions(user="alice", status="pending"))[0]
        eventually(lambda: store.pending_continuations(instance.target))

    with running(db, clock) as (store, service):
        instance = running_instance(service, deployment.id)
        clock.advance("1d")
        store.respond_interaction(question.id, False, user="alice")
        [ending] = eventually(lambda: instance.endings())
        assert (ending.task_id, ending.relationship) == ("route", "rejected")


def test_timer_fires_once_at_its_deadline_after_a_restart(tmp_path: Path, clock: FakeClock) -> None:
    db = tmp_path / "pawflow.db"
    with running(db, clock) as (store, service):
        conversation = store.create_conversation("alice").id
        deployment, _ = deps.deploy(store, TIMER, conversation_id=conversation)
        service.reconcile()
        instance = running_instance(service, deployment.id)
        instance.inject(FlowFile.create(attributes={"job": "a"}))
        eventually(lambda: store.pending_continuations(instance.target))

    with running(db, clock) as (store, service):
        instance = running_instance(service, deployment.id)
        clock.advance("1h")
        store.sweep()
        assert instance.endings() == []
        clock.advance("1h")
        store.sweep()
        [ending] = eventually(lambda: instance.endings())
        assert ending.task_id == "remind"
        assert ending.flowfile.attributes["durable.timer.status"] == "elapsed"

    with running(db, clock) as (store, service):
        instance = running_instance(service, deployment.id)
        clock.advance("1d")
        store.sweep()
        assert instance.wait_idle()
        assert instance.endings() == []
        assert store.pending_continuations(instance.target) == 0


def test_the_service_releases_a_timer_at_its_deadline_without_a_sweep(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'p.db'}") as store:
        conversation = store.create_conversation("alice").id
        text = TIMER.replace('{duration: 2h, cancel_signal_id: "cancel-${job}"}', "{duration: 1s}")
        deployment, _ = deps.deploy(store, text, conversation_id=conversation)
        with FlowService(store, reconcile_interval=0.5) as service:
            instance = running_instance(service, deployment.id)
            instance.inject(FlowFile.create())
            [ending] = eventually(lambda: instance.endings())
            assert ending.flowfile.attributes["durable.timer.status"] == "elapsed"

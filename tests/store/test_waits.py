"""SQLite: store calls that refuse to wait (on an event loop) refuse before anything stands.

Inside ``refusing_waits`` a write that would wait — for another process's writer, for this
process's writer past a short while, or to hand what it resolved to a handler of this
process — raises ``WouldWait`` with nothing of it committed, so the caller can run the whole
call again where it may wait. Once a write of the call has committed, later ones wait as
anywhere (the call cannot be run again). Two stores opened on one file stand for two
processes, as in ``test_writers.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from pawflow import open_store
from pawflow.clock import FakeClock
from pawflow.errors import StoreUnavailable
from pawflow.store import Delivery, Park, Question, Store, WouldWait, refusing_waits
from pawflow.testing import eventually


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'shared.db'}"


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    opened = open_store(url)
    yield opened
    opened.close()


class Holder:
    """A write transaction of ``store`` held open on a thread of its own until ``let_go``."""

    def __init__(self, store: Store) -> None:
        self._holding, self._go = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._hold, args=(store,))
        self._thread.start()
        assert self._holding.wait(30)

    def _hold(self, store: Store) -> None:
        with store.unit() as u:
            u.messages.notify_user("holder", "holding")
            self._holding.set()
            self._go.wait(30)

    def let_go(self) -> None:
        self._go.set()
        self._thread.join(30)

    def __enter__(self) -> Holder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.let_go()


def _conversations(store: Store, user: str) -> int:
    return len(store.list_conversations(user=user))


def test_a_write_refuses_to_wait_for_another_process_and_leaves_nothing(
    store: Store, url: str
) -> None:
    other = open_store(url)
    try:
        with Holder(other), pytest.raises(WouldWait), refusing_waits():
            store.create_conversation("ann", "refused")
        assert _conversations(store, "ann") == 0
        with refusing_waits():  # free again: it goes through
            store.create_conversation("ann", "written")
        assert _conversations(store, "ann") == 1
    finally:
        other.close()


def test_a_write_refuses_to_wait_long_for_a_writer_of_this_process(store: Store) -> None:
    with Holder(store), pytest.raises(WouldWait), refusing_waits():
        store.create_conversation("ann", "refused")
    assert _conversations(store, "ann") == 0


def test_reads_go_on_while_a_writer_holds_the_store(store: Store) -> None:
    store.create_conversation("ann", "before")
    with Holder(store), refusing_waits():
        assert _conversations(store, "ann") == 1


def test_once_a_write_of_the_call_committed_the_next_one_waits(store: Store, url: str) -> None:
    other = open_store(url)
    try:
        store.db.busy_timeout = 0.2  # type: ignore[attr-defined]
        with refusing_waits():
            store.create_conversation("ann", "first")
            # It cannot be run again now: it waits, here out of time, and says so.
            with Holder(other), pytest.raises(StoreUnavailable):
                store.create_conversation("ann", "second")
        assert _conversations(store, "ann") == 1
    finally:
        other.close()


def test_an_answer_to_hand_to_a_handler_here_is_refused_and_stays_pending(store: Store) -> None:
    delivered: list[str] = []
    store.register_handler("resume", lambda d: delivered.append(d.continuation.target))
    conversation = store.create_conversation("ann", "asks")
    asked = store.ask(
        Question("ann", conversation.id, "confirm", "Ship it?"), park=Park("resume:run-1")
    )
    request_id = asked.interaction.id
    with pytest.raises(WouldWait), refusing_waits():
        store.respond_interaction(request_id, True, user="ann")
    assert delivered == []
    assert store.get_interaction(request_id, user="ann").status == "pending"
    store.respond_interaction(request_id, True, user="ann")  # where it may wait
    assert delivered == ["resume:run-1"]
    assert store.get_interaction(request_id, user="ann").status == "answered"


def test_an_answer_nobody_here_takes_goes_through_without_waiting(store: Store) -> None:
    conversation = store.create_conversation("ann", "asks")
    asked = store.ask(
        Question("ann", conversation.id, "confirm", "Ship it?"), park=Park("elsewhere:run-1")
    )
    with refusing_waits():
        answered = store.respond_interaction(asked.interaction.id, True, user="ann")
    assert answered.status == "answered"
    assert asked.continuation is not None
    assert store.get_continuation(asked.continuation.id).status == "resolved"


def test_wouldwait_is_not_caught_as_an_error() -> None:
    assert not issubclass(WouldWait, Exception)
    caught: list[BaseException] = []
    with pytest.raises(WouldWait):
        try:
            raise WouldWait
        except Exception as exc:  # what code going on without a failed step catches
            caught.append(exc)
    assert caught == []


def test_what_a_commit_on_the_loop_sets_due_is_delivered_on_a_thread(url: str) -> None:
    clock = FakeClock()
    store = open_store(url, clock=clock)
    try:
        failing = [True]
        delivered: list[str] = []

        def deliver(delivery: Delivery) -> None:
            if failing[0]:
                raise RuntimeError("not yet")  # deferred: due again later
            delivered.append(threading.current_thread().name)

        store.register_handler("resume", deliver)
        store.park("resume:run-1", signal_id="go")
        store.notify_signal("go")  # resolved, and deferred by the failing handler
        failing[0] = False
        clock.advance(timedelta(minutes=5))  # due again
        conversation = store.create_conversation("ann", "asks")
        asked = store.ask(
            Question("ann", conversation.id, "confirm", "Ship it?"), park=Park("elsewhere:run-2")
        )
        with refusing_waits():  # its commit's notice sets the handlers here going ...
            store.respond_interaction(asked.interaction.id, True, user="ann")
        eventually(lambda: len(delivered) == 1)
        assert delivered != [threading.current_thread().name]  # ... on a thread of their own
    finally:
        store.close()

"""Which resolved continuations a process locks to deliver: only those it takes."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from pawflow import Delivery, FakeClock, Store, open_store
from pawflow.testing import eventually


class Takes:
    """A handler of ``flow:`` that takes one target only (as a flow runner takes its own
    flows); ``hold`` keeps its delivery's transaction open until released."""

    def __init__(self, target: str, hold: bool = False) -> None:
        self.target = target
        self.hold = hold
        self.entered = threading.Event()
        self.release = threading.Event()
        self.taken: list[str] = []

    def accepts(self, target: str) -> bool:
        return target == self.target

    def deliver(self, delivery: Delivery) -> None:
        self.taken.append(delivery.continuation.target)
        self.entered.set()
        if self.hold:
            self.release.wait(10)


def test_a_process_leaves_unlocked_what_it_does_not_take(store: Store, clock: FakeClock) -> None:
    if store.dialect != "postgres":
        pytest.skip("SQLite writers take turns: one process's transaction holds every row")
    url: Any = store.db.url  # type: ignore[attr-defined]
    for name in ("a", "b"):
        store.park(f"flow:{name}", signal_id=f"go-{name}")
        store.notify_signal(f"go-{name}")  # resolved: nobody here takes flows
    first, second = Takes("flow:a", hold=True), Takes("flow:b")
    with open_store(url, clock=clock) as one, open_store(url, clock=clock) as other:
        delivering = threading.Thread(target=one.register_handler, args=("flow", first))
        delivering.start()
        try:
            assert first.entered.wait(10)  # its transaction is open, flow:a locked
            other.register_handler("flow", second)
            eventually(lambda: second.taken == ["flow:b"], timeout=3)
        finally:
            first.release.set()
            delivering.join(10)
    assert first.taken == ["flow:a"]

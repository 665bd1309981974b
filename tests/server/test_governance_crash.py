"""Reminders and escalation steps survive a SIGKILL of a real ``pawflow serve``: each fires
once, never skipped and never doubled, however often the server dies mid-sweep."""

from __future__ import annotations

import random
import time
from datetime import timedelta
from pathlib import Path

import pytest

from pawflow import FakeClock, Store, SystemClock
from pawflow.store import Question
from pawflow.store.engine.database import sql
from pawflow.testing import eventually
from tests.served import Served
from tests.store.test_concurrency import store_url

REQUESTS = 8
"""Asked in each round, while a server runs."""
ROUNDS = 3


def _steps(store: Store) -> dict[str, list[str]]:
    with store.transaction(write=False) as tx:
        rows = sql(tx).all(
            "SELECT request_id, action FROM request_audit WHERE action IN ('reminded', 'escalated')"
            " ORDER BY seq"
        )
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row["request_id"], []).append(row["action"])
    return found


EXPECTED = ["escalated", "escalated", "reminded"]


def _ask(store: Store, clock: FakeClock, conversation_id: str, n: int) -> str:
    # The server runs on the wall clock: the requests were asked 30 hours before it.
    clock.set(SystemClock().now() - timedelta(hours=30))
    return store.ask(
        Question(
            "carol",
            conversation_id,
            "confirm",
            f"Ship {n}?",
            policy={
                "assignees": ["ada"],
                "remind_every": "1d",
                "escalate": [{"after": "4h", "to": ["lee"]}, {"after": "1d", "to": ["cto"]}],
            },
        )
    ).interaction.id


def _done(store: Store, count: int) -> bool:
    steps = _steps(store)
    return len(steps) == count and all(len(found) >= len(EXPECTED) for found in steps.values())


@pytest.mark.slow
def test_reminders_and_escalations_fire_once_each_across_sigkills(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    conversation = store.create_conversation("carol")
    asked: list[str] = []
    served = Served(store_url(store, tmp_path), tmp_path, env={"PAWFLOW_SWEEP_INTERVAL": "0.05"})
    rng = random.Random(23)
    try:
        for _ in range(ROUNDS):  # die at some point of a sweep, or between two
            served.start()
            # Due as they are asked: the running server's sweeps are at them when it dies.
            asked += [_ask(store, clock, conversation.id, len(asked)) for _ in range(REQUESTS)]
            time.sleep(rng.uniform(0, 0.3))  # where the kill lands, not what is asserted
            served.kill()
        served.start()
        eventually(lambda: _done(store, len(asked)), timeout=60)
        # One more request, due as well: once its steps are in, later sweeps have run too.
        asked.append(_ask(store, clock, conversation.id, len(asked)))
        eventually(lambda: _done(store, len(asked)), timeout=60)
    finally:
        served.kill()
    steps = _steps(store)
    assert sorted(steps) == sorted(asked)
    assert all(sorted(found) == EXPECTED for found in steps.values()), steps
    cto = [e for e in store.events_after("cto", 0, 10_000) if e.type == "interaction_notice"]
    assert sorted(e.data["request_id"] for e in cto if e.data["reason"] == "escalate") == sorted(
        asked
    )

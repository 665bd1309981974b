"""Checkpoints: keyed (run_id, step_id), TTL enforced on read, pinning, the payload cap."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pawflow.agent import CheckpointStore
from pawflow.clock import FakeClock
from pawflow.errors import NotFound, PayloadTooLarge
from pawflow.store import Store
from pawflow.store.engine.database import sql


@pytest.fixture
def checkpoints(store: Store) -> CheckpointStore:
    return CheckpointStore(store)


def put(checkpoints: CheckpointStore, run: str, step: str, session: str | None = "s1") -> None:
    checkpoints.put(
        run,
        step,
        {"step": step, "text": "é"},
        agent="a",
        halt_reason="awaiting_user_input",
        session_id=session,
    )


def test_round_trip_and_overwrite(checkpoints: CheckpointStore) -> None:
    put(checkpoints, "r1", "0001")
    saved = checkpoints.get("r1", "0001")
    assert saved is not None
    assert (saved.payload, saved.session_id, saved.halt_reason) == (
        {"step": "0001", "text": "é"},
        "s1",
        "awaiting_user_input",
    )
    assert saved.expires_at - saved.created_at == timedelta(days=7)
    checkpoints.put("r1", "0001", {"v": 2}, agent="a", halt_reason="max_steps")
    again = checkpoints.get("r1", "0001")
    assert again is not None and again.payload == {"v": 2} and again.session_id is None
    assert checkpoints.get("r1", "0002") is None


def test_by_session_and_latest(checkpoints: CheckpointStore, clock: FakeClock) -> None:
    put(checkpoints, "r1", "0001")
    clock.advance("1m")
    put(checkpoints, "r1", "0002")
    clock.advance("1m")
    put(checkpoints, "r2", "0001", session="s2")
    put(checkpoints, "r3", "0001", session=None)
    assert [(c.run_id, c.step_id) for c in checkpoints.by_session("s1")] == [
        ("r1", "0002"),
        ("r1", "0001"),
    ]
    latest = checkpoints.latest("r1")
    assert latest is not None and latest.step_id == "0002"


def test_the_ttl_is_enforced_on_read_before_any_sweep(
    checkpoints: CheckpointStore, clock: FakeClock
) -> None:
    put(checkpoints, "r1", "0001")
    put(checkpoints, "r2", "0001")
    checkpoints.pin("r2", "0001")
    clock.advance("7d")
    assert checkpoints.get("r1", "0001") is None
    assert checkpoints.latest("r1") is None
    assert [c.run_id for c in checkpoints.by_session("s1")] == ["r2"]
    pinned = checkpoints.get("r2", "0001")
    assert pinned is not None and pinned.pinned
    with pytest.raises(NotFound):
        checkpoints.pin("r1", "0001")

    assert checkpoints.sweep_expired() == 1
    assert checkpoints.sweep_expired() == 0
    assert checkpoints.get("r2", "0001") is not None


def test_unpinning_gives_a_fresh_ttl(checkpoints: CheckpointStore, clock: FakeClock) -> None:
    put(checkpoints, "r1", "0001")
    checkpoints.pin("r1", "0001")
    clock.advance("30d")
    checkpoints.pin("r1", "0001", pinned=False)
    clock.advance("6d")
    assert checkpoints.get("r1", "0001") is not None
    clock.advance("1d")
    assert checkpoints.get("r1", "0001") is None


def test_the_payload_cap_refuses_rather_than_truncates(store: Store) -> None:
    checkpoints = CheckpointStore(store)
    assert checkpoints.payload_cap == 1024 * 1024
    with pytest.raises(PayloadTooLarge, match="exceeds the cap of 1048576 bytes"):
        checkpoints.put("r1", "0001", {"blob": "x" * (1024 * 1024)}, agent="a", halt_reason="h")
    assert checkpoints.get("r1", "0001") is None
    small = CheckpointStore(store, payload_cap=100)
    with pytest.raises(PayloadTooLarge):
        small.put("r1", "0001", {"blob": "x" * 100}, agent="a", halt_reason="h")


def test_expired_checkpoints_are_swept_by_the_sweeper(
    store: Store, checkpoints: CheckpointStore, clock: FakeClock
) -> None:
    store.add_sweep_step(checkpoints.sweep_step)
    put(checkpoints, "r1", "0001")
    assert store.sweep()["checkpoints_expired"] == 0
    clock.advance("8d")
    assert store.sweep()["checkpoints_expired"] == 1
    with store.transaction(write=False) as tx:
        assert sql(tx).one("SELECT count(*) AS n FROM checkpoints") == {"n": 0}

"""A worker killed with SIGKILL at random points loses nothing and delivers nothing twice."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pawflow import FakeClock, Store, SystemClock
from pawflow.store.engine.database import sql
from tests.store.crash_child import CREATE_LOG, record
from tests.store.test_concurrency import store_url

CHILD = Path(__file__).with_name("crash_child.py")
ROUNDS = 4


@pytest.mark.slow
def test_sigkill_at_random_points_loses_and_duplicates_nothing(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    url = store_url(store, tmp_path)
    for seed in range(ROUNDS):
        child = subprocess.run(
            [sys.executable, str(CHILD), url, str(seed)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert child.returncode == -signal.SIGKILL, child.stderr

    # Recovery, as a restarted process does it: register the handler, sweep (on the
    # children's wall clock, so what they left resolved is due).
    clock.set(SystemClock().now())
    with store.transaction() as tx:
        sql(tx).execute(CREATE_LOG)
    store.register_handler("log", record)
    store.sweep()

    with store.transaction(write=False) as tx:
        delivered = sql(tx).all("SELECT continuation_id, signal_id FROM delivered_log")
        left = sql(tx).all("SELECT id, status, signal_id FROM continuations")
        fired = {row["signal_id"] for row in sql(tx).all("SELECT signal_id FROM signals")}
    ids = [row["continuation_id"] for row in delivered]
    assert len(ids) == len(set(ids)), "a continuation was delivered twice"
    # Whatever is left was never resolved: parked on a signal that has not fired.
    assert all(row["status"] == "parked" for row in left)
    assert not {row["signal_id"] for row in left} & fired
    # Every signal that fired with a continuation parked on it reached the handler, once.
    per_signal: dict[str, int] = {}
    for row in delivered:
        per_signal[row["signal_id"]] = per_signal.get(row["signal_id"], 0) + 1
    assert set(per_signal.values()) <= {1}
    assert len(delivered) > 0

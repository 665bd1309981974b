"""Background loops: a failing pass never ends one, its failures are logged without flooding
the log, and the health check names a loop that is not running or is failing."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import httpx
import pytest

from pawflow.errors import StoreUnavailable
from pawflow.loops import Failures, Loop
from pawflow.server.testing import live_server
from pawflow.testing import eventually, temporary_store


def test_a_failing_loop_logs_its_first_failure_whole_then_counts_until_it_recovers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failing = 9
    tries = 0

    def step() -> None:
        nonlocal tries
        tries += 1
        if tries <= failing:
            raise StoreUnavailable(f"the database is away (try {tries})")

    caplog.set_level(logging.INFO, logger="pawflow.loops")
    with Loop("probe", step, interval=0.001) as loop:
        eventually(lambda: tries > failing and loop.failures.count == 0)
    lines = [r for r in caplog.records if r.name == "pawflow.loops"]
    first, *again, recovered = lines
    assert first.levelno == logging.ERROR and first.exc_info is not None
    assert first.getMessage() == "probe failed: StoreUnavailable: the database is away (try 1)"
    # The 2nd, 4th and 8th failures, each one line with the count, no traceback.
    assert [r.getMessage().split(" (")[-1].split(" failures")[0] for r in again] == ["2", "4", "8"]
    assert all(r.exc_info is None and "failed again" in r.getMessage() for r in again)
    assert recovered.getMessage().startswith("probe recovered after ")
    assert recovered.getMessage().endswith(f"({failing} failures)")


def test_a_failing_loop_waits_longer_after_each_failure_up_to_a_bound() -> None:
    failures = Failures("probe")
    waits = []
    for _ in range(12):
        failures.failed(RuntimeError("no"))
        waits.append(failures.backoff(0.1))
    assert waits[:4] == [0.1, 0.2, 0.4, 0.8]
    assert max(waits) == 2.0 == waits[-1]
    assert failures.backoff(15.0) == 15.0  # never less than the loop's own interval
    failures.succeeded()
    assert failures.backoff(0.1) == 0.1


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_the_health_check_names_a_loop_that_stopped_or_fails(tmp_path: Path) -> None:
    fail = threading.Event()

    def doomed() -> None:
        raise SystemExit  # what no pass should do: its thread ends

    def flaky() -> None:
        if fail.is_set():
            raise StoreUnavailable("the database is away")

    with (
        temporary_store("sqlite", tmp_path) as store,
        live_server(store) as server,
        Loop("flaky", flaky, interval=0.01) as loop,
    ):
        found = httpx.get(f"{server.url}/healthz").json()
        assert found["loops"]["flaky"] == "running" and found["store"] == "ok"

        fail.set()
        eventually(lambda: loop.failures.count)
        found = httpx.get(f"{server.url}/healthz")
        assert found.status_code == 200  # the store answers: degraded, still served
        assert found.json()["status"] == "degraded"
        assert found.json()["loops"]["flaky"].startswith("failing for ")
        assert found.json()["loops"]["flaky"].endswith("StoreUnavailable: the database is away")
        fail.clear()

        with Loop("doomed", doomed, interval=0.01) as dead:
            eventually(lambda: not dead.alive)
            found = httpx.get(f"{server.url}/healthz")
            assert found.status_code == 503 and found.headers["Retry-After"] == "1"
            assert found.json()["status"] == "unavailable"
            assert found.json()["loops"]["doomed"] == "not running"

        # Once stopped, the dead loop is no longer listed, and the flaky one runs again (other
        # tests of this process may have loops of their own: only these two are this test's).
        def recovered() -> bool:
            listed = httpx.get(f"{server.url}/healthz").json()["loops"]
            return "doomed" not in listed and listed["flaky"] == "running"

        eventually(recovered)

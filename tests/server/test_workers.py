"""``pawflow serve --workers 2``: two processes on one port and one store, on SQLite and on
PostgreSQL. Requests are answered through it, a stream sees what another connection (and
another process) did, the background work is shared by leases and done once, and SIGTERM
stops every process."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import httpx
import pytest

from pawflow import FakeClock, Store, SystemClock
from pawflow.client import ServerEvent
from pawflow.testing import eventually
from tests.served import Served
from tests.server.sse import stream, until
from tests.server.test_governance_crash import EXPECTED, _ask, _steps
from tests.store.test_concurrency import store_url

pytestmark = pytest.mark.slow

DEADLINE = 120.0
"""Seconds each step may take: three Python processes start on a busy 2-core machine."""

STREAMS = 4
REQUESTS = 6


@contextmanager
def _streams(url: str, token: str) -> Iterator[list[Iterator[ServerEvent]]]:
    """``STREAMS`` event streams, each on a connection of its own (so on either worker),
    each past its ``ready``."""
    with ExitStack() as stack:
        opened = [stack.enter_context(stream(url, token)) for _ in range(STREAMS)]
        for events in opened:
            assert next(events).type == "ready"
        yield opened


def _counted(url: str) -> tuple[float, float]:
    """(requests created, requests answered through the API) in one scrape, on a new
    connection (so of either worker)."""
    text = httpx.get(f"{url}/metrics", timeout=DEADLINE).text
    created = answered = 0.0
    for line in text.splitlines():
        if line.startswith('pawflow_requests_created_total{kind="confirm"}'):
            created = float(line.split()[-1])
        elif line.startswith("pawflow_requests_closed_total{") and 'outcome="answered"' in line:
            answered += float(line.split()[-1])
    return created, answered


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended: only its exit code is left to collect


@pytest.mark.timeout(600)
def test_two_workers_serve_one_store_and_stop_on_sigterm(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    conversation = store.create_conversation("carol")
    due = [_ask(store, clock, conversation.id, n) for n in range(REQUESTS)]  # already due
    clock.set(SystemClock().now())
    served = Served(
        store_url(store, tmp_path),
        tmp_path,
        args=["--workers", "2"],
        env={"PAWFLOW_SWEEP_INTERVAL": "0.05", "PAWFLOW_METRICS": "on"},
    )
    served.start(timeout=DEADLINE)
    try:
        token = served.token("ann")
        auth = {"Authorization": f"Bearer {token}"}
        children = served.children()
        # The supervisor's two workers, and multiprocessing's resource tracker.
        assert len(children) == 3, served.output

        # Each worker runs the flow service: two live presences, two owners.
        def presences() -> int:
            with store.unit(write=False) as u:
                return len(u.leases.held("flow-process:"))

        eventually(lambda: presences() == 2, timeout=DEADLINE)

        with httpx.Client(base_url=served.url, headers=auth, timeout=DEADLINE) as api:
            made = api.post("/api/actions/create_conversation", json={})
            assert made.status_code == 200, made.text
            conversation_id = made.json()["conversation"]["id"]
            asked = []
            for n in range(2):
                reply = api.post(
                    "/api/actions/request_interaction",
                    json={
                        "conversation_id": conversation_id,
                        "kind": "confirm",
                        "message": f"{n}?",
                    },
                )
                assert reply.status_code == 200, reply.text
                asked.append(reply.json()["interaction"]["id"])
            with _streams(served.url, token) as streams:
                # Answered on a connection of its own (either worker), then by this process.
                with httpx.Client(base_url=served.url, headers=auth, timeout=DEADLINE) as other:
                    answered = other.post(
                        "/api/actions/respond_interaction",
                        json={"request_id": asked[0], "answer": True},
                    )
                    assert answered.status_code == 200, answered.text
                store.respond_interaction(asked[1], False, user="ann")
                for events in streams:
                    seen = until(events, "confirmation_answered")
                    assert seen[-1].data["id"] == asked[0]
                    seen = until(events, "confirmation_answered")
                    assert seen[-1].data["id"] == asked[1]

        # /metrics adds up the workers' tallies: whichever worker a scrape reaches, it
        # counts the two requests asked, and the one answer taken through the API.
        eventually(
            lambda: all(_counted(served.url) == (2.0, 1.0) for _ in range(6)), timeout=DEADLINE
        )

        # The sweepers of both workers ran many passes: every step fired once, none twice.
        eventually(
            lambda: (
                len(_steps(store)) == REQUESTS
                and all(len(s) >= len(EXPECTED) for s in _steps(store).values())
            ),
            timeout=DEADLINE,
        )
        steps = _steps(store)
        assert sorted(steps) == sorted(due)
        assert all(sorted(found) == EXPECTED for found in steps.values()), steps

        assert served.stop() == 0
        eventually(lambda: not any(_alive(pid) for pid in children), timeout=DEADLINE)
    finally:
        if served.process is not None:  # a failure: the supervisor and its workers go
            leftovers = served.children()
            served.kill()
            for pid in leftovers:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


@pytest.mark.timeout(600)
def test_workers_stop_when_their_supervisor_is_killed(tmp_path: Path) -> None:
    """A supervisor killed outright (SIGKILL, a crash) leaves no worker serving on."""
    served = Served(f"sqlite:///{tmp_path / 'orphans.db'}", tmp_path, args=["--workers", "2"])
    served.start(timeout=DEADLINE)
    children = served.children()
    try:
        served.kill()
        eventually(lambda: not any(_alive(pid) for pid in children), timeout=DEADLINE)
    finally:
        for pid in children:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

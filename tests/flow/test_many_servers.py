"""Three ``pawflow serve`` processes on one PostgreSQL database share the deployments.

Each deployment runs in one process (its lease); they spread over the three. Killing the
process that runs one moves it to another within 15 seconds, and its parked and queued
FlowFiles all complete there, each resumed exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from pawflow import Store, open_store
from pawflow.flow import FlowFile
from pawflow.flow import deployments as deps
from pawflow.flow.status import deployment_status
from pawflow.server.testing import free_port
from pawflow.testing import eventually, throwaway_postgres
from tests.conftest import require_postgres
from tests.flow.test_queue_crash import answer_everything

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

HERE = Path(__file__).parent
TAKEOVER_LIMIT = 15.0

FLOW = """
name: relay-{n}
imports: [queue_tasks.py]
tasks:
  pause:
    type: pause
    properties: {{seconds: "${{pause}}"}}
    next: ask
  ask:
    type: requestConfirmation
    properties: {{message: "relay-{n} ${{k}}"}}
    next: wait
  wait:
    type: durableWait
    next: tell
  tell:
    type: notifyUser
    properties: {{message: "relay-{n} ${{k}} done"}}
"""


@contextmanager
def servers(url: str, count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    env = {
        **os.environ,
        "PAWFLOW_SWEEP_INTERVAL": "1",
        # A dead server's deployments move within a time to live: a short one, so the test
        # does not wait out the default ten seconds.
        "PAWFLOW_LEASE_TTL": "3",
        "PAWFLOW_MAX_CLOCK_SKEW": "0.5",
    }
    ports = [free_port() for _ in range(count)]
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "pawflow", "serve", "--db", url, "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for port in ports
    ]
    try:
        for process, port in zip(started, ports, strict=True):

            def healthy(process: subprocess.Popen[bytes] = process, port: int = port) -> bool:
                assert process.poll() is None, "pawflow serve exited"
                try:
                    return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).is_success
                except httpx.HTTPError:
                    return False

            eventually(healthy, timeout=60, interval=0.1)
        yield started
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
        for process in started:
            process.wait(timeout=30)


def runners(store: Store, ids: list[str]) -> dict[str, int]:
    """The process id running each deployment (its lease holder, host:pid:…)."""
    with store.unit(write=False) as u:
        holders = {lease.name: lease.owner for lease in u.leases.held("flow:")}
    return {i: int(holders[f"flow:{i}"].split(":")[1]) for i in ids if f"flow:{i}" in holders}


@pytest.mark.timeout(180)
def test_three_servers_share_deployments_and_take_over_a_dead_ones() -> None:
    require_postgres()
    with throwaway_postgres() as url, open_store(url) as store:
        conversation = store.create_conversation("alice", "Relays").id
        ids = [
            deps.deploy(store, FLOW.format(n=n), conversation_id=conversation, base_dir=HERE)[0].id
            for n in range(3)
        ]
        expected: Counter[str] = Counter()
        with servers(url, 3) as processes:
            pids = {p.pid: p for p in processes}

            # Spread: one deployment in each process.
            def spread_over_all() -> dict[str, int] | None:
                found = runners(store, ids)
                return found if len(set(found.values())) == 3 else None

            spread = eventually(spread_over_all, timeout=30, interval=0.1)
            assert set(spread.values()) == set(pids)

            for n, deployment_id in enumerate(ids):
                for k in range(4):
                    attributes = {"k": str(k), "pause": "0"}
                    deps.inject(store, deployment_id, FlowFile.create(attributes=attributes))
                    expected[f"relay-{n} {k} done"] += 1
            eventually(
                lambda: all(deployment_status(store, i).total("parked") == 4 for i in ids),
                timeout=30,
                interval=0.1,
            )

            # Slow work queued and running in the victim, four parked: then its process dies.
            victim = ids[0]
            for k in range(4, 10):
                attributes = {"k": str(k), "pause": "1"}
                deps.inject(store, victim, FlowFile.create(attributes=attributes))
                expected[f"relay-0 {k} done"] += 1
            eventually(
                lambda: deployment_status(store, victim).tasks["pause"]["running"] > 0, interval=0.1
            )
            owner = spread[victim]
            pids[owner].send_signal(signal.SIGKILL)
            pids[owner].wait(timeout=30)
            killed_at = time.monotonic()
            # Answered while nobody runs it: the resumes wait in the store for the new owner.
            answer_everything(store)

            moved = eventually(
                lambda: (
                    (runner := runners(store, [victim]).get(victim)) not in (None, owner) and runner
                ),
                timeout=TAKEOVER_LIMIT + 5,
                interval=0.1,
            )
            assert time.monotonic() - killed_at < TAKEOVER_LIMIT
            assert moved in pids and pids[moved].poll() is None

            def told() -> Counter[str]:
                answer_everything(store)
                with store.unit(write=False) as u:
                    history = u.messages.history(conversation, user="alice")
                return Counter(m.content for m in history if m.role == "notification")

            eventually(
                lambda: sum(told().values()) >= sum(expected.values()), timeout=60, interval=0.1
            )
            eventually(
                lambda: all(
                    not any(
                        deployment_status(store, i).total(s)
                        for s in ("queued", "running", "parked")
                    )
                    for i in ids
                ),
                timeout=30,
                interval=0.1,
            )
            assert told() == expected  # every FlowFile completed, each resumed exactly once
            assert store.pending_continuations(f"flow:{victim}") == 0

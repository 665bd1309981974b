"""Two ``pawflow serve`` processes on one PostgreSQL database; the one running a deployment
freezes (SIGSTOP) in the middle of a batch, longer than a lease lives, and thaws (SIGCONT)
once the other has taken its work over.

While it is frozen every lease it held moves to the other server — the deployment's, the
outbox's, its presence — under the one time to live ``PAWFLOW_LEASE_TTL`` sets. The other
server runs the interrupted batch again from its start, as after a crash. The thawed server
runs nothing more of it: its workers check, by the monotonic clock, that the lease was
renewed recently enough before each task, and it was not. So every FlowFile runs once in the
server that took over, and the only task run twice is the one the frozen server ran before
it froze (its batch's outcome was never recorded: at least once, as after a crash).
"""

from __future__ import annotations

import re
import signal
from collections import Counter
from pathlib import Path

import pytest

from pawflow import Store, open_store
from pawflow.flow import FlowFile
from pawflow.flow import deployments as deps
from pawflow.flow.status import deployment_status
from pawflow.store.engine.database import sql
from pawflow.testing import eventually, throwaway_postgres
from tests.conftest import require_postgres
from tests.served import Served

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(180)]

HERE = Path(__file__).parent
COUNT = 40
SETTINGS = {
    "PAWFLOW_LEASE_TTL": "4s",
    "PAWFLOW_MAX_CLOCK_SKEW": "1s",
    "PAWFLOW_LOG_LEVEL": "info",
    # A resumed continuation one server's pass locked while another looked for it waits for
    # the next sweep.
    "PAWFLOW_SWEEP_INTERVAL": "1",
}

FLOW = f"""
name: frozen
queue_capacity: 1000
imports: [queue_tasks.py]
tasks:
  fan:
    type: fanOut
    properties: {{count: "{COUNT}"}}
    next: visit
  visit:
    type: recordVisit
"""


def visits(store: Store) -> list[tuple[str, int]]:
    """(FlowFile, process) of each visit, in the order they were written."""
    with store.transaction(write=False) as tx:
        rows = sql(tx).all("SELECT flowfile_id, pid FROM visits WHERE task = 'visit'")
    return [(str(row["flowfile_id"]), int(row["pid"])) for row in rows]


def holders(store: Store) -> dict[str, int]:
    """The process id holding each live lease (owners are ``host:pid:…`` or
    ``host-pid-…``)."""
    found = {}
    with store.unit(write=False) as u:
        live = u.leases.held()
    for lease in live:
        match = re.search(r"[:-](\d+)[:-][0-9a-f]+$", lease.owner)
        assert match is not None, lease.owner
        found[lease.name] = int(match.group(1))
    return found


def stopped(pid: int) -> bool:
    """Whether the process is stopped (SIGSTOP), as /proc tells it."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return fields[0] == "T"


def test_a_server_frozen_past_its_leases_runs_nothing_of_its_batch_once_thawed(
    tmp_path: Path,
) -> None:
    require_postgres()
    with throwaway_postgres() as url, open_store(url) as store:
        conversation = store.create_conversation("alice", "Frozen").id
        deployment, _ = deps.deploy(store, FLOW, conversation_id=conversation, base_dir=HERE)
        target = f"flow:{deployment.id}"
        frozen = Served(url, tmp_path, env={**SETTINGS, "PAWFLOW_TEST_STOP_AT_VISIT": "1"})
        other = Served(url, tmp_path, env=SETTINGS)
        try:
            frozen.start()
            assert frozen.process is not None
            a = frozen.process.pid
            # It runs the deployment and sends the outbox.
            eventually(
                lambda: (
                    holders(store).get(target) == a and holders(store).get("channels:outbox") == a
                ),
                timeout=30,
                interval=0.1,
            )
            other.start()
            assert other.process is not None
            b = other.process.pid
            eventually(lambda: b in holders(store).values(), timeout=30, interval=0.1)
            assert holders(store)[target] == a

            # One FlowFile fans out into a batch of COUNT; the first visit freezes its server.
            deps.inject(store, deployment.id, FlowFile.create())
            eventually(lambda: stopped(a), timeout=60)
            [(first, visitor)] = visits(store)
            assert visitor == a

            # Every lease it held moves to the other server within a few times to live, and
            # the other runs the whole batch.
            def moved() -> bool:
                held = holders(store)
                return set(held.values()) == {b} and {target, "channels:outbox"} <= set(held)

            eventually(moved, timeout=20, interval=0.1)
            eventually(
                lambda: len({f for f, pid in visits(store) if pid == b}) == COUNT,
                timeout=60,
                interval=0.1,
            )
            eventually(
                lambda: deployment_status(store, deployment.id).total("running") == 0, interval=0.1
            )

            # Thawed: it finds its lease gone and stops the deployment, running nothing more.
            seen = len(frozen.output)
            frozen.process.send_signal(signal.SIGCONT)
            eventually(
                lambda: any("stopped here" in line for line in frozen.output[seen:]),
                timeout=60,
                interval=0.1,
            )
            assert frozen.process.poll() is None
            done = visits(store)
            by_server = Counter(pid for _, pid in done)
            assert by_server == {a: 1, b: COUNT}  # nothing in the thawed server after its thaw
            twice = [f for f, n in Counter(f for f, _ in done).items() if n > 1]
            assert twice == [first]  # only what it ran before it froze ran again
            assert deployment_status(store, deployment.id).total("queued") == 0
        finally:
            frozen.kill()
            other.kill()

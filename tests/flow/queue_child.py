"""A server process for the durable-queue crash test: ``python -m tests.flow.queue_child URL N``.

It runs the flow service (with short leases, so the next process takes over at once) and a
sweeper. With N > 0 it kills itself with SIGKILL at its N-th statement, inside or between
transactions of any of its threads; with ``PAWFLOW_TEST_KILL_AT_QUESTIONS=Q``, as soon as
the store holds Q questions.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from pawflow import Store, Sweeper, open_store
from pawflow.flow import FlowService
from pawflow.store.engine.database import sql
from tests.store.crash_child import arm


def main() -> None:
    url, kill_after = sys.argv[1], int(sys.argv[2])
    if kill_after > 0:
        arm(kill_after)
    with open_store(url) as store:
        service = FlowService(store, reconcile_interval=0.2, lease_ttl=1.0, heartbeat=0.3)
        sweeper = Sweeper(store, interval=0.5)
        service.start()
        sweeper.start()
        questions = int(os.environ.get("PAWFLOW_TEST_KILL_AT_QUESTIONS") or 0)
        if questions:
            kill_when_asked(store, questions)
        threading.Event().wait()  # until killed


def kill_when_asked(store: Store, questions: int) -> None:
    """SIGKILL this process once the store holds ``questions`` questions."""
    pause = threading.Event()
    while True:
        with store.transaction(write=False) as tx:
            row = sql(tx).one("SELECT count(*) AS n FROM interactions")
        if row is not None and row["n"] >= questions:
            os.kill(os.getpid(), signal.SIGKILL)
        pause.wait(0.002)


if __name__ == "__main__":
    main()

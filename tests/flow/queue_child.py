"""A server process for the durable-queue crash test: ``python -m tests.flow.queue_child URL N``.

It runs the flow service (with short leases, so the next process takes over at once) and a
sweeper. With N > 0 it kills itself with SIGKILL at its N-th statement, inside or between
transactions of any of its threads.
"""

from __future__ import annotations

import sys
import threading

from pawflow import Sweeper, open_store
from pawflow.flow import FlowService
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
        threading.Event().wait()  # until killed


if __name__ == "__main__":
    main()

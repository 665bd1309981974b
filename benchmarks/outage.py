"""A PostgreSQL outage, on a cluster of the run's own (``initdb`` and ``pg_ctl`` in a
temporary folder, on a free loopback port; never the shared server): how soon a call fails
while the server is stopped, how soon calls succeed once ``pg_ctl start`` has returned, and
how soon, after a restart of the idle server, a signal fired by another store instance (as
another process would) reaches this one's handler through LISTEN/NOTIFY — no sweeper runs.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable

from common import ROOT, Run, ms

from pawflow import Delivery, StoreUnavailable, open_store

if str(ROOT) not in sys.path:  # the cluster helper the tests use
    sys.path.insert(0, str(ROOT))

from tests.pgcluster import private_cluster

TIMEOUT = 5.0  # PAWFLOW_DB_TIMEOUT's default
WAIT = 30.0  # seconds a recovery may take before the benchmark gives up


def _failing(call: Callable[[], object]) -> float:
    """Seconds until ``call`` raises ``StoreUnavailable``."""
    started = time.perf_counter()
    try:
        call()
    except StoreUnavailable:
        return time.perf_counter() - started
    raise SystemExit("a call succeeded while the server was stopped")


def _until_it_works(call: Callable[[], object]) -> float:
    """Seconds until ``call`` succeeds, tried every millisecond."""
    started = time.perf_counter()
    while True:
        try:
            call()
            return time.perf_counter() - started
        except StoreUnavailable:
            if time.perf_counter() - started > WAIT:
                raise SystemExit(f"calls still failed {WAIT} s after the server was back") from None
            time.sleep(0.001)


def section(run: Run) -> None:
    run.heading("Outage: a PostgreSQL cluster of the run's own, stopped and restarted")
    logging.disable(logging.ERROR)  # each outage is logged, as it should be: not here
    try:
        _measure(run)
    finally:
        logging.disable(logging.INFO)


def _measure(run: Run) -> None:
    with private_cluster() as cluster:
        if cluster is None:
            run.skip("outage", "initdb and pg_ctl are not installed")
            return
        url = cluster.create_database()
        rounds = run.n(5, 2)
        with open_store(url, timeout=TIMEOUT) as store, open_store(url, migrate=False) as other:
            store.ensure_user("bench")
            first, later, back = [], [], []
            for _ in range(rounds):
                cluster.stop("fast")
                first.append(_failing(lambda: store.create_conversation("bench")))
                later.append(_failing(lambda: store.create_conversation("bench")))
                cluster.start()  # returns once the server accepts connections
                back.append(_until_it_works(lambda: store.create_conversation("bench")))
            bound = f"bound {TIMEOUT:g} s (PAWFLOW_DB_TIMEOUT)"
            run.figure("first call while stopped fails after", ms(max(first)), "ms", against=bound)
            run.figure("next call while stopped fails after", ms(max(later)), "ms", against=bound)
            run.figure("calls succeed again after pg_ctl start, worst", ms(max(back)), "ms")

            resumed: dict[str, float] = {}
            arrived = threading.Condition()

            def handle(delivery: Delivery) -> None:
                with arrived:
                    resumed[delivery.continuation.id] = time.perf_counter()
                    arrived.notify_all()

            store.register_handler("bench", handle)
            wakeups = []
            for n in range(rounds):
                parked = store.park("bench:restart", signal_id=f"restart-{n}")
                cluster.restart("fast")
                _until_it_works(lambda: other.get_signal("none"))
                fired = time.perf_counter()
                other.notify_signal(f"restart-{n}", n)
                key = parked.id
                with arrived:
                    if not arrived.wait_for(lambda: key in resumed, timeout=WAIT):  # noqa: B023
                        raise SystemExit("the wake-up after a restart did not arrive")
                wakeups.append(resumed[key] - fired)
            run.figure(
                "wake-up from another instance after a restart, worst",
                ms(max(wakeups)),
                "ms",
                against="no sweeper: LISTEN/NOTIFY only",
            )

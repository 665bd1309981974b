"""Answer → resume latency: from the call that answers to the handler that resumes.

In one process the answering call's commit hands the continuation to the handler directly.
Across processes a child process answers while this one, which asked and parked, waits for
its handler to run; both read ``time.monotonic_ns()`` (CLOCK_MONOTONIC, one clock for every
process on the machine), so the two ends of each sample are comparable.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from common import Run, ms, percentile, postgres_db

from pawflow import Delivery, Question, open_store

WAIT = 10.0  # seconds a resume may take before the benchmark gives up


class Resumes:
    """The handler side: when each interaction's waiter resumed."""

    def __init__(self) -> None:
        self.at: dict[str, int] = {}
        self.changed = threading.Condition()

    def __call__(self, delivery: Delivery) -> None:
        now = time.monotonic_ns()
        key = delivery.continuation.target.split(":", 1)[1]
        with self.changed:
            self.at[key] = now
            self.changed.notify_all()

    def wait_for(self, key: str) -> int:
        with self.changed:
            if not self.changed.wait_for(lambda: key in self.at, timeout=WAIT):
                raise SystemExit(f"the waiter of {key} did not resume within {WAIT} s")
            return self.at[key]


def _ask(store: Any, conversation: str) -> Any:
    asked = store.ask(Question("bench", conversation, "confirm", "Ship it?")).interaction
    store.park(f"bench:{asked.id}", signal_id=asked.signal_id)
    return asked


def in_process(url: str, samples: int) -> list[float]:
    """Seconds from calling ``respond_interaction`` to the handler running, one process."""
    with open_store(url) as store:
        resumes = Resumes()
        store.register_handler("bench", resumes)
        conversation = store.create_conversation("bench").id
        found = []
        for _ in range(samples):
            asked = _ask(store, conversation)
            started = time.monotonic_ns()
            store.respond_interaction(asked.id, True, user="bench")
            found.append((resumes.wait_for(asked.id) - started) / 1e9)
        return found


def _answerer(url: str, pipe: Connection) -> None:
    """The answering process: answer each id it is sent, reply with when it started."""
    with open_store(url) as store:
        pipe.send("ready")
        while True:
            request_id = pipe.recv()
            if request_id is None:
                return
            started = time.monotonic_ns()
            store.respond_interaction(request_id, True, user="bench")
            pipe.send(started)


def across_processes(url: str, samples: int) -> list[float]:
    """Seconds from another process calling ``respond_interaction`` to the handler here."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    child = context.Process(target=_answerer, args=(url, theirs), daemon=True)
    with open_store(url) as store:
        resumes = Resumes()
        store.register_handler("bench", resumes)
        conversation = store.create_conversation("bench").id
        child.start()
        try:
            if not ours.poll(60) or ours.recv() != "ready":
                raise SystemExit("the answering process did not start")
            found = []
            for _ in range(samples):
                asked = _ask(store, conversation)
                ours.send(asked.id)
                resumed = resumes.wait_for(asked.id)
                if not ours.poll(WAIT):
                    raise SystemExit("the answering process stopped answering")
                started = ours.recv()
                found.append((resumed - started) / 1e9)
            ours.send(None)
            child.join(timeout=30)
            return found
        finally:
            if child.is_alive():
                child.terminate()
                child.join(timeout=10)


def _report(run: Run, name: str, found: list[float], goal: str) -> float:
    p50, p99 = ms(percentile(found, 50)), ms(percentile(found, 99))
    run.figure(
        name, p50, "ms p50", against=f"p99 {p99:.2f} ms over {len(found)} answers", goal=goal
    )
    return p50


ROWS = {
    ("postgres", "in one process"): ("pg_one", 1.0),
    ("postgres", "across processes"): ("pg_across", 3.0),
    ("sqlite", "across processes"): ("sqlite_across", 2.0),
}


def section(run: Run) -> None:
    run.heading("Answer → resume latency")
    samples = run.n(300, 20)
    backends = ["sqlite", "postgres"] if run.postgres else ["sqlite"]
    if not run.postgres:
        run.skip("postgres answer→resume", "no PostgreSQL on 127.0.0.1:5432")
    for backend in backends:
        for where, measure, goal in (
            ("in one process", in_process, "<= 1 ms"),
            (
                "across processes",
                across_processes,
                "<= 2 ms" if backend == "sqlite" else "<= 3 ms",
            ),
        ):
            name = f"{backend} answer→resume {where}"
            if backend == "sqlite":
                found = measure(f"sqlite:///{run.path('latency')}.db", samples)
            else:
                with postgres_db() as url:
                    found = measure(url, samples)
            p50 = _report(run, name, found, goal)
            if (backend, where) in ROWS:
                key, limit = ROWS[backend, where]
                p99 = ms(percentile(found, 99))
                run.row(key, f"p50 {p50:.2f} ms (p99 {p99:.1f} ms)", p50 <= limit)

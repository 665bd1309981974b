"""Benchmarks, printed as ratios against a floor measured in the same run on the same disk.

1. ask → park → answer → deliver cycles per second on SQLite, beside the raw SQLite commit
   floor: the same number of commits, with the same pragmas, of one small row each.
2. A sweeper pass over 100 due rows with 1,000 and with 100,000 continuations parked.
3. FlowFiles per second through a three-task flow, durable queues against in-memory ones.

Run with ``make bench``. Nothing here is asserted; the numbers are for people to read.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from flow_queues import report as flow_queue_report
from peers import dbos_cycles, langgraph_cycles

from pawflow import Delivery, FakeClock, SystemClock, open_store
from pawflow.clock import to_millis

CYCLES = 2000
PEER_CYCLES = {"LangGraph interrupt/resume (SqliteSaver)": 500, "DBOS recv/send (SQLite)": 20}
COMMITS_PER_CYCLE = 4  # request, park, respond (resolves), deliver (consumes)


def raw_floor(path: Path, commits: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON"):
        conn.execute(f"PRAGMA {pragma}")
    conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
    started = time.perf_counter()
    for _ in range(commits):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t VALUES (?, ?)", (secrets.token_urlsafe(16), "x" * 200))
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def cycles(path: Path, count: int) -> float:
    with open_store(f"sqlite:///{path}") as store:
        conversation = store.create_conversation("bench").id
        resumed = 0

        def on_resume(delivery: Delivery) -> None:
            nonlocal resumed
            resumed += 1

        store.register_handler("bench", on_resume)
        started = time.perf_counter()
        for n in range(count):
            asked = store.request_interaction("bench", conversation, "confirm", f"#{n}")
            store.park("bench:waiter", signal_id=asked.signal_id)
            store.respond_interaction(asked.id, True, user="bench")
        elapsed = time.perf_counter() - started
        if resumed != count:
            raise SystemExit(f"only {resumed} of {count} waiters resumed")
        return elapsed


def sweep_pass(path: Path, parked: int, due: int = 100) -> float:
    clock = FakeClock(SystemClock().now())
    with open_store(f"sqlite:///{path}", clock=clock) as store:
        now = to_millis(clock.now())
        with store.transaction() as tx:
            for n in range(parked):
                tx.execute(
                    "INSERT INTO continuations (id, target, signal_id, deadline, payload, status,"
                    " created_at) VALUES (?, 'bench:x', ?, ?, x'00', 'parked', ?)",
                    (f"p{n}", f"sig{n}", now + 86_400_000 * 30 if n % 2 else None, now),
                )
            for n in range(due):
                tx.execute(
                    "INSERT INTO continuations (id, target, signal_id, deadline, payload, status,"
                    " created_at) VALUES (?, 'bench:x', NULL, ?, x'00', 'parked', ?)",
                    (f"d{n}", now + 1000, now),
                )
        store.register_handler("bench", lambda delivery: None)
        clock.advance(timedelta(seconds=2))
        started = time.perf_counter()
        report = store.sweep()
        elapsed = time.perf_counter() - started
        if report["released"] != due:
            raise SystemExit(f"sweep released {report['released']}, expected {due}")
        return elapsed


def main() -> None:
    logging.disable(logging.INFO)  # peers log every launch and shutdown
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        floor = min(raw_floor(root / f"floor{n}.db", CYCLES * COMMITS_PER_CYCLE) for n in range(3))
        ours = min(cycles(root / f"cycles{n}.db", CYCLES) for n in range(3))
        print(f"ask→park→answer→deliver: {CYCLES / ours:,.0f} cycles/s")
        print(
            f"raw SQLite floor ({COMMITS_PER_CYCLE} commits/cycle): {CYCLES / floor:,.0f} cycles/s"
        )
        print(f"ratio to the floor: {ours / floor:.2f}x  (target: within 3x)")
        ours_rate = CYCLES / ours
        for (name, count), run in zip(
            PEER_CYCLES.items(), (langgraph_cycles, dbos_cycles), strict=True
        ):
            took = run(root / f"peer{len(name)}.db", count)
            if took is None:
                print(f"{name}: not installed (pip install -e '.[bench]')")
                continue
            rate = count / took
            print(f"{name}: {rate:,.0f} cycles/s — PawFlow is {ours_rate / rate:.1f}x faster")

        small = [sweep_pass(root / f"small{n}.db", 1_000) for n in range(3)]
        large = [sweep_pass(root / f"large{n}.db", 100_000) for n in range(2)]
        print(
            f"sweep of 100 due rows: {statistics.median(small) * 1000:.1f} ms with 1,000 parked,"
            f" {statistics.median(large) * 1000:.1f} ms with 100,000 parked"
        )
        growth = statistics.median(large) / statistics.median(small)
        print(f"ratio 100,000 : 1,000 parked: {growth:.2f}x  (target: ~1x)")
        flow_queue_report(root)
    sys.stdout.flush()


if __name__ == "__main__":
    main()

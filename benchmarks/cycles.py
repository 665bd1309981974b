"""Ask → park → answer → resume cycles per second, beside the raw commit floor and the peers.

A cycle through the public API: ``Store.ask`` with ``park`` (the question and its waiting
continuation, one transaction), then ``respond_interaction``, whose commit hands the
continuation to the handler registered in this process. The raw floor is what the same disk
does with two commits of one small row each per cycle (the fewest a durable ask-and-park and
answer can take), with the same pragmas on SQLite and on a throwaway PostgreSQL database.
Every figure is the median of three runs.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
import time
from pathlib import Path

import psycopg
from common import Run, median_of, postgres_db, stopwatch
from peers import dbos_cycles, langgraph_cycles, langgraph_postgres_cycles

from pawflow import Delivery, Store, open_store

try:
    from pawflow import Park, Question
except ImportError:  # a tree before Store.ask (``--ab`` against an older ref)
    Park = Question = None  # type: ignore[assignment,misc]

try:  # the floor's pages are the size the store measured gives a new file
    from pawflow.store.engine.sqlite import PAGE_SIZE
except ImportError:  # a tree from before it chose one (``--ab`` against an older ref)
    PAGE_SIZE = 4096

FLOOR_COMMITS = 2  # ask (and park), answer: the fewest durable steps of a cycle
THREADS = 8
BODY = "x" * 200


def sqlite_floor(path: Path, cycles: int) -> float:
    """Seconds for ``cycles`` cycles of 2 one-row commits, with the store's pragmas."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
        elapsed = stopwatch()
        for _ in range(cycles * FLOOR_COMMITS):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t VALUES (?, ?)", (secrets.token_urlsafe(16), BODY))
            conn.execute("COMMIT")
        return elapsed()
    finally:
        conn.close()


def postgres_floor(url: str, cycles: int, threads: int = 1) -> float:
    """Seconds for ``cycles`` cycles of 2 one-row commits, over ``threads`` connections."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS t (id TEXT PRIMARY KEY, body TEXT NOT NULL)")

    def work(count: int) -> None:
        with psycopg.connect(url) as conn:
            for _ in range(count * FLOOR_COMMITS):
                conn.execute("INSERT INTO t VALUES (%s, %s)", (secrets.token_urlsafe(16), BODY))
                conn.commit()

    elapsed = stopwatch()
    spread(work, cycles, threads)
    return elapsed()


def spread(work: object, total: int, threads: int) -> None:
    """Run ``work(count)`` on ``threads`` threads sharing ``total``; re-raise any failure."""
    failures: list[BaseException] = []

    def guarded(count: int) -> None:
        try:
            work(count)  # type: ignore[operator]
        except BaseException as exc:
            failures.append(exc)

    if threads == 1:
        guarded(total)
    else:
        share = [total // threads + (1 if n < total % threads else 0) for n in range(threads)]
        running = [threading.Thread(target=guarded, args=(count,)) for count in share]
        for thread in running:
            thread.start()
        for thread in running:
            thread.join()
    if failures:
        raise failures[0]


def _ask_parked(store: Store, user: str, conversation: str, n: int) -> str:
    """Ask and park in one transaction, by the API of the tree measured: the id asked."""
    target = f"bench:{conversation}:{n}"
    if Question is None:
        interaction, _ = store.ask_and_park(  # type: ignore[attr-defined]
            user, conversation, "confirm", f"#{n}", target=target
        )
        return str(interaction.id)
    question = Question(user, conversation, "confirm", f"#{n}")
    return store.ask(question, park=Park(target)).interaction.id


def pawflow_cycles(url: str, cycles: int, threads: int = 1, *, users: int = 1) -> float:
    """Seconds for ``cycles`` full cycles through the public API, over ``threads`` threads,
    each in a conversation of its own, of ``users`` users taken in turn (one user's events
    are numbered in commit order: their transactions take turns at their counter)."""
    with open_store(url) as store:
        resumed = 0
        lock = threading.Lock()

        def on_resume(delivery: Delivery) -> None:
            nonlocal resumed
            with lock:
                resumed += 1

        store.register_handler("bench", on_resume)
        owners = [f"bench{n % users}" if users > 1 else "bench" for n in range(threads)]
        handed = iter([(user, store.create_conversation(user).id) for user in owners])
        hand_lock = threading.Lock()

        def work(count: int) -> None:
            with hand_lock:
                user, conversation = next(handed)
            for n in range(count):
                asked = _ask_parked(store, user, conversation, n)
                store.respond_interaction(asked, True, user=user)

        elapsed = stopwatch()
        spread(work, cycles, threads)
        # On PostgreSQL the last delivery may still be running on the listener's thread.
        deadline = time.monotonic() + 10
        while resumed < cycles and time.monotonic() < deadline:
            time.sleep(0.0005)
        took = elapsed()
        if resumed != cycles:
            raise SystemExit(f"only {resumed} of {cycles} waiters resumed within 10 s")
        return took


def sqlite_section(run: Run) -> None:
    run.heading("SQLite: ask → park → answer → resume, one thread, public API")
    cycles = run.n(2000, 100)
    ours = cycles / median_of(
        run.repeats, lambda: pawflow_cycles(f"sqlite:///{run.path('cycles')}.db", cycles)
    )
    floor = cycles / median_of(
        run.repeats, lambda: sqlite_floor(run.path("floor").with_suffix(".db"), cycles)
    )
    run.figure(
        "sqlite raw floor (2 commits/cycle, same pragmas)", floor, "cycles/s", against=f"N={cycles}"
    )
    run.figure(
        "sqlite pawflow cycle",
        ours,
        "cycles/s",
        against=f"floor {floor:,.0f}",
        ratio=ours / floor,
        goal=">= 0.33x of the floor",
    )
    run.row(
        "sqlite_floor",
        f"{ours / floor:.2f}x ({ours:,.0f} vs {floor:,.0f} cycles/s)",
        ours >= floor / 3,
    )
    if not run.peers:
        return
    peer_counts = {
        "sqlite peer LangGraph + SqliteSaver": (langgraph_cycles, run.n(300, 20)),
        "sqlite peer DBOS (SQLite)": (dbos_cycles, run.n(30, 5)),
    }
    for name, (measure, count) in peer_counts.items():
        took = measure(run.path("peer").with_suffix(".db"), count)
        if took is None:
            run.skip(name, "not installed: pip install -e '.[bench]'")
            continue
        samples = [took] + [
            measure(run.path("peer").with_suffix(".db"), count) or took
            for _ in range(run.repeats - 1)
        ]
        rate = count / sorted(samples)[len(samples) // 2]
        run.figure(name, rate, "cycles/s", against=f"pawflow {ours:,.0f}", ratio=ours / rate)


def postgres_section(run: Run) -> None:
    run.heading("PostgreSQL: ask → park → answer → resume, public API")
    if not run.postgres:
        run.skip("postgres pawflow cycle", "no PostgreSQL on 127.0.0.1:5432")
        return
    cycles = run.n(600, 60)

    def fresh(measure: object, *args: object) -> float:
        with postgres_db() as url:
            return measure(url, *args)  # type: ignore[operator,no-any-return]

    floor = cycles / median_of(run.repeats, lambda: fresh(postgres_floor, cycles))
    ours = cycles / median_of(run.repeats, lambda: fresh(pawflow_cycles, cycles))
    run.figure("postgres raw floor (2 commits/cycle)", floor, "cycles/s", against=f"N={cycles}")
    run.figure(
        "postgres pawflow cycle",
        ours,
        "cycles/s",
        against=f"floor {floor:,.0f}",
        ratio=ours / floor,
        goal=">= 0.4x of the floor",
    )
    run.row(
        "pg_floor",
        f"{ours / floor:.2f}x ({ours:,.0f} vs {floor:,.0f} cycles/s)",
        ours >= 0.4 * floor,
    )
    many = run.n(1600, 160)
    floor8 = many / median_of(run.repeats, lambda: fresh(postgres_floor, many, THREADS))
    ours8 = many / median_of(run.repeats, lambda: fresh(pawflow_cycles, many, THREADS))
    run.figure(
        f"postgres raw floor, {THREADS} threads",
        floor8,
        "cycles/s",
        against=f"1 thread {floor:,.0f}",
        ratio=floor8 / floor,
    )
    run.figure(
        f"postgres pawflow cycle, {THREADS} threads",
        ours8,
        "cycles/s",
        against=f"1 thread {ours:,.0f}",
        ratio=ours8 / ours,
        goal=">= 4x the one-thread figure",
    )
    apart = many / median_of(
        run.repeats, lambda: fresh(lambda url: pawflow_cycles(url, many, THREADS, users=THREADS))
    )
    run.figure(
        f"postgres pawflow cycle, {THREADS} threads, {THREADS} users",
        apart,
        "cycles/s",
        against=f"1 thread {ours:,.0f}; {THREADS} threads of 1 user {ours8:,.0f}",
        ratio=apart / ours,
    )
    run.row(
        "pg_threads",
        f"{ours8 / ours:.2f}x ({ours8:,.0f} vs {ours:,.0f} cycles/s;"
        f" raw floor {floor8 / floor:.2f}x; {THREADS} users {apart / ours:.2f}x)",
        ours8 >= 4 * ours,
    )
    if not run.peers:
        return
    peer_counts = {
        "postgres peer LangGraph + PostgresSaver": (langgraph_postgres_cycles, run.n(200, 10)),
        "postgres peer DBOS (PostgreSQL)": (dbos_cycles, run.n(60, 5)),
    }
    for name, (measure, count) in peer_counts.items():
        samples: list[float] = []
        for _ in range(run.repeats):
            with postgres_db() as url:
                took = measure(url, count)
            if took is None:
                break
            samples.append(took)
        if not samples:
            run.skip(name, "not installed: pip install -e '.[bench]'")
            continue
        rate = count / sorted(samples)[len(samples) // 2]
        run.figure(name, rate, "cycles/s", against=f"pawflow {ours:,.0f}", ratio=ours / rate)

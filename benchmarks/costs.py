"""Where a cycle's time goes: statements, commits, bytes written, and a profile.

The same cycle as the cycles section, instrumented from outside the store: the database
object's ``transaction``, ``run`` and ``run_batch`` are wrapped to count transactions and
statements (and, from their SQL, the tables written, advisory locks and notifications);
``/proc/self/io`` gives the bytes and ``write()`` calls the process made; cProfile gives the
time by function, grouped into the time spent inside the database driver and the Python
around it. On PostgreSQL, the CPU a cycle costs this thread (inside psycopg and around it),
the store's other threads and the server's processes, beside its wall-clock time. And on
each backend, the statements of one recorded cycle sent again from the bare driver, beside
the cycle and the raw floor: what the SQL costs without PawFlow's Python around it.
"""

from __future__ import annotations

import contextlib
import cProfile
import os
import pstats
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import Run, postgres_db
from cycles import postgres_floor, sqlite_floor

from pawflow import Delivery, Park, Question, Store, open_store
from pawflow.ids import new_id

_WRITTEN = re.compile(r"\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", re.IGNORECASE)
"""The tables a statement writes (a ``WITH`` statement may write several; ``DO UPDATE SET``
names none)."""


class Counts:
    def __init__(self) -> None:
        self.statements = 0
        self.writes = 0
        self.reads = 0
        self.tables: Counter[str] = Counter()
        self.locks = 0
        self.notifies = 0


def instrument(store: Store) -> Counts:
    """Count what ``store`` sends to its database from now on."""
    db: Any = store.db
    counts = Counts()
    run, run_batch, transaction = db.run, db.run_batch, db.transaction

    def count(sql: str) -> None:
        if sql in ("BEGIN", "COMMIT"):  # PostgreSQL sends them with the other statements
            return
        counts.statements += 1
        for table in _WRITTEN.findall(sql):
            if table.upper() != "SET":
                counts.tables[table.lower()] += 1
        counts.locks += "pg_advisory_xact_lock" in sql
        counts.notifies += "pg_notify" in sql

    def counting_run(cursor: Any, sql: str, params: Any) -> None:
        count(sql)
        run(cursor, sql, params)

    def counting_batch(cursor: Any, statements: list[tuple[str, Any]]) -> None:
        for sql, _ in statements:
            count(sql)
        run_batch(cursor, statements)

    @contextlib.contextmanager
    def counting_transaction(*, write: bool = True) -> Iterator[Any]:
        if write:
            counts.writes += 1
        else:
            counts.reads += 1
        with transaction(write=write) as tx:
            yield tx

    db.run, db.run_batch, db.transaction = counting_run, counting_batch, counting_transaction
    return counts


def io_counters() -> dict[str, int]:
    """This process's ``wchar`` (bytes handed to write calls) and ``syscw`` (their number)."""
    path = Path("/proc/self/io")
    if not path.exists():
        return {}
    pairs = (line.split(":") for line in path.read_text().splitlines())
    return {name: int(value) for name, value in pairs}


def _cycles(store: Store, count: int) -> None:
    conversation = store.create_conversation("bench").id
    for n in range(count):
        question = Question("bench", conversation, "confirm", f"#{n}")
        asked = store.ask(question, park=Park(f"bench:{conversation}:{n}")).interaction
        store.respond_interaction(asked.id, True, user="bench")


def _counted(run: Run, backend: str, url: str, count: int) -> None:
    with open_store(url) as store:
        resumed = []

        def on_resume(delivery: Delivery) -> None:
            resumed.append(1)

        store.register_handler("bench", on_resume)
        _cycles(store, 5)  # warm: connections, prepared statements, caches
        counts = instrument(store)
        before = io_counters()
        _cycles(store, count)
        after = io_counters()
    per = 1 / count
    run.say(
        f"{backend} per cycle: {counts.statements * per:.1f} statements (besides BEGIN/COMMIT),"
        f" {counts.writes * per:.1f} write transactions (commits),"
        f" {counts.reads * per:.1f} read transactions"
    )
    tables = ", ".join(f"{name} {n * per:.1f}" for name, n in counts.tables.most_common())
    run.say(f"{backend} rows written per cycle, by table: {tables}")
    if backend == "postgres":
        run.say(
            f"postgres per cycle: {counts.locks * per:.1f} pg_advisory_xact_lock,"
            f" {counts.notifies * per:.1f} pg_notify"
        )
    elif before and after:
        written = (after["wchar"] - before["wchar"]) * per
        calls = (after["syscw"] - before["syscw"]) * per
        floor_before = io_counters()
        sqlite_floor(run.path("costs-floor").with_suffix(".db"), count)
        floor_after = io_counters()
        floor_written = (floor_after["wchar"] - floor_before["wchar"]) * per
        floor_calls = (floor_after["syscw"] - floor_before["syscw"]) * per
        run.say(
            f"sqlite bytes written per cycle: {written / 1024:,.1f} KB in {calls:.0f} write()s"
            f"  | raw floor {floor_written / 1024:,.1f} KB in {floor_calls:.0f} write()s"
            f"  | ratio {written / floor_written:.2f}x"
        )
        run.row(
            "sqlite_bytes",
            f"{written / 1024:,.1f} KB vs the floor's {floor_written / 1024:,.1f} KB"
            f" ({written / floor_written:.1f}x)",
            None,
        )


Exchanges = list[list[list[tuple[str, Any]]]]
"""A cycle's statements as the driver got them: by transaction, then by exchange with the
server (one statement, or a PostgreSQL pipeline's), each with its parameters."""


def _recorded_cycle(store: Store) -> tuple[Exchanges, str, str]:
    """The statements of one cycle as the store sends them, and the ids of its request and
    continuation."""
    db: Any = store.db
    run, batch, transaction = db.run, db.run_batch, db.transaction
    translated = getattr(db, "_translate", lambda sql: sql)  # the driver's placeholders
    transactions: Exchanges = []
    parked: list[str] = []

    def recording_run(cursor: Any, sql: str, params: Any) -> None:
        transactions[-1].append([(translated(sql), params)])
        run(cursor, sql, params)

    def recording_batch(cursor: Any, statements: list[tuple[str, Any]]) -> None:
        transactions[-1].append([(translated(sql), params) for sql, params in statements])
        batch(cursor, statements)

    @contextlib.contextmanager
    def recording_transaction(*, write: bool = True) -> Iterator[Any]:
        transactions.append([])
        with transaction(write=write) as tx:
            yield tx

    store.register_handler("replay", lambda delivery: parked.append(delivery.continuation.id))
    conversation = store.create_conversation("bench").id
    for n in range(2):  # the first makes what a store makes once (the user, say): not recorded
        question = Question("bench", conversation, "confirm", f"#{n}")
        if n:
            db.run, db.run_batch = recording_run, recording_batch
            db.transaction = recording_transaction
        try:
            asked = store.ask(question, park=Park(f"replay:{n}")).interaction.id
            store.respond_interaction(asked, True, user="bench")
        finally:
            db.run, db.run_batch, db.transaction = run, batch, transaction
    return transactions, asked, parked[-1]


def _whole_cycles(url: str, count: int) -> float:
    """Seconds for ``count`` cycles through the public API (after five to warm)."""
    with open_store(url) as store:
        store.register_handler("bench", lambda delivery: None)
        _cycles(store, 5)
        started = time.perf_counter()
        _cycles(store, count)
        return time.perf_counter() - started


def _renamed(params: Any, names: dict[str, str]) -> Any:
    """``params`` with each of the ``names`` (old → new) replaced wherever a text holds it."""

    def renamed(value: Any) -> Any:
        if isinstance(value, str):
            for old, new in names.items():
                value = value.replace(old, new)
        return value

    return tuple(renamed(value) for value in params)


def statements_alone(run: Run, count: int) -> None:
    """The statements of one cycle, sent again from bare Python (fresh ids each time, the
    store's pragmas, BEGIN IMMEDIATE … COMMIT per transaction), beside the cycle itself and
    the raw floor: what the SQL costs without PawFlow's Python around it."""
    path = run.path("alone").with_suffix(".db")
    with open_store(f"sqlite:///{path}") as store:
        transactions, request, continuation = _recorded_cycle(store)
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in ("synchronous = NORMAL", "foreign_keys = ON", "wal_autocheckpoint = 0"):
        conn.execute(f"PRAGMA {pragma}")
    per_cycle = sum(sum(map(len, exchanges)) + 2 for exchanges in transactions)
    alone = 0.0
    try:
        for n in range(count + 5):
            names = {request: new_id(), continuation: new_id()}
            replayed = [
                [(sql, _renamed(params, names)) for sent in exchanges for sql, params in sent]
                for exchanges in transactions
            ]
            started = time.perf_counter()
            for statements in replayed:
                cursor = conn.cursor()
                cursor.execute("BEGIN IMMEDIATE")
                for sql, params in statements:
                    cursor.execute(sql, params).fetchall()
                cursor.execute("COMMIT")
            if n >= 5:  # the first few warm the statement cache
                alone += time.perf_counter() - started
            if n % 250 == 249:  # as the store's checkpointer would, off the clock
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    finally:
        conn.close()
    whole = _whole_cycles(f"sqlite:///{run.path('whole')}.db", count)
    floor = sqlite_floor(run.path("alone-floor").with_suffix(".db"), count)
    _say_alone(run, f"sqlite: the cycle's {per_cycle} statements", count, alone, whole, floor)


def _say_alone(run: Run, what: str, count: int, alone: float, whole: float, floor: float) -> None:
    """One line: ``count`` cycles' statements ``alone``, the ``whole`` cycles and the
    ``floor`` (seconds each), as rates and shares."""
    run.say(
        f"{what} alone, from the bare driver:"
        f" {count / alone:,.0f} cycles/s ({alone / count * 1e6:.0f} us)"
        f"  | the cycle {count / whole:,.0f} cycles/s ({whole / count * 1e6:.0f} us:"
        f" {100 * alone / whole:.0f}% of it the statements)"
        f"  | raw floor {count / floor:,.0f} cycles/s (the statements alone are"
        f" {floor / alone:.2f}x of it, the cycle {floor / whole:.3f}x)"
    )


def postgres_statements_alone(run: Run, url: str, count: int) -> None:
    """The statements of one PostgreSQL cycle, sent again from a bare psycopg connection as
    the store sends them (each exchange of several in one pipeline, fresh ids each time),
    beside the cycle itself and the raw floor: what the driver and the server cost alone."""
    import psycopg  # noqa: PLC0415
    from psycopg.rows import dict_row  # noqa: PLC0415

    with open_store(url) as store:
        transactions, request, continuation = _recorded_cycle(store)
    exchanges = [sent for recorded in transactions for sent in recorded]
    whole = _whole_cycles(url, count)
    alone = 0.0
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        cursor = conn.cursor()
        for n in range(count + 5):
            names = {request: new_id(), continuation: new_id()}
            replayed = [
                [(sql, _renamed(params, names)) for sql, params in sent] for sent in exchanges
            ]
            started = time.perf_counter()
            for statements in replayed:
                if len(statements) == 1:
                    cursor.execute(*statements[0])
                    continue
                with conn.pipeline():
                    for sql, params in statements:
                        cursor.execute(sql, params)
            if n >= 5:  # the first few make the prepared statements
                alone += time.perf_counter() - started
    floor = postgres_floor(url, count)
    sent = sum(len(statements) for statements in exchanges)
    what = f"postgres: the cycle's {sent} statements in {len(exchanges)} exchanges"
    _say_alone(run, what, count, alone, whole, floor)


_GROUPS = (
    ("database driver (C)", ("sqlite3.", "psycopg", "pq.")),
    ("pydantic", ("pydantic",)),
    ("json", ("json",)),
    ("dateutil / datetime", ("dateutil", "datetime")),
    ("threading / locks", ("threading", "lock", "Condition")),
    ("pawflow", ("pawflow",)),
)


def _group(where: str) -> str:
    for name, needles in _GROUPS:
        if any(needle in where for needle in needles):
            return name
    return "other Python"


def profile(run: Run, url: str, count: int, top: int = 12) -> None:
    with open_store(url) as store:
        store.register_handler("bench", lambda delivery: None)
        _cycles(store, 5)
        profiler = cProfile.Profile()
        profiler.enable()
        _cycles(store, count)
        profiler.disable()
    stats = pstats.Stats(profiler)
    entries: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in entries.values())
    grouped: Counter[str] = Counter()
    for (filename, _, function), row in entries.items():
        grouped[_group(f"{filename}:{function}")] += row[2]
    shares = ", ".join(f"{name} {100 * t / total:.0f}%" for name, t in grouped.most_common())
    run.say(f"sqlite cycle time by where it is spent (cProfile, N={count}): {shares}")
    run.say(f"sqlite cycle: the {top} functions with the most own time:")
    ranked = sorted(entries.items(), key=lambda item: item[1][2], reverse=True)[:top]
    for (filename, line, function), row in ranked:
        where = function if filename == "~" else f"{Path(filename).name}:{line} {function}"
        run.say(f"  {100 * row[2] / total:5.1f}%  {row[1] / count:6.1f} calls/cycle  {where}")


def _cpu_seconds(pids: list[int]) -> float:
    """User and system CPU of processes of this machine (those gone count nothing)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def postgres_time(run: Run, url: str, count: int) -> None:
    """Where a PostgreSQL cycle's wall-clock time goes: this thread's CPU (inside psycopg,
    where statements are encoded, sent and their results decoded, and around it), the
    store's other threads (the LISTEN thread), and the server's processes for the store's
    connections (``/proc``: a server on this machine)."""
    import psycopg  # noqa: PLC0415

    inside = [0.0]
    wait = psycopg.Connection.wait

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return wait(self, *args, **kwargs)
        finally:
            inside[0] += time.thread_time() - started

    with open_store(url) as store:
        store.register_handler("bench", lambda delivery: None)
        _cycles(store, 20)  # warm: the pool's connections, prepared statements
        with psycopg.connect(url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchall()
        server = [int(row[0]) for row in rows]
        psycopg.Connection.wait = timed  # type: ignore[method-assign]
        try:
            marks = time.perf_counter(), time.thread_time(), time.process_time()
            served = _cpu_seconds(server)
            _cycles(store, count)
            served = _cpu_seconds(server) - served
            wall, here, process = (
                now - then
                for now, then in zip(
                    (time.perf_counter(), time.thread_time(), time.process_time()),
                    marks,
                    strict=True,
                )
            )
        finally:
            psycopg.Connection.wait = wait  # type: ignore[method-assign]
    ms = 1000 / count
    run.say(
        f"postgres time per cycle (N={count}): {wall * ms:.2f} ms wall; CPU: this thread"
        f" {here * ms:.2f} ms (in psycopg {inside[0] * ms:.2f}, around it"
        f" {(here - inside[0]) * ms:.2f}), the store's other threads"
        f" {(process - here) * ms:.2f}, the server's {len(server)} processes for the store"
        f" {served * ms:.2f} ms"
    )


def section(run: Run) -> None:
    run.heading("Costs of one cycle (what the optimization work starts from)")
    count = run.n(500, 50)
    _counted(run, "sqlite", f"sqlite:///{run.path('costs')}.db", count)
    if run.postgres:
        with postgres_db() as url:
            _counted(run, "postgres", url, run.n(200, 20))
        with postgres_db() as url:
            postgres_time(run, url, run.n(1000, 50))
        with postgres_db() as url:
            postgres_statements_alone(run, url, run.n(1000, 50))
    else:
        run.skip("postgres per cycle", "no PostgreSQL on 127.0.0.1:5432")
    statements_alone(run, run.n(2000, 100))
    profile(run, f"sqlite:///{run.path('profile')}.db", count)

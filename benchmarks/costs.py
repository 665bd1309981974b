"""Where a cycle's time goes: statements, commits, bytes written, and a profile.

The same cycle as the cycles section, instrumented from outside the store: the database
object's ``transaction`` and ``run`` are wrapped to count transactions and statements (and,
from their SQL, the tables written, advisory locks and notifications); ``/proc/self/io``
gives the bytes and ``write()`` calls the process made; cProfile gives the time by function,
grouped into the time spent inside the database driver and the Python around it.
"""

from __future__ import annotations

import contextlib
import cProfile
import pstats
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import Run, postgres_db
from cycles import sqlite_floor

from pawflow import Delivery, Park, Question, Store, open_store

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
    run, transaction = db.run, db.transaction

    def counting_run(cursor: Any, sql: str, params: Any) -> None:
        counts.statements += 1
        for table in _WRITTEN.findall(sql):
            if table.upper() != "SET":
                counts.tables[table.lower()] += 1
        counts.locks += "pg_advisory_xact_lock" in sql
        counts.notifies += "pg_notify" in sql
        run(cursor, sql, params)

    @contextlib.contextmanager
    def counting_transaction(*, write: bool = True) -> Iterator[Any]:
        if write:
            counts.writes += 1
        else:
            counts.reads += 1
        with transaction(write=write) as tx:
            yield tx

    db.run, db.transaction = counting_run, counting_transaction
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


def section(run: Run) -> None:
    run.heading("Costs of one cycle (what the optimization work starts from)")
    count = run.n(500, 50)
    _counted(run, "sqlite", f"sqlite:///{run.path('costs')}.db", count)
    if run.postgres:
        with postgres_db() as url:
            _counted(run, "postgres", url, run.n(200, 20))
    else:
        run.skip("postgres per cycle", "no PostgreSQL on 127.0.0.1:5432")
    profile(run, f"sqlite:///{run.path('profile')}.db", count)

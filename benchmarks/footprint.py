"""Bytes of store per asked-and-parked item, beyond its payload, beside LangGraph's parked thread.

An item is a question (``request_interaction`` with a 100-character message) and the
continuation parked on its signal. The store's size is read before and after N items: on
SQLite as the bytes of the pages in use (``dbstat``, after a checkpoint folds the WAL in), on
PostgreSQL as ``pg_total_relation_size`` over every table (heap, TOAST and indexes). The
payload (the message's bytes) is taken off. LangGraph's figure is a thread left waiting in
``interrupt()`` on a question of the same length, in its SQLite or PostgreSQL saver.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import psycopg
from common import Run, postgres_db
from peers import QUESTION, langgraph_park_postgres, langgraph_park_sqlite

from pawflow import Question, open_store

MESSAGE = "x" * 100
PAYLOAD = len(MESSAGE.encode())


def sqlite_bytes(path: Path) -> int:
    """Bytes of the pages holding data (free pages and the WAL left out)."""
    return sum(sqlite_bytes_by_name(path).values())


def sqlite_bytes_by_name(path: Path) -> dict[str, int]:
    """Bytes in use by each table and index, once a checkpoint has folded the WAL in."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = conn.execute("SELECT name, sum(pgsize - unused) FROM dbstat GROUP BY name")
        return {str(name): int(used) for name, used in rows}
    finally:
        conn.close()


def postgres_bytes(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname NOT IN ('pg_catalog',"
            " 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'"
        ).fetchone()
        assert row is not None
        return int(row[0])


def park_items(url: str, count: int, measure: Callable[[], object]) -> float:
    """Bytes per item beyond its payload, over ``count`` items asked and parked."""
    before, after = measured_items(url, count, measure)
    assert isinstance(before, int) and isinstance(after, int)
    return (after - before) / count - PAYLOAD


def measured_items(url: str, count: int, measure: Callable[[], object]) -> tuple[object, object]:
    """What ``measure`` says before and after ``count`` items are asked and parked."""
    with open_store(url) as store:
        conversation = store.create_conversation("bench").id
        # One item first, so tables and indexes exist before the baseline.
        asked = store.ask(Question("bench", conversation, "confirm", MESSAGE)).interaction
        store.park(f"bench:{asked.id}", signal_id=asked.signal_id)
        before = measure()
        for _ in range(count):
            asked = store.ask(Question("bench", conversation, "confirm", MESSAGE)).interaction
            store.park(f"bench:{asked.id}", signal_id=asked.signal_id)
        return before, measure()


def section(run: Run) -> None:
    run.heading("Store per asked-and-parked item, beyond its payload")
    count, peer_count = run.n(2000, 300), run.n(1000, 100)
    peer = len(QUESTION.encode())
    path = run.path("footprint").with_suffix(".db")
    ours = park_items(f"sqlite:///{path}", count, lambda: sqlite_bytes(path))
    theirs: float | None = None
    if run.peers:
        lg_path = run.path("langgraph-footprint").with_suffix(".db")
        if langgraph_park_sqlite(lg_path, 1):
            before = sqlite_bytes(lg_path)
            langgraph_park_sqlite(lg_path, peer_count, first=1)
            theirs = (sqlite_bytes(lg_path) - before) / peer_count - peer
    _report(run, "sqlite", ours, theirs, count)
    path = run.path("footprint").with_suffix(".db")
    before, after = measured_items(f"sqlite:///{path}", count, lambda: sqlite_bytes_by_name(path))
    assert isinstance(before, dict) and isinstance(after, dict)
    grown = {name: (after[name] - before.get(name, 0)) / count for name in after}
    shares = ", ".join(
        f"{name} {size:,.0f}"
        for name, size in sorted(grown.items(), key=lambda kv: -kv[1])
        if size >= 1
    )
    run.say(f"sqlite bytes per parked item, by table and index: {shares}")
    if not run.postgres:
        run.skip("postgres bytes per parked item", "no PostgreSQL on 127.0.0.1:5432")
        return
    with postgres_db() as url:
        ours = park_items(url, count, lambda: postgres_bytes(url))
    theirs = None
    if run.peers:
        with postgres_db() as url:
            if langgraph_park_postgres(url, 1):
                before = postgres_bytes(url)
                langgraph_park_postgres(url, peer_count, first=1)
                theirs = (postgres_bytes(url) - before) / peer_count - peer
    _report(run, "postgres", ours, theirs, count)


def _report(run: Run, backend: str, ours: float, theirs: float | None, count: int) -> None:
    if theirs is None:
        against, ratio = f"N={count}; LangGraph not installed", None
    else:
        against, ratio = f"LangGraph parked thread {theirs:,.0f} B", ours / theirs
    run.figure(
        f"{backend} bytes per parked item",
        ours,
        "B",
        against=against,
        ratio=ratio,
        goal="<= 1024 B",
    )
    if theirs is not None:
        run.figure(f"{backend} peer LangGraph bytes per parked thread", theirs, "B")

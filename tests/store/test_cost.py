"""What one ask → park → answer → resume cycle costs, as the database sees it.

Not a timed test: SQLite counts the statements itself (its trace callback sees every one,
BEGIN, COMMIT and SAVEPOINT included, on every connection of the store); on PostgreSQL the
client's exchanges with the server are counted (each time a connection waits for the
server). Whoever adds a statement to the cycle sees it listed here, and decides.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from pawflow import Delivery, Store
from pawflow.store import Park, Question
from pawflow.testing import eventually

CYCLES = 12

SQLITE_STATEMENTS = 16
"""Statements of one cycle on SQLite, on the thread that runs it (BEGIN/COMMIT included)."""
SQLITE_TRANSACTIONS = 2
SQLITE_ELSEWHERE = 0
"""Statements per cycle on the store's other threads (its change watcher), at most: it reads
the WAL index's change counter, no statement, and tells this process's commits from
others', so the cycle's own commits wake nothing. Where it cannot read the counter, its look
at ``PRAGMA data_version`` is its clock, not counted."""
HEARTBEAT = "PRAGMA data_version"
POSTGRES_ROUND_TRIPS = 5
EXCHANGES = {"BasePipeline._exit_gen": "(the pipeline's exchange: what it sent, and their results)"}
PIPELINED = "  sent along: "
"""PostgreSQL: a statement sent in a pipeline, which waits for the exchange that ends it."""


@dataclass
class Seen:
    """Statements (or exchanges) by thread, as they happened."""

    main: int = threading.get_ident()
    here: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)
    counting: bool = False
    before: list[str] = field(default_factory=list)
    """What the other threads ran before counting began (the watcher's first looks)."""

    def saw(self, text: str) -> None:
        if not self.counting:
            if threading.get_ident() != self.main:
                self.before.append(text)
            return
        (self.here if threading.get_ident() == self.main else self.elsewhere).append(text)

    def listing(self) -> str:
        """The first cycle's statements, and what the other threads ran, counted."""
        first = self.here[: round(len(self.here) / CYCLES)]  # cycles send alike
        others = Counter(self.elsewhere).most_common()
        return "\n".join(
            [f"one cycle ({len(first)}):", *first]
            + [f"other threads, {CYCLES} cycles ({len(self.elsewhere)}):"]
            + [f"{n} x {text}" for text, n in others]
        )


@pytest.fixture
def seen(store: Store) -> Iterator[Seen]:
    found = Seen()
    db: Any = store.db
    if store.dialect == "sqlite":
        with db._lock:
            for conn in db._connections:
                conn.set_trace_callback(found.saw)
        connect = db.connect

        def traced() -> sqlite3.Connection:
            conn: sqlite3.Connection = connect()
            conn.set_trace_callback(found.saw)
            return conn

        db.connect = traced
        yield found
        return
    import psycopg  # noqa: PLC0415

    wait, execute = psycopg.Connection.wait, psycopg.Cursor.execute
    running: list[str] = [""]

    def counted(self: psycopg.Connection[Any], gen: Any, *args: Any, **kwargs: Any) -> Any:
        code = getattr(gen, "gi_code", None)
        name = getattr(code, "co_qualname", None) or type(gen).__name__
        idle = self.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        if name.endswith("Pipeline._enter_gen"):
            pass  # the client enters pipeline mode: nothing goes to the server
        elif name.endswith("._execute_gen") and self._pipeline is not None:
            found.saw(PIPELINED + running[0])  # sent, not waited for: not a round trip
        elif not (idle and name.endswith(("._commit_gen", "._rollback_gen"))):
            found.saw(running[0] if name.endswith("._execute_gen") else EXCHANGES.get(name, name))
        return wait(self, gen, *args, **kwargs)

    def labelled(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        running[0] = str(query)
        return execute(cursor, query, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(psycopg.Connection, "wait", counted)
        patch.setattr(psycopg.Cursor, "execute", labelled)
        yield found


def _cycles(store: Store, conversation_id: str, count: int) -> None:
    for n in range(count):
        asked, _ = store.ask(
            Question("alice", conversation_id, "confirm", f"Go #{n}?"), park=Park(f"cost:{n}")
        )
        store.respond_interaction(asked.id, True, user="alice")


def test_one_cycle_costs_no_more_than_its_budget(store: Store, seen: Seen) -> None:
    resumed: list[str] = []

    def on_resume(delivery: Delivery) -> None:
        resumed.append(delivery.continuation.target)

    conversation_id = store.create_conversation("alice", "Costs").id
    store.register_handler("cost", on_resume)
    _cycles(store, conversation_id, 3)  # warm: connections, the watcher, prepared statements
    if store.dialect == "sqlite":  # the watcher's first look, once, whenever its thread ran
        eventually(lambda: any("FROM continuations" in text for text in seen.before))
    resumed.clear()
    seen.counting = True
    _cycles(store, conversation_id, CYCLES)
    seen.counting = False
    assert resumed == [f"cost:{n}" for n in range(CYCLES)]  # every cycle resumed, here

    per_cycle = sum(1 for text in seen.here if not text.startswith(PIPELINED)) / CYCLES
    if store.dialect == "sqlite":
        begins = sum(1 for text in seen.here if text.startswith("BEGIN")) / CYCLES
        elsewhere = sum(1 for text in seen.elsewhere if text != HEARTBEAT) / CYCLES
        budget = f"{SQLITE_STATEMENTS} statements in {SQLITE_TRANSACTIONS} transactions"
        found = f"{per_cycle:g} in {begins:g}, {elsewhere:g} elsewhere"
        assert per_cycle <= SQLITE_STATEMENTS, f"{found}; budget {budget}\n{seen.listing()}"
        assert begins <= SQLITE_TRANSACTIONS, f"{found}; budget {budget}\n{seen.listing()}"
        assert elsewhere <= SQLITE_ELSEWHERE, f"{found}; budget {budget}\n{seen.listing()}"
    else:
        found = f"{per_cycle:g} round trips; budget {POSTGRES_ROUND_TRIPS}"
        assert per_cycle <= POSTGRES_ROUND_TRIPS, f"{found}\n{seen.listing()}"

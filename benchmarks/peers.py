"""The same ask → wait → answer → resume cycle in peer systems, in the same run.

- LangGraph: a one-node graph whose node calls ``interrupt()``, checkpointed by its
  ``SqliteSaver`` or ``PostgresSaver``; the answer is ``Command(resume=…)``.
- DBOS Transact: a workflow blocked in ``DBOS.recv``; the answer is ``DBOS.send``, on a
  SQLite or a PostgreSQL system database.

Each function returns the seconds ``count`` cycles took, or ``None`` when the peer is not
installed (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import functools
import importlib.util
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


class _State(TypedDict):
    answer: Any


def _graph() -> Any:
    """A one-node graph whose node asks and waits; ``None`` without LangGraph."""
    if not available("langgraph"):
        return None
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def ask(state: _State) -> dict[str, Any]:
        return {"answer": interrupt(QUESTION)}

    graph = StateGraph(_State)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph


QUESTION = "x" * 100
"""What a parked thread waits on: as long as the question PawFlow's footprint uses."""


def _cycle(app: Any, count: int) -> float:
    from langgraph.types import Command

    started = time.perf_counter()
    for n in range(count):
        config: Any = {"configurable": {"thread_id": f"t{n}"}}
        app.invoke({"answer": None}, config)
        result = app.invoke(Command(resume=True), config)
        if result["answer"] is not True:
            raise SystemExit("langgraph did not resume with the answer")
    return time.perf_counter() - started


def _park(app: Any, count: int, first: int) -> None:
    for n in range(first, first + count):
        app.invoke({"answer": None}, {"configurable": {"thread_id": f"parked{n}"}})


def _with_sqlite_saver(path: Path, use: Callable[[Any], Any]) -> Any:
    graph = _graph()
    if graph is None or not available("langgraph.checkpoint.sqlite"):
        return None
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        return use(graph.compile(checkpointer=SqliteSaver(conn)))
    finally:
        conn.close()


def _with_postgres_saver(url: str, use: Callable[[Any], Any]) -> Any:
    graph = _graph()
    if graph is None or not available("langgraph.checkpoint.postgres"):
        return None
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        return use(graph.compile(checkpointer=saver))


def langgraph_cycles(path: Path, count: int) -> float | None:
    return _with_sqlite_saver(path, lambda app: _cycle(app, count))  # type: ignore[no-any-return]


def langgraph_postgres_cycles(url: str, count: int) -> float | None:
    return _with_postgres_saver(url, lambda app: _cycle(app, count))  # type: ignore[no-any-return]


def langgraph_park_sqlite(path: Path, count: int, first: int = 0) -> bool:
    """Leave ``count`` new threads parked in ``interrupt()``; False without LangGraph."""
    return _with_sqlite_saver(path, lambda app: _park(app, count, first) or True) is not None


def langgraph_park_postgres(url: str, count: int, first: int = 0) -> bool:
    return _with_postgres_saver(url, lambda app: _park(app, count, first) or True) is not None


@functools.cache
def _dbos_waiter() -> Any:
    """The workflow, registered once: DBOS keeps its registry across instances."""
    from dbos import DBOS

    @DBOS.workflow()
    def waiter() -> Any:
        return DBOS.recv("answer", timeout_seconds=60)

    return waiter


def dbos_cycles(where: Path | str, count: int) -> float | None:
    """DBOS on a SQLite file (a path) or on a PostgreSQL database (a URL)."""
    if not available("dbos"):
        return None
    from dbos import DBOS

    url = f"sqlite:///{where}" if isinstance(where, Path) else where
    DBOS(config={"name": "pawflow-bench", "system_database_url": url})
    waiter = _dbos_waiter()
    DBOS.launch()
    try:
        started = time.perf_counter()
        for _ in range(count):
            handle = DBOS.start_workflow(waiter)
            DBOS.send(handle.workflow_id, True, "answer")
            if handle.get_result() is not True:
                raise SystemExit("dbos did not resume with the answer")
        return time.perf_counter() - started
    finally:
        DBOS.destroy()

"""The same ask → wait → answer → resume cycle in peer systems, on SQLite in the same run.

- LangGraph: a one-node graph whose node calls ``interrupt()``, checkpointed by its
  ``SqliteSaver``; the answer is ``Command(resume=…)``.
- DBOS Transact: a workflow blocked in ``DBOS.recv``; the answer is ``DBOS.send``.

Each function returns the seconds ``count`` cycles took, or ``None`` when the peer is not
installed (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import importlib.util
import sqlite3
import time
from pathlib import Path
from typing import Any, TypedDict


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


class _State(TypedDict):
    answer: Any


def langgraph_cycles(path: Path, count: int) -> float | None:
    if not (available("langgraph") and available("langgraph.checkpoint.sqlite")):
        return None
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    def ask(state: _State) -> dict[str, Any]:
        return {"answer": interrupt("Ship it?")}

    graph = StateGraph(_State)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        app = graph.compile(checkpointer=SqliteSaver(conn))
        started = time.perf_counter()
        for n in range(count):
            config: Any = {"configurable": {"thread_id": f"t{n}"}}
            app.invoke({"answer": None}, config)
            result = app.invoke(Command(resume=True), config)
            if result["answer"] is not True:
                raise SystemExit("langgraph did not resume with the answer")
        return time.perf_counter() - started
    finally:
        conn.close()


def dbos_cycles(path: Path, count: int) -> float | None:
    if not available("dbos"):
        return None
    from dbos import DBOS

    DBOS(config={"name": "pawflow-bench", "system_database_url": f"sqlite:///{path}"})

    @DBOS.workflow()
    def waiter() -> Any:
        return DBOS.recv("answer", timeout_seconds=60)

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

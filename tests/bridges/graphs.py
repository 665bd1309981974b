"""LangGraph graphs the bridge tests interrupt, and a command line to run them in a process
of their own: ``python -m tests.bridges.graphs start|listen --db URL --checkpoints PATH …``.

``start`` runs a refund review on a thread until it interrupts, asks through PawFlow and
exits; ``listen`` resumes the graph on the answers until the thread is done, then prints its
final values as JSON.
"""

from __future__ import annotations

import argparse
import json
import operator
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from langgraph.types import interrupt

from pawflow import open_store
from pawflow.bridges.langgraph import LangGraphBridge, unanswered
from pawflow.testing import eventually

Graph = Pregel[Any, Any, Any, Any]


class Refund(TypedDict, total=False):
    order: str
    amount: int
    outcome: str
    note: str


def review(state: Refund) -> Refund:
    answer = interrupt(
        {
            "kind": "confirm",
            "title": "Refund",
            "message": f"Refund {state['amount']} EUR on order {state['order']}?",
            "context": {"order": state["order"]},  # stays with the graph
        }
    )
    status = unanswered(answer)
    if status is not None:
        return {"outcome": status}
    return {"outcome": "approved" if answer is True else "refused"}


def note(state: Refund) -> Refund:
    if state["outcome"] != "approved":
        return {}
    text = interrupt("A note for the customer?")
    return {"note": "" if unanswered(text) else str(text)}


def refund_graph(checkpoints: Path) -> Graph:
    """The review, then (when approved) a note: two interrupts, one after the other."""
    builder = StateGraph(Refund)
    builder.add_node("review", review)
    builder.add_node("note", note)
    builder.add_edge(START, "review")
    builder.add_edge("review", "note")
    builder.add_edge("note", END)
    return builder.compile(checkpointer=_saver(checkpoints))


class Pair(TypedDict, total=False):
    answers: Annotated[list[str], operator.add]


def _ask(question: str) -> Any:
    def node(state: Pair) -> Pair:
        return {"answers": [f"{question} {interrupt(question)}"]}

    return node


def parallel_graph(checkpoints: Path) -> Graph:
    """Two branches that interrupt in the same step, answered in any order."""
    builder = StateGraph(Pair)
    builder.add_node("left", _ask("Left?"))
    builder.add_node("right", _ask("Right?"))
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge("left", END)
    builder.add_edge("right", END)
    return builder.compile(checkpointer=_saver(checkpoints))


def _saver(checkpoints: Path) -> SqliteSaver:
    # Deliveries run on the store's listener thread, not the one that opened the file.
    return SqliteSaver(sqlite3.connect(checkpoints, check_same_thread=False))


def config(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["start", "listen"])
    parser.add_argument("--db", required=True)
    parser.add_argument("--checkpoints", required=True, type=Path)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--owner", default="")
    parser.add_argument("--conversation", default="")
    args = parser.parse_args(argv)
    store = open_store(args.db)
    graph = refund_graph(args.checkpoints)
    bridge = LangGraphBridge(store, graph, name="refunds")
    if args.command == "start":
        bridge.invoke(
            {"order": args.thread, "amount": 120},
            thread_id=args.thread,
            owner=args.owner,
            conversation_id=args.conversation,
        )
    else:
        bridge.listen()
        eventually(lambda: not graph.get_state(config(args.thread)).next, timeout=90, interval=0.1)
        print(json.dumps(graph.get_state(config(args.thread)).values), flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

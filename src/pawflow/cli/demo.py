"""``pawflow demo``: ask a question, answer it, and watch the waiting requester resume."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import typer

from pawflow.cli.server import DB_OPTION, console

if TYPE_CHECKING:
    from pawflow.store import Delivery


def demo(
    db: str | None = DB_OPTION,
) -> None:
    """Ask, answer, resume: the whole durable cycle on the embedded store."""
    from pawflow.store import Park, Question, open_store

    with open_store(db) as store:
        conversation = store.create_conversation("demo", "Demo")
        resumed = threading.Event()

        def on_resume(delivery: Delivery) -> None:
            outcome = delivery.continuation.value
            console.print(f"[bold green]resumed[/] {delivery.continuation.target} with {outcome}")
            resumed.set()

        store.register_handler("demo", on_resume)
        # The requester asks and waits in one transaction: no answer can slip in between.
        asked = Question(
            "demo",
            conversation.id,
            "choice",
            "Which environment should I deploy to?",
            options=["staging", "production"],
            requester={"type": "flow", "name": "deploy"},
            expires_in="1d",
        )
        question, parked = store.ask(asked, park=Park("demo:deploy"))
        assert parked is not None
        console.print(f"[bold]asked[/] {question.id}: {question.message} {question.options}")
        console.print(f"[bold]parked[/] {parked.id} on {question.signal_id}")

        answered = store.respond_interaction(question.id, "staging", user="demo")
        console.print(f"[bold]answered[/] {answered.answer!r} by {answered.answered_by}")
        if not resumed.wait(10):
            raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)

"""``pawflow session inspect`` and ``pawflow run inspect``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pawflow.chat.service import ChatService
from pawflow.cli import app
from pawflow.clock import FakeClock
from pawflow.store import Store
from tests.chat.conftest import conversation, say

runner = CliRunner()


@pytest.fixture
def clock() -> FakeClock:
    """Now: the commands read with the system clock, and TTLs are enforced on read."""
    return FakeClock(datetime.now(UTC))


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    return sqlite_store


def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'pawflow.db'}"


def run(*args: str) -> tuple[int, list[str]]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output.splitlines()


def test_a_paused_run_shows_what_the_conversation_waits_on(
    store: Store, service: ChatService, tmp_path: Path
) -> None:
    session = conversation(store, service)
    say(service, session, "set up a graph database")
    asked = service.sessions.pending(session)
    assert asked is not None and asked.run_id is not None
    run_id = asked.run_id

    code, lines = run("session", "inspect", session, "--db", db(tmp_path))
    assert code == 0, lines
    assert lines[0] == f'session {session} — conversation "Planner" of alice'
    assert lines[1].startswith(
        'this conversation is waiting on planner: a question, "Neo4j or Stardog?" (explicit; asked '
    )
    assert lines[2].startswith(
        f"behind it: checkpoint {run_id}/0001 of planner (awaiting_user_input, step 1,"
    )
    assert 'asked "Neo4j or Stardog?"' in lines[2]
    assert lines[3] == "history:"
    assert "question" in lines[4] and "pending" in lines[4] and f"[run {run_id}/0001]" in lines[4]

    code, lines = run("run", "inspect", run_id, "--db", db(tmp_path))
    assert code == 0, lines
    assert lines[0] == f"run {run_id} of planner in conversation {session}"
    assert lines[1] == "checkpoints:"
    assert lines[2].startswith(f"  checkpoint {run_id}/0001 of planner (awaiting_user_input")
    assert (
        lines[3]
        == f'this run is waiting on the answer to "Neo4j or Stardog?" in conversation {session}'
    )

    say(service, session, "Stardog")
    code, lines = run("session", "inspect", session, "--db", db(tmp_path))
    assert lines[1] == "this conversation is waiting on nothing"
    assert 'answered   "Neo4j or Stardog?" ← "Stardog"' in lines[3]
    code, lines = run("run", "inspect", run_id, "--db", db(tmp_path))
    assert "this run is waiting on nothing" in lines


def test_a_choice_lists_its_options(store: Store, service: ChatService, tmp_path: Path) -> None:
    session = conversation(store, service)
    say(service, session, "what's in the news?")
    code, lines = run("session", "inspect", session, "--db", db(tmp_path))
    assert code == 0
    assert lines[1].startswith(
        'this conversation is waiting on planner: a choice, "Want me to open any of these?"'
        " (inferred;"
    )
    assert lines[2:7] == [
        "  1. Alpha",
        "  2. Beta",
        "  3. Gamma",
        "  4. Delta launches",
        "  5. Epsilon",
    ]


def test_unknown_ids_are_an_error(store: Store, tmp_path: Path) -> None:
    assert run("session", "inspect", "nope", "--db", db(tmp_path))[0] == 1
    assert run("run", "inspect", "nope", "--db", db(tmp_path))[0] == 1

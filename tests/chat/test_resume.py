"""Tier B: ask_user pauses the run; the next message in the session resumes that same run."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from pawflow.agent.resume import OBSERVATION, decode, load_seed
from pawflow.chat.service import ChatService
from pawflow.clock import FakeClock
from pawflow.store import Store
from pawflow.store.engine.database import sql
from tests.chat.conftest import conversation, install, last_reply, pending, say

ASKED = "Neo4j or Stardog?"


def observation(reply: str) -> str:
    return OBSERVATION.format(question=ASKED, reply=reply)


def ask(service: ChatService, session: str) -> tuple[str, str]:
    """Have the planner ask; the run id and step id its continuation points at."""
    turn = say(service, session, "set up a graph database")
    [result] = turn.results
    assert (result.status, result.halt_reason) == ("halted", "awaiting_user_input")
    assert last_reply(service.store, session) == ("planner", ASKED)
    asked = pending(service, session)
    assert asked is not None
    assert (asked.kind, asked.origin, asked.owner, asked.question, asked.intent) == (
        "question",
        "explicit",
        "planner",
        ASKED,
        "resume",
    )
    assert (asked.run_id, asked.step_id) == result.checkpoint
    assert asked.run_id is not None and asked.step_id is not None
    return asked.run_id, asked.step_id


def test_the_reply_resumes_the_same_run_as_the_paused_steps_observation(
    store: Store, service: ChatService
) -> None:
    session = conversation(store, service)
    run_id, step_id = ask(service, session)
    checkpoint = service.checkpoints.get(run_id, step_id)
    assert checkpoint is not None and checkpoint.halt_reason == "awaiting_user_input"
    assert checkpoint.session_id == session

    turn = say(service, session, "Stardog")
    assert turn.match is not None and turn.match.seed is not None and turn.intent == "resume"
    [result] = turn.results
    assert result.run_id == run_id  # the same run, not a new one
    assert (result.status, result.steps) == ("completed", 2)  # at the next iteration
    tool_messages = [m for m in result.messages if m.role == "tool"]
    assert [m.content for m in tool_messages] == [observation("Stardog")]
    assert last_reply(store, session) == ("planner", "Setting up Stardog.")
    [answered] = service.sessions.history(session)
    assert (answered.status, answered.reply) == ("answered", "Stardog")
    assert turn.recorded is not None and turn.recorded.data is not None
    assert turn.recorded.data["run_id"] == run_id


def test_a_change_of_subject_is_still_handled_by_the_resumed_run(
    store: Store, service: ChatService
) -> None:
    session = conversation(store, service)
    run_id, _ = ask(service, session)
    turn = say(service, session, "what's the weather like?")
    [result] = turn.results
    assert result.run_id == run_id
    assert last_reply(store, session) == (
        "planner",
        "Dropping the setup. About what's the weather like?: it is sunny.",
    )
    assert pending(service, session) is None


@pytest.fixture
def short_lived(sqlite_store: Store, sandbox: Path) -> Iterator[ChatService]:
    """Checkpoints that expire long before the question does."""
    with ChatService(sqlite_store, poll_interval=None, checkpoint_ttl=timedelta(hours=1)) as s:
        install(s, sandbox)
        yield s


def test_an_expired_checkpoint_degrades_to_a_fresh_turn(
    sqlite_store: Store, short_lived: ChatService, clock: FakeClock
) -> None:
    store, service = sqlite_store, short_lived
    session = conversation(store, service)
    run_id, step_id = ask(service, session)
    clock.advance("2h")
    assert load_seed(service.checkpoints, run_id, step_id) is None

    turn = say(service, session, "Stardog")
    assert turn.match is None and turn.intent == "chat"
    assert any("cannot resume" in note for note in turn.notes)
    [result] = turn.results
    assert result.run_id != run_id  # a fresh run over the conversation
    assert last_reply(store, session) == ("planner", "Planner here.")
    [closed] = service.sessions.history(session)
    assert closed.status == "expired"


def test_an_undecodable_checkpoint_degrades_to_a_fresh_turn(
    sqlite_store: Store, short_lived: ChatService
) -> None:
    store, service = sqlite_store, short_lived
    session = conversation(store, service)
    run_id, step_id = ask(service, session)
    with store.transaction() as tx:
        sql(tx).execute(
            "UPDATE checkpoints SET payload = ? WHERE run_id = ? AND step_id = ?",
            (b'{"v": 99}', run_id, step_id),
        )
    turn = say(service, session, "Stardog")
    assert turn.match is None and turn.results[0].run_id != run_id
    assert last_reply(store, session) == ("planner", "Planner here.")


def test_one_decoder_gives_the_seed(store: Store, service: ChatService) -> None:
    session = conversation(store, service)
    run_id, step_id = ask(service, session)
    checkpoint = service.checkpoints.get(run_id, step_id)
    assert checkpoint is not None
    seed = decode(checkpoint)
    assert (seed.agent, seed.run_id, seed.step, seed.question) == ("planner", run_id, 1, ASKED)
    assert seed.awaits_user and seed.session_id == session
    messages = seed.messages_with_reply("Neo4j")
    assert messages[0].role == "system"
    assert messages[-1].role == "tool" and messages[-1].content == observation("Neo4j")
    assert len(messages) == len(seed.messages)


def test_a_late_reply_is_regrounded_in_the_question(
    store: Store, service: ChatService, clock: FakeClock
) -> None:
    session = conversation(store, service)
    run_id, _ = ask(service, session)
    clock.advance("2d")
    turn = say(service, session, "Neo4j")
    assert turn.results[0].run_id == run_id
    assert last_reply(store, session)[1] == (
        f'Earlier I asked "{ASKED}" — you replied "Neo4j".\n\nSetting up Neo4j.'
    )


def test_a_yes_reaches_the_agent_that_asked_on_every_backend(
    store: Store, service: ChatService, sandbox: Path
) -> None:
    files = conversation(store, service, "Files")
    say(service, files, "organize my downloads")
    session = conversation(store, service)
    say(service, session, "plan the launch")
    say(service, session, "yes go ahead with the plan")
    assert last_reply(store, session)[1].endswith("Planner acting on yes.")
    assert not (sandbox / "documents").exists()

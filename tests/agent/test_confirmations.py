"""request_confirmation end to end: ask → pending → answer → one wakeup → the agent goes on."""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from pawflow.agent import AgentSpec
from pawflow.chat.service import ChatService
from pawflow.clock import FakeClock
from pawflow.demo.agents import DEMO_AGENT
from pawflow.records import Conversation
from pawflow.store import Store, open_store
from pawflow.store.runtime import turns as turn_queue
from pawflow.testing import eventually, throwaway_postgres
from tests.agent.conftest import USER, history, say, scheduled
from tests.conftest import require_postgres

QUESTION = "Which environment should I deploy to?"


def pending_question(store: Store) -> str:
    [request] = store.list_interactions(user=USER, status="pending")
    return request.id


def test_answer_wakes_the_agent_exactly_once(
    store: Store, service: ChatService, conversation: Conversation
) -> None:
    say(store, service, conversation.id, "Please deploy the app")

    [request] = store.list_interactions(user=USER, status="pending")
    assert request.kind == "choice" and request.message == QUESTION
    assert [o["value"] for o in request.options or []] == ["staging", "production"]
    assert request.requester.type == "agent" and request.requester.name == DEMO_AGENT
    assert request.expires_at is not None  # expires_in: 1d
    assert store.pending_continuations(f"agent:{DEMO_AGENT}") == 1
    role, author, text = history(store, conversation.id)[-1]
    assert (role, author) == ("assistant", DEMO_AGENT)
    assert "I've asked: Which environment should I deploy to?" in text
    assert service.run_due() == 0  # nothing to wake up for yet

    store.respond_interaction(request.id, "staging", user=USER)

    # Consumed together with the wakeup it scheduled, in one transaction.
    [wakeup] = scheduled(service, conversation.id)
    assert store.pending_continuations(f"agent:{DEMO_AGENT}") == 0
    assert wakeup.text == (
        f"[agent:{DEMO_AGENT}] [confirmation:{request.id}]"
        f' The user answered "{QUESTION}": "staging"'
    )

    assert service.run_due() == 1
    assert service.run_due() == 0
    store.sweep()
    assert [w.status for w in service.wakeups_of(conversation.id)] == ["done"]

    turns = history(store, conversation.id)
    assert [(role, author) for role, author, _ in turns] == [
        ("user", USER),
        ("assistant", DEMO_AGENT),
        ("system", f"agent:{DEMO_AGENT}"),
        ("assistant", DEMO_AGENT),
    ]
    assert turns[2][2] == wakeup.text
    assert re.search(r"you picked staging\. Deploying now\.", turns[3][2])
    assert re.search(r"Done: deployed build \d+ to staging\.", turns[3][2])


def test_the_wakeup_is_one_system_marked_message_even_when_claimed_twice(
    store: Store, service: ChatService, conversation: Conversation, clock: FakeClock
) -> None:
    say(store, service, conversation.id, "deploy")
    store.respond_interaction(pending_question(store), "production", user=USER)
    [wakeup] = scheduled(service, conversation.id)
    assert service.run_wakeup(wakeup) is True
    assert service.run_wakeup(wakeup) is False  # the claim is a conditional update
    system = [t for t in history(store, conversation.id) if t[0] == "system"]
    assert len(system) == 1


def test_cancel_wakes_the_agent_saying_so(
    store: Store, service: ChatService, conversation: Conversation
) -> None:
    say(store, service, conversation.id, "deploy please")
    request_id = pending_question(store)
    store.cancel_interaction(request_id, user=USER)
    scheduled(service, conversation.id)
    assert service.run_due() == 1
    turns = history(store, conversation.id)
    assert turns[-2][2] == (
        f'[agent:{DEMO_AGENT}] [confirmation:{request_id}] The user cancelled "{QUESTION}"'
        " without answering."
    )
    assert "the question was cancelled: I have not deployed anything" in turns[-1][2]


def test_expiry_wakes_the_agent_through_the_sweeper(
    store: Store, service: ChatService, conversation: Conversation, clock: FakeClock
) -> None:
    say(store, service, conversation.id, "deploy")
    request_id = pending_question(store)
    clock.advance("25h")
    report = store.sweep()  # expires the request, delivers, runs the due wakeup
    assert report["expired"] == 1
    if not report["wakeups"]:  # on PostgreSQL the listener thread may deliver it instead
        eventually(lambda: store.sweep()["wakeups"])
    turns = history(store, conversation.id)
    assert turns[-2][2] == (
        f'[agent:{DEMO_AGENT}] [confirmation:{request_id}] The request "{QUESTION}"'
        " expired without an answer."
    )
    assert "the question was expired" in turns[-1][2]
    assert store.sweep()["wakeups"] == 0


def test_quick_answer_within_wait_seconds_stays_in_the_turn(
    store: Store, conversation: Conversation, helper: AgentSpec, deployer: AgentSpec
) -> None:
    store.create_conversation(USER, "other")
    # A poller thread runs too: it must find nothing to wake up for.
    with ChatService(store, [helper, deployer], poll_interval=0.02) as service:
        service.assign(conversation.id, "helper")
        with store.unit() as u:
            message = u.messages.append_message(
                conversation.id, content="quick question", author=USER
            )
        done = threading.Event()

        def turn() -> None:
            service.handle_message(store, conversation.id, message)
            done.set()

        worker = threading.Thread(target=turn)
        worker.start()
        try:
            request_id = eventually(lambda: store.list_interactions(user=USER, status="pending"))[
                0
            ].id
            store.respond_interaction(request_id, True, user=USER)
        finally:
            worker.join(timeout=30)
        assert done.is_set()
        passes = service.poller.passes if service.poller else 0
        eventually(lambda: service.poller is not None and service.poller.passes > passes + 1)

    assert history(store, conversation.id)[-1] == (
        "assistant",
        "helper",
        "Got it right away: true.",
    )
    assert all(w.status == "absorbed" for w in service.wakeups_of(conversation.id))
    assert not [t for t in history(store, conversation.id) if t[0] == "system"]
    assert store.pending_continuations("agent:helper") == 0


def test_no_quick_answer_falls_back_to_a_wakeup(
    store: Store, service: ChatService, conversation: Conversation
) -> None:
    service.assign(conversation.id, "helper")
    say(store, service, conversation.id, "brief question")
    assert "I've asked: Proceed?" in history(store, conversation.id)[-1][2]
    store.respond_interaction(pending_question(store), False, user=USER)
    scheduled(service, conversation.id)
    assert service.run_due() == 1
    assert history(store, conversation.id)[-1] == ("assistant", "helper", "Got it later: false.")


@pytest.mark.parametrize("answered_while_down", [False, True])
def test_the_wakeup_survives_a_restart(
    backend: str, tmp_path: Path, deployer: AgentSpec, answered_while_down: bool
) -> None:
    clock = FakeClock()

    def run(url: str) -> None:
        with open_store(url, clock=clock) as store:
            with ChatService(store, [deployer], poll_interval=None) as service:
                conversation = store.create_conversation(USER, "Releases")
                service.assign(conversation.id, DEMO_AGENT)
                say(store, service, conversation.id, "deploy")
            request_id = pending_question(store)
            conversation_id = conversation.id
            if answered_while_down:
                # No agent runs here: the answer waits, resolved, for one that does.
                store.respond_interaction(request_id, "production", user=USER)
                assert store.pending_continuations(f"agent:{DEMO_AGENT}") == 1

        with (
            open_store(url, clock=clock) as store,
            ChatService(store, [deployer], poll_interval=None) as service,
        ):
            if not answered_while_down:
                store.respond_interaction(request_id, "production", user=USER)
            scheduled(service, conversation_id)
            assert service.run_due() == 1
            assert service.run_due() == 0
            turns = history(store, conversation_id)
            assert turns[-2][0] == "system" and '"production"' in turns[-2][2]
            assert re.search(r"Done: deployed build \d+ to production\.", turns[-1][2])

    if backend == "sqlite":
        run(f"sqlite:///{tmp_path / 'restart.db'}")
    else:
        require_postgres()
        with throwaway_postgres() as url:
            run(url)


def test_the_poller_delivers_without_being_asked(
    store: Store, deployer: AgentSpec, helper: AgentSpec
) -> None:
    with ChatService(store, [deployer, helper], poll_interval=5.0) as service:
        conversation = store.create_conversation(USER, "Releases")
        service.assign(conversation.id, DEMO_AGENT)
        say(store, service, conversation.id, "deploy")
        store.respond_interaction(pending_question(store), "staging", user=USER)
        # The delivery wakes the poller at once: no waiting for its interval.
        eventually(lambda: [w.status for w in service.wakeups_of(conversation.id)] == ["done"])
        assert "Done: deployed" in history(store, conversation.id)[-1][2]


def test_an_agent_not_running_here_keeps_its_answers_for_later(
    store: Store, deployer: AgentSpec, helper: AgentSpec
) -> None:
    with ChatService(store, [deployer], poll_interval=None) as service:
        conversation = store.create_conversation(USER, "Releases")
        service.assign(conversation.id, DEMO_AGENT)
        say(store, service, conversation.id, "deploy")
    with ChatService(store, [helper], poll_interval=None) as other:
        store.respond_interaction(pending_question(store), "staging", user=USER)
        assert store.pending_continuations(f"agent:{DEMO_AGENT}") == 1
        assert other.wakeups_of(conversation.id) == []


def test_a_turn_cut_short_by_a_crash_runs_again_after_its_lease(
    store: Store, service: ChatService, conversation: Conversation, clock: FakeClock
) -> None:
    say(store, service, conversation.id, "deploy")
    store.respond_interaction(pending_question(store), "staging", user=USER)
    [wakeup] = scheduled(service, conversation.id)
    # A process claims its turn and starts it (posting the wakeup message), and dies
    # before the turn ends.
    with store.unit() as u:
        claimed = u.turns.claim(wakeup.id, "dead-process", service.lease)
    assert claimed is not None
    with store.transaction() as tx:
        assert turn_queue.start_wakeup(tx, claimed.key, store.now())
    assert service.run_due() == 0  # its lease still holds
    clock.advance("11m")
    assert service.run_due() == 1
    turns = history(store, conversation.id)
    assert len([t for t in turns if t[0] == "system"]) == 1  # the message is not posted again
    assert "Done: deployed" in turns[-1][2]
    assert [w.status for w in service.wakeups_of(conversation.id)] == ["done"]


def test_a_wakeup_taken_over_after_a_crash_runs_before_the_messages_that_followed(
    store: Store, service: ChatService, conversation: Conversation, clock: FakeClock
) -> None:
    service.assign(conversation.id, "helper")
    say(store, service, conversation.id, "brief question")
    store.respond_interaction(pending_question(store), True, user=USER)
    [wakeup] = scheduled(service, conversation.id)
    # A process claims the wakeup's turn, starts it a moment later, and dies; its lease
    # runs out.
    with store.unit() as u:
        claimed = u.turns.claim(wakeup.id, "dead-process", service.lease)
    assert claimed is not None
    moment = timedelta(milliseconds=1)
    clock.advance(moment)
    with store.transaction() as tx:
        assert turn_queue.start_wakeup(tx, claimed.key, store.now())
    clock.advance(service.lease)
    store.post_message(conversation.id, "later", user=USER)

    service.run_due()

    replies = [text for role, _, text in history(store, conversation.id) if role == "assistant"]
    # The answer is replied to first, then the message that came after it: each once.
    assert replies[1:] == ["Got it later: true.", "Hello from the helper."]
    assert [w.status for w in service.wakeups_of(conversation.id)] == ["done"]

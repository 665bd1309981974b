"""The organizer and the inbox: intercepts with session-scoped plans and shortlists."""

from __future__ import annotations

from pathlib import Path

import pytest

from pawflow.chat.plugins import resolve_plugin
from pawflow.chat.service import ChatService
from pawflow.clock import FakeClock
from pawflow.demo import chat as demo_chat
from pawflow.demo.chat import SAMPLE_FILES
from pawflow.errors import InvalidInput
from pawflow.store import Store
from tests.chat.conftest import conversation, last_reply, pending, sandbox_state, say

ORGANIZED = {
    "archives/old-site-backup.zip",
    "documents/launch-plan.pdf",
    "documents/meeting-notes.txt",
    "images/logo.png",
    "images/team-photo.jpg",
    "spreadsheets/budget-2024.xlsx",
    "todo",
}


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    return sqlite_store


def test_organize_proposes_and_a_yes_moves_the_files(
    store: Store, service: ChatService, sandbox: Path
) -> None:
    session = conversation(store, service)
    turn = say(service, session, "organize my downloads")
    assert turn.answered_by == "organizer.organize" and turn.trace == ["intercept"]
    author, text = last_reply(store, session)
    assert author == "organizer"
    assert text.splitlines()[0] == "I can tidy up downloads/ by moving 6 files:"
    assert "- launch-plan.pdf → documents/" in text
    plan = pending(service, session)
    assert plan is not None and (plan.owner, plan.kind, plan.origin) == (
        "organizer",
        "approval",
        "explicit",
    )
    assert set(sandbox_state(sandbox)) == set(SAMPLE_FILES)  # nothing moved yet

    say(service, session, "yes")
    author, text = last_reply(store, session)
    assert author == "organizer"
    assert text.startswith(
        f'Earlier I asked "{plan.question}" — taking that as yes.\nMoved 6 files:'
    )
    assert set(sandbox_state(sandbox)) == ORGANIZED
    assert sandbox_state(sandbox)["todo"] == SAMPLE_FILES["todo"]


def test_a_no_moves_nothing(store: Store, service: ChatService, sandbox: Path) -> None:
    session = conversation(store, service)
    say(service, session, "tidy up the downloads")
    say(service, session, "no")
    assert last_reply(store, session)[1].endswith("I left every file where it was.")
    assert set(sandbox_state(sandbox)) == set(SAMPLE_FILES)


def test_every_move_is_checked_again_before_it_is_made(
    store: Store, service: ChatService, sandbox: Path
) -> None:
    session = conversation(store, service)
    say(service, session, "organize the sandbox")
    (sandbox / "logo.png").write_text("a new logo, longer than before\n")
    (sandbox / "team-photo.jpg").unlink()
    (sandbox / "documents").mkdir()
    (sandbox / "documents" / "launch-plan.pdf").write_text("someone else's plan")
    say(service, session, "go ahead")
    text = last_reply(store, session)[1]
    assert "Moved 3 files:" in text
    assert "- skipped logo.png: it changed since the plan was made" in text
    assert "- skipped team-photo.jpg: it is gone" in text
    assert "- skipped launch-plan.pdf: documents/launch-plan.pdf already exists" in text
    state = sandbox_state(sandbox)
    assert state["documents/launch-plan.pdf"] == "someone else's plan"
    assert "launch-plan.pdf" in state and "logo.png" in state


def test_a_plan_belongs_to_its_session_and_expires(
    store: Store, service: ChatService, sandbox: Path, clock: FakeClock
) -> None:
    proposed = conversation(store, service, "Files")
    elsewhere = conversation(store, service, "Chat")
    say(service, proposed, "organize my downloads")
    say(service, elsewhere, "yes")  # nothing is pending there: not the organizer's yes
    assert last_reply(store, elsewhere) == ("planner", "Planner here.")
    assert set(sandbox_state(sandbox)) == set(SAMPLE_FILES)

    clock.advance("2d")  # past the plan's day
    say(service, proposed, "yes")
    assert last_reply(store, proposed) == ("planner", "Planner here.")
    assert set(sandbox_state(sandbox)) == set(SAMPLE_FILES)
    assert [c.status for c in service.sessions.history(proposed)] == ["expired"]


def test_a_later_question_in_the_session_shields_the_plan(
    store: Store, service: ChatService, sandbox: Path
) -> None:
    session = conversation(store, service)
    say(service, session, "organize my downloads")
    say(service, session, "plan the launch")  # the planner asks last
    turn = say(service, session, "yes go ahead with the plan")
    assert "shielded organizer.approve" in turn.notes
    assert last_reply(store, session)[0] == "planner"
    assert set(sandbox_state(sandbox)) == set(SAMPLE_FILES)
    assert [c.status for c in service.sessions.history(session)] == ["superseded", "answered"]


def test_an_ambiguous_read_gets_a_shortlist_and_a_pick_opens_one(
    store: Store, service: ChatService
) -> None:
    session = conversation(store, service)
    say(service, session, "read the email about the invoice")
    author, text = last_reply(store, session)
    assert author == "inbox"
    assert text.splitlines() == [
        'I found 3 emails about "the invoice":',
        "1. Re: the invoice for the logo work — Maria Lopez, 04 Jun",
        "2. Invoice #1107 for May — Acme Billing, 03 Jun",
        "3. Invoice #1042 for April — Acme Billing, 02 May",
        "Which one should I open?",
    ]
    shortlist = pending(service, session)
    assert shortlist is not None
    assert (shortlist.owner, shortlist.kind, shortlist.origin) == ("inbox", "choice", "explicit")

    say(service, session, "the 2nd one")
    author, text = last_reply(store, session)
    assert author == "inbox"
    assert text.startswith(
        'Earlier I asked "Which one should I open?" — taking that as #2:'
        " Invoice #1107 for May — Acme Billing, 03 Jun.\n\nFrom: Acme Billing"
    )
    assert "4 seats of the Team plan" in text
    assert pending(service, session) is None


def test_a_shortlist_is_withdrawn_by_a_message_that_picks_nothing(
    store: Store, service: ChatService
) -> None:
    session = conversation(store, service)
    say(service, session, "check my inbox")
    assert last_reply(store, session)[1].startswith("The latest 6 emails in your inbox:")
    say(service, session, "what's the capital of France?")
    assert last_reply(store, session) == ("planner", "Paris.")
    assert [c.status for c in service.sessions.history(session)] == ["withdrawn"]


def test_one_match_opens_at_once_and_none_says_so(store: Store, service: ChatService) -> None:
    session = conversation(store, service)
    say(service, session, "read the email about the offsite")
    assert last_reply(store, session)[1].startswith("From: People Team\n")
    say(service, session, "open the message about unicorns")
    assert last_reply(store, session)[1] == 'I found no email about "unicorns".'
    assert pending(service, session) is None


def test_plugins_register_through_the_services_object(service: ChatService) -> None:
    planner = service.agent("planner")
    assert planner is not None and planner.toolbox.get("search_inbox") is not None
    names = [row["name"] for row in service.intercepts.describe()]
    assert names == [
        "organizer.approve",
        "inbox.open",
        "organizer.organize",
        "inbox.read",
        "inbox.list",
    ]
    assert service.chat.plugins == ["planner", "organizer", "inbox"]
    with pytest.raises(InvalidInput, match="unknown chat plugin"):
        resolve_plugin("nonsense")
    with pytest.raises(InvalidInput, match="sandbox"):
        demo_chat.install(service.chat, "organizer", {})

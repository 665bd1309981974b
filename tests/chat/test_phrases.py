"""The phrase table through the pipeline: every row is a real turn of a chat service.

One service and one conversation serve the whole table (a fresh service per row would
spend the time on set-up): each row first re-opens what it answers — the planner's offer
for the yes/no rows, its list of headlines for the pick rows — then says the row.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pawflow.chat import Turn
from pawflow.chat.service import ChatService
from pawflow.demo.chat import fill_sandbox
from pawflow.reading.words import read_pick, read_yes_no
from pawflow.store import Store, open_store
from tests.chat.conftest import conversation, install, pending, say
from tests.chat.phrases import NEITHER, NO, NOT_PICKS, PICKS, YES


class Chat:
    def __init__(self, service: ChatService, session: str) -> None:
        self.service = service
        self.session = session

    def offer(self, opening: str, kind: str) -> str:
        say(self.service, self.session, opening)
        asked = pending(self.service, self.session)
        assert asked is not None and asked.kind == kind
        return asked.id

    def say(self, text: str) -> Turn:
        return say(self.service, self.session, text)


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chat]:
    folder: Path = tmp_path_factory.mktemp("phrases")
    fill_sandbox(folder / "downloads")
    store: Store = open_store(f"sqlite:///{folder / 'phrases.db'}")
    try:
        with ChatService(store, poll_interval=None) as service:
            install(service, folder / "downloads")
            yield Chat(service, conversation(store, service))
    finally:
        store.close()


def _approval(chat: Chat, text: str) -> Turn:
    chat.offer("plan the launch", "approval")
    return chat.say(text) if text else chat.say(" ")


@pytest.mark.parametrize("text", YES)
def test_a_yes_matches_the_offer_as_yes(chat: Chat, text: str) -> None:
    assert read_yes_no(text) is True
    turn = _approval(chat, text)
    assert turn.match is not None and turn.match.answer is True, turn.notes
    assert pending(chat.service, chat.session) is None


@pytest.mark.parametrize("text", NO)
def test_a_no_matches_the_offer_as_no(chat: Chat, text: str) -> None:
    assert read_yes_no(text) is False
    turn = _approval(chat, text)
    assert turn.match is not None and turn.match.answer is False, turn.notes
    assert pending(chat.service, chat.session) is None


@pytest.mark.parametrize("text", NEITHER)
def test_anything_else_leaves_the_offer_pending(chat: Chat, text: str) -> None:
    assert read_yes_no(text) is None
    turn = _approval(chat, text)
    assert turn.match is None
    still = pending(chat.service, chat.session)
    assert still is not None and still.kind == "approval"
    chat.say("no")  # closes it for the next row


@pytest.mark.parametrize(("text", "item"), PICKS)
def test_a_pick_matches_the_list(chat: Chat, text: str, item: int) -> None:
    assert read_pick(text, 5) == item
    chat.offer("what's in the news?", "choice")
    turn = chat.say(text)
    assert turn.match is not None and turn.match.pick == item, turn.notes
    assert pending(chat.service, chat.session) is None


@pytest.mark.parametrize("text", NOT_PICKS)
def test_a_message_that_does_not_pick_withdraws_the_list(chat: Chat, text: str) -> None:
    assert read_pick(text, 5) is None
    offered = chat.offer("what's in the news?", "choice")
    turn = chat.say(text or " ")
    assert turn.match is None
    assert f"withdrew choice {offered}: not a pick" in turn.notes
    [closed] = [c for c in chat.service.sessions.history(chat.session) if c.id == offered]
    assert closed.status == "withdrawn"


def test_the_table_is_large_enough() -> None:
    rows = len(YES) + len(NO) + len(NEITHER) + len(PICKS) + len(NOT_PICKS)
    assert rows >= 150
    assert min(len(YES), len(NO), len(NEITHER), len(PICKS), len(NOT_PICKS)) >= 25

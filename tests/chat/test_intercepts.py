"""The intercept chain: YAML rows, plugin overrides, and the shield."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from pawflow.chat import InterceptChain, InterceptRow, InterceptSpec, Turn
from pawflow.chat.intercepts import packaged_rows, parse_rows
from pawflow.chat.service import ChatService
from pawflow.demo.plugins import ROWS_FILE
from pawflow.errors import InvalidInput
from pawflow.reading.words import read_yes_no
from pawflow.store import Store
from tests.chat.conftest import USER, conversation, install, last_reply, say


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    return sqlite_store


def noop(turn: Turn) -> str | None:
    return None


def test_the_core_chain_is_empty_and_the_demo_rows_declare_the_resolvers() -> None:
    assert packaged_rows() == []
    text = resources.files("pawflow.demo.plugins").joinpath(ROWS_FILE).read_text("utf-8")
    rows = {row.name: row for row in parse_rows(text)}
    assert rows["organizer.approve"].resolves_confirmation
    assert rows["inbox.open"].resolves_confirmation
    assert not rows["organizer.organize"].resolves_confirmation
    assert list(rows)[:2] == ["organizer.approve", "inbox.open"]


def test_resolves_confirmation_is_or_ed_and_cannot_be_dropped() -> None:
    chain = InterceptChain([InterceptRow("greedy", resolves_confirmation=True)])
    chain.register(InterceptSpec("greedy", noop, resolves_confirmation=False))
    chain.load("intercepts:\n  - name: greedy\n    resolves_confirmation: false\n")
    [bound] = chain.bound()
    assert bound.resolves_confirmation  # the YAML row said so; nothing takes it back
    chain.register(InterceptSpec("late", noop), resolves_confirmation=True)
    assert [b.resolves_confirmation for b in chain.bound()] == [True, True]


def test_rows_order_the_chain_and_plugins_place_or_disable_theirs() -> None:
    chain = InterceptChain(parse_rows("intercepts: [{name: b}, {name: a}]"))
    for name in ("a", "b", "c"):
        chain.register(InterceptSpec(name, noop))
    chain.register(InterceptSpec("first", noop), before="b")
    assert [b.name for b in chain.bound()] == ["first", "b", "a", "c"]
    chain.load("intercepts: [{name: a, enabled: false}]")
    assert [b.name for b in chain.bound()] == ["first", "b", "c"]
    assert [b.owner for b in chain.bound()] == ["first", "b", "c"]
    with pytest.raises(InvalidInput, match="already registered"):
        chain.register(InterceptSpec("a", noop))
    with pytest.raises(InvalidInput, match="unknown keys"):
        parse_rows("intercepts: [{name: x, colour: red}]")
    with pytest.raises(InvalidInput, match="true or false"):
        parse_rows("intercepts: [{name: x, resolves_confirmation: maybe}]")


class Greedy:
    """A careless plugin: takes any yes in any conversation, and says it acted."""

    name = "greedy.approve"
    owner = "greedy"
    resolves_confirmation = False  # it "forgets" to declare it; the YAML row does

    def __init__(self) -> None:
        self.acted: list[str] = []

    def __call__(self, turn: Turn) -> str | None:
        if read_yes_no(turn.text):
            self.acted.append(turn.conversation_id)
            return "Greedy acted."
        return None


class Echo:
    name = "echo"
    resolves_confirmation = False

    def __call__(self, turn: Turn) -> str | None:
        return "echo" if turn.text.startswith("echo") else None


@pytest.fixture
def greedy(store: Store, sandbox: Path) -> Iterator[tuple[ChatService, Greedy]]:
    careless = Greedy()
    with ChatService(store, poll_interval=None) as service:
        install(service, sandbox)
        service.chat.declare_intercepts(
            "intercepts:\n  - name: greedy.approve\n    resolves_confirmation: true\n"
        )
        service.chat.register_intercept(careless, before="organizer.approve")
        service.chat.register_intercept(Echo())
        yield service, careless


def test_the_shield_keeps_a_resolver_off_another_owners_question(
    store: Store, greedy: tuple[ChatService, Greedy]
) -> None:
    service, careless = greedy
    session = conversation(store, service)
    say(service, session, "plan the launch")
    assert service.sessions.pending(session) is not None  # the planner asked
    turn = say(service, session, "yes")
    assert "shielded greedy.approve" in turn.notes
    assert careless.acted == []
    assert last_reply(store, session) == (
        "planner",
        'Earlier I asked "Would you like to proceed with this plan?" — taking that as yes.'
        "\n\nPlanner acting on yes.",
    )
    # With nothing pending there is no one to shield from: the resolver is tried.
    say(service, session, "yes")
    assert careless.acted == [session]


def test_intercepts_that_resolve_nothing_are_never_shielded(
    store: Store, greedy: tuple[ChatService, Greedy]
) -> None:
    service, _ = greedy
    session = conversation(store, service)
    say(service, session, "what's in the news?")
    assert service.sessions.pending(session) is not None
    turn = say(service, session, "echo this")
    assert turn.answered_by == "echo" and last_reply(store, session) == ("echo", "echo")
    # An intercepted turn is the one reply an inferred choice gets: it is withdrawn.
    assert service.sessions.pending(session) is None
    assert [c.status for c in service.sessions.history(session)] == ["withdrawn"]
    with store.unit(write=False) as u:
        assert u.messages.history(session, user=USER)[-2].content == "echo this"

"""A turn runs nothing more once its lease is no longer to be trusted, and another took it.

Before each model call and tool call a turn checks, by the monotonic clock, that its lease
was renewed recently enough. Here the clock the turn's lease is measured by jumps past two
thirds of its time to live during a tool call, as a process frozen there would see it on
waking. If another process took the turn meanwhile, it stops before its next step: the
second tool never runs here. If nobody did, the turn renews its lease there and carries on.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from pawflow.agent import AgentSpec, ScriptedModel
from pawflow.chat.service import ChatService
from pawflow.clock import FakeClock
from pawflow.store import Store
from pawflow.testing import eventually

LEASE = timedelta(seconds=6)


def _charge(n: str) -> dict[str, object]:
    return {"name": "charge", "arguments": {"n": n}}


SCRIPT = {
    "turns": [
        {
            "role": "user",
            "match": "go",
            "tool_calls": [{"name": "charge", "arguments": {"n": "1"}}],
        },
        {
            "role": "tool",
            "match": "charged 1",
            "tool_calls": [{"name": "charge", "arguments": {"n": "2"}}],
        },
        {"role": "tool", "match": "charged 2", "reply": "All charged."},
    ]
}


class Frozen:
    """The charges made, and what happens to the turn during the first one."""

    def __init__(self, store: Store, clock: FakeClock, *, taken: bool) -> None:
        self.store = store
        self.clock = clock
        self.taken = taken
        self.now = 1000.0
        self.charged: list[str] = []
        self.conversation = ""
        self.service: ChatService | None = None

    def lease_clock(self) -> float:
        return self.now

    def charge(self, n: str) -> str:
        """Charge the card, the n-th time."""
        self.charged.append(n)
        if n == "1":
            self.now += LEASE.total_seconds()  # "frozen" past its lease
            if self.taken:
                self.clock.advance(LEASE * 2)
                with self.store.unit() as u:
                    [turn] = u.turns.open_turns(self.conversation)
                    assert u.turns.claim(turn.id, "another-process", LEASE) is not None
        return f"charged {n}"


@pytest.fixture
def frozen(request: pytest.FixtureRequest, store: Store, clock: FakeClock) -> Iterator[Frozen]:
    found = Frozen(store, clock, taken=request.param)
    agent = AgentSpec("charger", "You charge cards.", ScriptedModel(SCRIPT), tools=[found.charge])
    service = ChatService(store, [agent], poll_interval=0.05, heartbeat=3600, lease=LEASE)
    service.runner.lease_clock = found.lease_clock
    found.service = service
    with service:
        found.conversation = store.create_conversation("alice", "Cards").id
        service.assign(found.conversation, "charger")
        yield found


def _said(store: Store, conversation: str) -> list[str]:
    with store.unit(write=False) as u:
        history = u.messages.history(conversation, user="alice")
    return [m.content for m in history if m.role == "assistant"]


@pytest.mark.parametrize("frozen", [True], indirect=True)
def test_a_turn_taken_over_while_its_process_was_frozen_stops_before_its_next_step(
    store: Store, frozen: Frozen
) -> None:
    store.post_message(frozen.conversation, "go", user="alice")
    assert frozen.service is not None
    runner = frozen.service.runner
    eventually(lambda: frozen.charged)
    eventually(lambda: not runner.running())  # the turn ended in this process
    assert frozen.charged == ["1"]  # the second charge never ran here
    with store.unit(write=False) as u:
        [turn] = u.turns.open_turns(frozen.conversation)
    assert (turn.status, turn.owner) == ("running", "another-process")
    assert _said(store, frozen.conversation) == []


@pytest.mark.parametrize("frozen", [False], indirect=True)
def test_a_turn_whose_lease_nobody_took_renews_it_and_carries_on(
    store: Store, frozen: Frozen
) -> None:
    store.post_message(frozen.conversation, "go", user="alice")
    eventually(lambda: _said(store, frozen.conversation))
    assert frozen.charged == ["1", "2"]
    assert _said(store, frozen.conversation) == ["All charged."]
    with store.unit(write=False) as u:
        assert u.turns.open_turns(frozen.conversation) == []

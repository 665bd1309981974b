"""The durable turn queue and the agent leases, on SQLite and PostgreSQL, with a fake clock."""

from __future__ import annotations

from datetime import timedelta

from pawflow.chat.inspect import describe_session
from pawflow.chat.ownership import AgentOwnership, share
from pawflow.clock import FakeClock
from pawflow.store import Store

LEASE = timedelta(seconds=5)


def test_a_message_is_stored_with_its_turn_and_answered_once(
    store: Store, clock: FakeClock
) -> None:
    conversation = store.create_conversation("alice", "t").id
    with store.unit() as u:
        u.turns.assign_agent(conversation, "helper")
    message = store.post_message(conversation, "hello", user="alice")
    with store.unit(write=False) as u:
        [turn] = u.turns.open_turns(conversation)
    assert (turn.kind, turn.status, turn.agent, turn.message_id) == (
        "message",
        "queued",
        "helper",
        message.id,
    )
    assert "queued, due now" in "\n".join(describe_session(store, conversation))
    with store.unit() as u:
        assert u.turns.due(["other"], 10) == []  # another process's agent
        assert [t.id for t in u.turns.due(["helper"], 10)] == [turn.id]

        first = u.turns.claim(turn.id, "p1", LEASE)
    assert first is not None and first.attempts == 1
    with store.unit() as u:
        assert u.turns.claim(turn.id, "p2", LEASE) is None  # leased
    with store.unit() as u:
        assert u.turns.renew(first.key, LEASE, "model call, step 1")
    shown = "\n".join(describe_session(store, conversation))
    assert "running in p1 (attempt 1, at model call, step 1" in shown

    # p1 dies: its lease runs out and p2 takes the turn over.
    clock.advance("6s")
    with store.unit() as u:
        second = u.turns.claim(turn.id, "p2", LEASE)
    assert second is not None and second.attempts == 2
    with store.unit() as u:
        assert not u.turns.renew(first.key, LEASE)  # no longer p1's
    # p1 comes back to life too late: its reply is refused, p2's is written once.
    with store.unit() as u:
        assert u.turns.complete(first.key, reply="late", author="helper") == (False, None)
        done, reply = u.turns.complete(second.key, reply="hi", author="helper")
    assert done and reply is not None and reply.data == {"turn": turn.id}
    with store.unit() as u:
        assert u.turns.complete(second.key, reply="again", author="helper") == (False, None)
        replies = [m.content for m in u.messages.history(conversation, user="alice")]
    assert replies == ["hello", "hi"]
    with store.unit(write=False) as u:
        assert u.turns.open_turns(conversation) == []
    assert "turns in flight:" not in describe_session(store, conversation)


def test_turns_of_one_conversation_never_overlap(store: Store) -> None:
    conversation = store.create_conversation("alice", "t").id
    store.post_message(conversation, "one", user="alice")
    store.post_message(conversation, "two", user="alice")
    with store.unit() as u:
        one, two = u.turns.due(None, 10)
        assert u.turns.claim(one.id, "p1", LEASE) is not None
        assert u.turns.claim(two.id, "p2", LEASE) is None  # "one" is running
    other = store.create_conversation("alice", "u").id
    store.post_message(other, "three", user="alice")
    with store.unit() as u:
        [three] = [t for t in u.turns.due(None, 10) if t.conversation_id == other]
        assert u.turns.claim(three.id, "p2", LEASE) is not None


def test_a_turn_cut_short_is_taken_over_before_the_turns_after_it(
    store: Store, clock: FakeClock
) -> None:
    conversation = store.create_conversation("alice", "t").id
    with store.unit() as u:
        u.turns.assign_agent(conversation, "helper")
    store.post_message(conversation, "one", user="alice")
    with store.unit() as u:
        [one] = u.turns.due(None, 10)
        assert u.turns.claim(one.id, "p1", LEASE) is not None
    store.post_message(conversation, "two", user="alice")
    with store.unit(write=False) as u:
        two = u.turns.open_turns(conversation)[1]
    clock.advance(LEASE)  # p1 died: the lease of "one" has just run out
    # "two" waits for "one" to be taken over, whoever claims first.
    with store.unit() as u:
        assert u.turns.claim(two.id, "p2", LEASE) is None
        taken = u.turns.claim(one.id, "p2", LEASE)
    assert taken is not None and taken.attempts == 2
    with store.unit() as u:
        assert u.turns.complete(taken.key, reply="reply to one", author="helper")[0]
        assert u.turns.claim(two.id, "p2", LEASE) is not None


def test_fair_shares_add_up() -> None:
    for agents in range(8):
        for processes in range(1, 5):
            names = [f"p{i}" for i in range(processes)]
            shares = [share(agents, names, name) for name in names]
            assert sum(shares) == agents
            assert max(shares) - min(shares) <= 1


def test_agents_spread_over_processes_and_move_when_one_stops(
    store: Store, clock: FakeClock
) -> None:
    names = ["a", "b", "c", "d"]
    one = AgentOwnership(store, lambda: names, owner="one", ttl=LEASE)
    two = AgentOwnership(store, lambda: names, owner="two", ttl=LEASE)
    assert one.beat() == names  # alone: every agent
    two.beat()
    one.beat()  # sees two: gives up half
    two.beat()  # takes them
    assert len(one.held) == 2 and len(two.held) == 2
    assert set(one.held) | set(two.held) == set(names)

    # "one" dies without a word: once its leases run out, "two" runs everything.
    clock.advance("3s")
    two.beat()
    assert len(two.held) == 2
    clock.advance("3s")
    assert two.beat() == names

    # "one" comes back: "two" gives up its extra agents for "one" to take.
    assert one.beat() == []
    two.beat()
    one.beat()
    assert len(one.held) == 2 and len(two.held) == 2
    # A clean stop hands over at once.
    two.release()
    assert one.beat() == names

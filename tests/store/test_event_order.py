"""Events numbered per user without one lock for every writer, and notices that travel once.

Writers append events for crossing sets of users, several times per transaction, all at
once: every transaction commits, and each user's log counts 1, 2, 3, … without a hole, in
the order each transaction appended. On PostgreSQL a transaction's notices go out as one
notification, and a store does not hear its own commits a second time through LISTEN.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from pawflow import Store, open_store
from pawflow.store import Question
from pawflow.store.engine.database import Database, sql
from pawflow.store.ledger import audit, events
from pawflow.testing import eventually, throwaway_postgres
from tests.conftest import require_postgres

USERS = ["ann", "bob", "cy", "dee"]
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_crossing_writers_all_commit_and_number_without_holes(store: Store) -> None:
    rounds = 15
    failures: list[BaseException] = []
    start = threading.Barrier(4)

    def writer(number: int) -> None:
        # Each writer goes through the users in its own order, a few events per transaction.
        order = USERS[number:] + USERS[:number]
        try:
            start.wait()
            for n in range(rounds):
                with store.transaction() as tx:
                    for user in order:
                        events.append_event(tx, [user], None, "t", {"w": number, "n": n}, NOW)
                    events.append_event(tx, reversed(order), None, "all", {"w": number}, NOW)
        except BaseException as exc:  # collected: the test fails on any of them
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    for user in USERS:
        logged = store.events_after(user, 0, limit=1000)
        assert [event.seq for event in logged] == list(range(1, 4 * rounds * 2 + 1))
        # Within a transaction, the events keep the order they were appended in.
        for first, second in itertools.pairwise(logged):
            if first.type == "t":
                assert second.type == "all" and second.data["w"] == first.data["w"]


def test_an_event_rolled_back_with_its_savepoint_is_never_written(store: Store) -> None:
    with store.transaction() as tx:
        events.append_event(tx, ["ann"], None, "kept", {}, NOW)
        with pytest.raises(RuntimeError), tx.savepoint("attempt"):
            events.append_event(tx, ["ann"], None, "undone", {}, NOW)
            raise RuntimeError("the attempt fails")
        events.append_event(tx, ["ann"], None, "after", {}, NOW)
    assert [(e.seq, e.type) for e in store.events_after("ann")] == [(1, "kept"), (2, "after")]


@pytest.mark.postgres
def test_a_store_hears_others_once_and_itself_once() -> None:
    require_postgres()
    with throwaway_postgres() as url, open_store(url) as one, open_store(url) as two:
        heard: dict[str, list[str]] = {"one": [], "two": []}

        def listen(name: str, db: Database) -> None:
            db.listen(heard[name].append)

        listen("one", one.db)
        listen("two", two.db)
        eventually(lambda: "changed" in heard["one"] and "changed" in heard["two"])
        with one.transaction() as tx:
            tx.notify("first:a")
            tx.notify("first:b")
        eventually(lambda: "first:b" in heard["two"])
        with two.transaction() as tx:
            tx.notify("second")
        # Notifications arrive in commit order: once "one" hears "second" through LISTEN, it
        # would already have heard its own "first" ones that way too.
        eventually(lambda: "second" in heard["one"])
        assert Counter(heard["one"])["first:a"] == 1
        assert Counter(heard["one"])["first:b"] == 1
        assert Counter(heard["two"])["first:a"] == 1 and Counter(heard["two"])["second"] == 1


def test_interaction_events_show_the_request_as_asked_and_as_answered(store: Store) -> None:
    conversation = store.create_conversation("ann").id
    asked = store.ask(Question("ann", conversation, "text", "Name?")).interaction
    answered = store.respond_interaction(asked.id, "Ann", user="ann")
    request, answer = store.events_after("ann")[-2:]
    # Logged by reference, read back as the records were at each moment.
    assert (request.type, request.data) == ("interaction_request", asked.to_dict())
    assert (answer.type, answer.data) == ("interaction_answered", answered.to_dict())
    with store.transaction(write=False) as tx:
        stored = sql(tx).all("SELECT data, ref FROM events WHERE type LIKE 'interaction%'")
    assert {(row["data"], row["ref"]) for row in stored} == {("", asked.id)}


def test_numbers_pruned_stay_taken(store: Store) -> None:
    """The retention sweep may prune all of a user's events: their next event still takes
    the number after the last one they were given, and the log's tail says so."""
    with store.transaction() as tx:
        events.append_event(tx, ["ann", "bob"], None, "t", {"n": 1}, NOW)
        events.append_event(tx, ["ann"], None, "t", {"n": 2}, NOW)
    with store.transaction() as tx:
        assert events.prune_events(tx, datetime(2027, 1, 1, tzinfo=UTC)) == 3
        assert (events.last_seq(tx, "ann"), events.last_seq(tx, "bob")) == (2, 1)
    with store.transaction() as tx:
        events.append_event(tx, ["ann", "bob"], None, "t", {"n": 3}, NOW)
    assert [event.seq for event in store.events_after("ann", 0, limit=10)] == [3]
    assert [event.seq for event in store.events_after("bob", 0, limit=10)] == [2]
    with store.transaction() as tx:
        assert (events.last_seq(tx, "ann"), events.last_seq(tx, "bob")) == (3, 2)


def test_the_log_is_pruned_from_its_start_up_to_its_first_recent_event(store: Store) -> None:
    with store.transaction() as tx:
        for day in (1, 2, 9, 3):  # the third event is recent; the fourth's clock was behind
            events.append_event(tx, ["ann"], None, "t", {}, NOW + timedelta(days=day))
    with store.transaction() as tx:
        assert events.prune_events(tx, NOW + timedelta(days=5)) == 2
        assert events.prune_events(tx, NOW + timedelta(days=5)) == 0
    assert [event.seq for event in store.events_after("ann", 0, limit=10)] == [3, 4]


def test_the_audit_trail_since_a_moment_is_found_by_its_numbers(store: Store) -> None:
    """Many steps, stamped as time goes on (and one a little out of order, as writers side
    by side stamp them): ``since`` finds exactly those from the moment on."""
    with store.transaction() as tx:
        for n in range(300):
            at = NOW + timedelta(seconds=n)
            audit.record(tx, f"r{n}", "created", at, actor="ann", via="api")
        audit.record(tx, "late", "created", NOW + timedelta(seconds=199), actor="ann")
    with store.transaction(write=False) as tx:
        found = [step["request_id"] for step in audit.since(tx, NOW + timedelta(seconds=200))]
        assert found == [f"r{n}" for n in range(200, 300)]
        found = [step["request_id"] for step in audit.since(tx, NOW + timedelta(seconds=199))]
        assert found == ["r199", *(f"r{n}" for n in range(200, 300)), "late"]
        assert len(list(audit.since(tx, NOW, batch=7))) == 301
        assert list(audit.since(tx, NOW + timedelta(days=1))) == []

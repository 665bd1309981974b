"""A delivery goes out as soon as it is committed, not at the dispatcher's next pass: the
transaction that queues it wakes the dispatcher of this process, and of another process
sharing the store (LISTEN/NOTIFY on PostgreSQL, the change watcher on SQLite). The
dispatcher here passes once a minute: only the wake can send within the deadline."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pawflow import Question
from pawflow.channels import AppriseChannel, Dispatcher, WebhookSender
from pawflow.egress import EgressRule
from pawflow.store import Store, open_store
from pawflow.store.reach import addresses, outbox, webhooks
from pawflow.testing import eventually
from tests.channels.receiver import Receiver, receiver

LOOPBACK = EgressRule.parse("127.0.0.1")
DEADLINE = 10.0
"""Seconds to wait for the first attempt: well under the dispatcher's interval."""


def _url(store: Store) -> str:
    db = store.db
    return str(db.url) if store.dialect == "postgres" else f"sqlite:///{db.path}"  # type: ignore[attr-defined]


@pytest.fixture
def inbox() -> Iterator[Receiver]:
    with receiver() as received:
        yield received


@pytest.fixture(params=["same", "other"])
def dispatching(request: pytest.FixtureRequest, store: Store) -> Iterator[Dispatcher]:
    """A started dispatcher that passes every minute, holding the lease: on the test's own
    store, or on another store of the same database (another process, as far as it knows)."""
    other = None if request.param == "same" else open_store(_url(store), clock=store.clock)
    try:
        dispatcher = Dispatcher(
            other or store,
            [AppriseChannel(LOOPBACK)],
            base_url="http://x",
            owner="t",
            interval=60,
            lease_ttl=600,
            webhooks=WebhookSender(LOOPBACK),
        )
        dispatcher.start()
        try:
            eventually(lambda: dispatcher.loop.passes >= 1 and dispatcher.hold.valid)
            yield dispatcher
        finally:
            dispatcher.stop()
    finally:
        if other is not None:
            other.close()


def _ask(store: Store, user: str) -> str:
    conversation = store.create_conversation(user, "d")
    return store.ask(Question(user, conversation.id, "confirm", "Go?")).interaction.id


def test_a_queued_notification_wakes_the_dispatcher(
    store: Store, inbox: Receiver, dispatching: Dispatcher
) -> None:
    store.ensure_user("ada")
    with store.transaction() as tx:
        notify_url = inbox.url.replace("http://", "json://") + "/topic"
        addresses.set_reach(tx, "ada", now=store.now(), notify_url=notify_url)
    asked = _ask(store, "ada")
    eventually(inbox.received, timeout=DEADLINE)
    with store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, asked)
    assert row.attempts == 1


def test_a_queued_webhook_delivery_wakes_the_dispatcher(
    store: Store, inbox: Receiver, dispatching: Dispatcher
) -> None:
    store.ensure_user("bo")
    with store.transaction() as tx:
        webhooks.create(tx, "bo", f"{inbox.url}/h", ("interaction.created",), store.now())
    _ask(store, "bo")
    (received,) = eventually(inbox.received, timeout=DEADLINE)
    assert received.path == "/h"

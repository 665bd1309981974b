"""Slow receivers delay nobody else: each attempt has a deadline, deliveries to different
destinations go out side by side, and the caps (both backends)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from pawflow.channels import AppriseChannel, Dispatcher, EmailChannel, SmtpConfig, WebhookSender
from pawflow.channels.apprise import LATE_KEPT
from pawflow.clock import FakeClock
from pawflow.egress import EgressRule
from pawflow.errors import InvalidInput
from pawflow.store import Question, Store
from pawflow.store.reach import addresses, outbox, webhooks
from pawflow.testing import eventually
from tests.channels.receiver import receiver
from tests.channels.smtp import smtp_server

LOOPBACK = EgressRule.parse("127.0.0.1")
EVENTS = ("interaction.created",)


def _hooked(store: Store, user: str, url: str) -> str:
    """A webhook of ``user`` to ``url``, then a request of theirs; the request's id."""
    store.ensure_user(user)
    with store.transaction() as tx:
        webhooks.create(tx, user, url, EVENTS, store.now())
    conversation = store.create_conversation(user, "d")
    return store.ask(Question(user, conversation.id, "confirm", "Go?")).interaction.id


def _log(store: Store, user: str) -> list[webhooks.WebhookDelivery]:
    with store.transaction(write=False) as tx:
        return [
            entry
            for hook in webhooks.list_for(tx, user)
            for entry in webhooks.log(tx, user, hook.id)
        ]


def test_a_trickling_receiver_is_a_failed_attempt_retried_later(store: Store) -> None:
    with receiver(trickle=0.1) as slow:
        _hooked(store, "ada", f"{slow.url}/h")
        sender = WebhookSender(LOOPBACK, timeout=0.5)
        Dispatcher(store, [], base_url="http://x", owner="t", webhooks=sender).step()
        (entry,) = _log(store, "ada")
    # It answered 200 and kept sending, a byte at a time: never "sent 200".
    assert (entry.status, entry.attempts) == ("queued", 1)
    assert entry.last_error == "no complete answer within 0.5 s"
    assert entry.response_status is None


def test_a_slow_receiver_of_one_user_does_not_delay_another(store: Store) -> None:
    hold = threading.Event()
    with receiver(hold=hold) as slow, receiver() as quick:
        _hooked(store, "ada", f"{slow.url}/a")
        _hooked(store, "bo", f"{quick.url}/b")
        dispatcher = Dispatcher(
            store, [], base_url="http://x", owner="t", webhooks=WebhookSender(LOOPBACK)
        )
        try:
            assert dispatcher.step(wait=False) == 2  # both go out at once
            assert slow.arrived.wait(10)
            # Bo's delivery is done while Ada's is still in flight, held by her receiver.
            eventually(lambda: [e.status for e in _log(store, "bo")] == ["sent"])
            assert [e.status for e in _log(store, "ada")] == ["queued"]
            assert f"127.0.0.1:{slow.url.rsplit(':', 1)[1]}" in dispatcher.in_flight()
            hold.set()
            assert dispatcher.idle(10)
            assert [e.status for e in _log(store, "ada")] == ["sent"]
        finally:
            hold.set()
            dispatcher.stop()


def test_one_destination_has_one_attempt_in_flight(store: Store) -> None:
    hold = threading.Event()
    with receiver(hold=hold) as slow:
        _hooked(store, "ada", f"{slow.url}/1")
        _hooked(store, "cy", f"{slow.url}/2")  # another user, the same host and port
        dispatcher = Dispatcher(
            store, [], base_url="http://x", owner="t", webhooks=WebhookSender(LOOPBACK)
        )
        try:
            assert dispatcher.step(wait=False) == 1
            assert dispatcher.step(wait=False) == 0  # its destination is busy
            hold.set()
            assert dispatcher.idle(10)
            assert dispatcher.step() == 1
            assert len(slow.received()) == 2
        finally:
            hold.set()
            dispatcher.stop()


def test_a_user_has_at_most_so_many_webhooks(store: Store) -> None:
    store.ensure_user("ada")
    with store.transaction() as tx:
        for n in range(3):
            webhooks.create(tx, "ada", f"https://h{n}.example/", EVENTS, store.now(), limit=3)
    with pytest.raises(InvalidInput) as refused, store.transaction() as tx:
        webhooks.create(tx, "ada", "https://h3.example/", EVENTS, store.now(), limit=3)
    assert [e.path for e in refused.value.errors] == ["url"]
    assert "at most 3 webhooks" in refused.value.message


def test_past_the_pending_cap_a_delivery_is_recorded_dropped(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhooks, "PENDING_CAP", 2)
    _hooked(store, "ada", "https://hooks.example/")
    conversation = store.create_conversation("ada", "more")
    for n in range(2):
        store.ask(Question("ada", conversation.id, "confirm", f"More {n}?"))
    entries = sorted(_log(store, "ada"), key=lambda e: e.created_at)
    assert [e.status for e in entries].count("queued") == 2
    (dropped,) = [e for e in entries if e.status == "failed"]
    assert dropped.last_error == "dropped: cap" and dropped.attempts == 0


def _notified(store: Store, user: str, **reach: str) -> str:
    """A request of ``user``, reached as ``reach`` says (set in the store: no door)."""
    store.ensure_user(user)
    with store.transaction() as tx:
        addresses.set_reach(tx, user, now=store.now(), **reach)
    conversation = store.create_conversation(user, "d")
    return store.ask(Question(user, conversation.id, "confirm", "Go?")).interaction.id


def _row(store: Store, request: str) -> outbox.OutboxRow:
    with store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, request)
    return row


@pytest.mark.parametrize("scheme", ["ntfy", "json", "gotify"])
def test_an_apprise_url_of_any_scheme_is_judged_at_the_send(store: Store, scheme: str) -> None:
    with receiver() as inbox:
        url = inbox.url.replace("http://", f"{scheme}://") + "/topic"
        asked = _notified(store, "ada", notify_url=url)
        channel = AppriseChannel(EgressRule())  # nothing inward allowed
        Dispatcher(store, [channel], base_url="http://x", owner="t").step()
        row = _row(store, asked)
        assert inbox.received() == []
    assert row.status == "failed" and "loopback" in (row.last_error or "")
    assert "PAWFLOW_EGRESS_ALLOWED_HOSTS" in (row.last_error or "")


def test_a_trickling_apprise_service_is_a_failed_attempt(store: Store) -> None:
    with receiver(trickle=0.1) as slow:
        asked = _notified(store, "ada", notify_url=slow.url.replace("http://", "json://"))
        channel = AppriseChannel(LOOPBACK, timeout=0.5)
        Dispatcher(store, [channel], base_url="http://x", owner="t").step()
        row = _row(store, asked)
    assert (row.status, row.attempts) == ("queued", 1)
    assert row.last_error == "no complete answer within 0.5 s"


def test_an_apprise_send_past_its_deadline_is_not_sent_again(
    store: Store, clock: FakeClock
) -> None:
    """The thread of a send past its deadline goes on: the next attempts send nothing while
    it runs, and take its outcome once it has ended (delivered late: sent, not twice)."""
    hold = threading.Event()
    with receiver(hold=hold) as held:
        asked = _notified(store, "ada", notify_url=held.url.replace("http://", "json://"))
        channel = AppriseChannel(LOOPBACK, timeout=0.5)
        dispatcher = Dispatcher(store, [channel], base_url="http://x", owner="t")
        dispatcher.step()
        row = _row(store, asked)
        assert (row.status, row.attempts) == ("queued", 1)
        clock.advance("1h")  # past the retry's backoff
        dispatcher.step()
        row = _row(store, asked)
        assert (row.status, row.attempts) == ("queued", 2)
        assert row.last_error == "the previous attempt is still waiting for an answer"
        assert len(held.received()) == 1
        hold.set()  # the first attempt's answer comes, late

        def retried() -> bool:
            clock.advance("1h")
            dispatcher.step()
            return _row(store, asked).status == "sent"

        eventually(retried)
        assert len(held.received()) == 1


def _sending() -> bool:
    """Whether a send of the Apprise channel's is still running on its own thread."""
    return any(t.name == "pawflow-apprise" and t.is_alive() for t in threading.enumerate())


@pytest.mark.parametrize(("status", "kept"), [(204, True), (500, False)])
def test_a_late_apprise_send_of_a_request_settled_meanwhile_is_forgotten(
    store: Store, clock: FakeClock, status: int, kept: bool
) -> None:
    """The request is cancelled while its send is past its deadline: its row is never tried
    again. A late send that failed is forgotten as it ends; one that got through is kept for
    a next attempt only for ``LATE_KEPT``, then forgotten too."""
    hold = threading.Event()
    with receiver([status], hold=hold) as held:
        asked = _notified(store, "ada", notify_url=held.url.replace("http://", "json://"))
        channel = AppriseChannel(LOOPBACK, timeout=0.5, clock=store.clock)
        Dispatcher(store, [channel], base_url="http://x", owner="t").step()
        assert (_row(store, asked).status, channel.late()) == ("queued", 1)
        store.cancel_interaction(asked, user="ada")
        assert _row(store, asked).status == "skipped"  # never tried again
        hold.set()  # the late send ends
        eventually(lambda: not _sending())  # its thread is done (late() counts it till then)
        assert channel.late() == (1 if kept else 0)
    clock.advance(LATE_KEPT - timedelta(seconds=1))
    assert channel.late() == (1 if kept else 0)
    clock.advance(timedelta(seconds=1))
    assert channel.late() == 0


def test_mail_never_waits_behind_a_slow_webhook(store: Store) -> None:
    hold = threading.Event()
    with receiver(hold=hold) as slow, smtp_server() as (mail, smtp):
        _hooked(store, "ada", f"{slow.url}/a")
        asked = _notified(store, "bo", email="bo@example.org")
        dispatcher = Dispatcher(
            store,
            [EmailChannel(SmtpConfig.from_url(smtp, None))],
            base_url="http://x",
            owner="t",
            webhooks=WebhookSender(LOOPBACK),
        )
        try:
            dispatcher.step(wait=False)
            assert slow.arrived.wait(10)
            eventually(lambda: _row(store, asked).status == "sent")
            assert len(mail.received()) == 1
            assert [e.status for e in _log(store, "ada")] == ["queued"]  # still held
        finally:
            hold.set()
            dispatcher.idle(10)
            dispatcher.stop()

"""The dispatcher: one sender at a time under its lease, permanent refusals, other channels."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from pawflow import serve
from pawflow.channels import Dispatcher, EmailChannel, SmtpConfig
from pawflow.channels.dispatcher import LEASE
from pawflow.clock import FakeClock
from pawflow.server.settings import ServerSettings
from pawflow.store import Question, Store
from pawflow.store.reach import addresses, outbox
from pawflow.store.runtime.leases import Hold, LeaseTerms
from tests.channels.smtp import smtp_server


def _asked(store: Store, user: str, count: int = 1) -> list[str]:
    store.ensure_user(user)
    with store.transaction() as tx:
        addresses.set_reach(tx, user, email=f"{user}@example.org", now=store.now())
    conversation = store.create_conversation(user, "d")
    return [
        store.ask(Question(user, conversation.id, "confirm", f"Go {n}?")).interaction.id
        for n in range(count)
    ]


def _statuses(store: Store, requests: list[str]) -> list[str]:
    with store.transaction(write=False) as tx:
        return [row.status for r in requests for row in outbox.deliveries(tx, r)]


def test_only_the_lease_holder_sends_and_another_takes_over(store: Store, clock: FakeClock) -> None:
    first = _asked(store, "ada", 3)
    with smtp_server() as (inbox, url):
        config = SmtpConfig.from_url(url, None)
        one = Dispatcher(store, [EmailChannel(config)], base_url="http://x", owner="one")
        two = Dispatcher(store, [EmailChannel(config)], base_url="http://x", owner="two")
        assert one.step() == 3
        second = _asked(store, "bo", 2)
        assert two.step() == 0  # "one" holds the lease
        assert _statuses(store, second) == ["queued", "queued"]
        clock.advance("31s")  # "one" stopped renewing: its lease ran out
        assert two.step() == 2
        assert one.step() == 0
        assert len(inbox.received()) == 5
    assert _statuses(store, first + second) == ["sent"] * 5


def test_a_served_dispatcher_hands_its_lease_over_as_the_settings_say(
    store: Store, clock: FakeClock
) -> None:
    """``PAWFLOW_LEASE_TTL`` is how long a dead server's outbox waits for another."""
    first = _asked(store, "ada")
    settings = ServerSettings.from_env({"PAWFLOW_LEASE_TTL": "2", "PAWFLOW_MAX_CLOCK_SKEW": "0.5"})
    with smtp_server() as (inbox, url):
        settings = settings.replace(smtp_url=url)
        one = serve.dispatcher(store, settings)
        two = Dispatcher(store, [EmailChannel(SmtpConfig.from_url(url, None))], base_url="x")
        assert one.lease_ttl == timedelta(seconds=2)
        assert one.step() == 1
        second = _asked(store, "bo")
        clock.advance("1s")
        assert two.step() == 0  # the served one holds its lease two seconds after its pass
        clock.advance(timedelta(seconds=1.5))
        assert two.step() == 1
        assert len(inbox.received()) == 2
    assert _statuses(store, first + second) == ["sent", "sent"]


def test_a_refused_mail_fails_for_good_with_the_reason(store: Store) -> None:
    (asked,) = _asked(store, "cy")
    with smtp_server(refuse="554 5.7.1 not accepted here") as (_, url):
        channel = EmailChannel(SmtpConfig.from_url(url, None))
        Dispatcher(store, [channel], base_url="http://x", owner="t").step()
    with store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, asked)
    assert (row.status, row.last_error, row.attempts) == ("failed", "SMTP 554", 1)


def test_a_channel_this_server_lacks_fails_with_the_reason(store: Store) -> None:
    store.ensure_user("di")
    with store.transaction() as tx:
        addresses.set_reach(tx, "di", slack="U0123ABCD", now=store.now())
    conversation = store.create_conversation("di", "d")
    asked = store.ask(Question("di", conversation.id, "confirm", "Slack?")).interaction
    Dispatcher(store, [], base_url="http://x", owner="t").step()
    with store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, asked.id)
    assert (row.channel, row.status) == ("slack", "failed")
    assert row.last_error == "the slack channel is not configured on this server"


class FrozenAfter(Hold):
    """The outbox lease as a dispatcher sees it that freezes right after its ``n``-th
    renewal, past its time to live, while ``meanwhile`` happens."""

    def __init__(self, terms: LeaseTerms, n: int, meanwhile: Callable[[], None]) -> None:
        self.now = 1000.0
        super().__init__(terms, clock=lambda: self.now)
        self.left = n
        self.meanwhile = meanwhile

    def renewed(self, began: float) -> None:
        super().renewed(began)
        self.left -= 1
        if self.left == 0:
            self.now += self.terms.seconds
            self.meanwhile()


def test_a_dispatcher_frozen_between_two_sends_sends_nothing_more_of_its_batch(
    store: Store, clock: FakeClock
) -> None:
    asked = _asked(store, "ada", 5)
    with smtp_server() as (inbox, url):
        config = SmtpConfig.from_url(url, None)
        one = Dispatcher(store, [EmailChannel(config)], base_url="x", owner="one", lease_ttl=9)
        two = Dispatcher(store, [EmailChannel(config)], base_url="x", owner="two", lease_ttl=9)

        def taken_over() -> None:
            clock.advance("10s")
            with store.unit() as u:
                assert u.leases.acquire(LEASE, "two", two.lease_ttl)

        # One mail in flight to the relay at a time: renewed by each claim, then by the record
        # of its send; frozen after the record of the second.
        one.hold = FrozenAfter(one.terms, 4, taken_over)
        one.step()
        assert len(inbox.received()) == 2  # the third was not sent under a lease it lost
        assert not one.hold.valid
        clock.advance("1h")  # the backoff of the rows "one" claimed and left
        two.step()
        sent = [str(mail["Message-ID"]) for mail in inbox.received()]
        assert len(sent) == len(set(sent)) == 5
    assert _statuses(store, asked) == ["sent"] * 5

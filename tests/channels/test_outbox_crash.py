"""A ``pawflow serve`` killed with SIGKILL while its outbox holds 50 mails loses none and sends
none as two different mails (both backends).

The dispatcher commits each claim before it sends, so the restarted server sends what the
dead one had not recorded as sent. A mail the SMTP server accepted just before the kill, but
whose row was not yet marked sent, goes again with the same Message-ID (the row's
idempotency key): the same mail, which a mail system drops as a duplicate.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pawflow import FakeClock, Store, SystemClock
from pawflow.channels.email import message_id
from pawflow.store import Question
from pawflow.store.reach import addresses, outbox
from pawflow.testing import eventually
from tests.channels.smtp import smtp_server
from tests.served import Served
from tests.store.test_concurrency import store_url

ROWS = 50
MAIL_FROM = "pawflow@example.org"


@pytest.mark.slow
def test_sigkill_mid_dispatch_loses_and_duplicates_no_mail(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    clock.set(SystemClock().now())  # the served process runs on the wall clock
    url = store_url(store, tmp_path)
    store.ensure_user("ada")
    with store.transaction() as tx:
        addresses.set_reach(tx, "ada", email="ada@example.org", now=store.now())
    conversation = store.create_conversation("ada", "crash")
    asked = [
        store.ask(Question("ada", conversation.id, "confirm", f"Deploy {n}?")).interaction.id
        for n in range(ROWS)
    ]

    def rows() -> list[outbox.OutboxRow]:
        with store.transaction(write=False) as tx:
            return [row for request in asked for row in outbox.deliveries(tx, request)]

    assert len(rows()) == ROWS
    with smtp_server(delay=0.05) as (inbox, smtp_url):
        served = Served(
            url,
            tmp_path,
            env={
                "PAWFLOW_SMTP_URL": smtp_url,
                "PAWFLOW_MAIL_FROM": MAIL_FROM,
                "PAWFLOW_OUTBOX_INTERVAL": "0.1",
                "PAWFLOW_LEASE_TTL": "2",
                "PAWFLOW_MAX_CLOCK_SKEW": "0.5",
            },
        )
        served.start()
        try:
            eventually(lambda: len(inbox.received()) >= 10, timeout=60)
            served.kill()
            assert len(inbox.received()) < ROWS, "the kill came after the last mail"
            served.start()
            eventually(
                lambda: all(row.status == "sent" for row in rows()), timeout=120, interval=0.1
            )
        finally:
            served.kill()
        received = [str(mail["Message-ID"]) for mail in inbox.received()]
    expected = {message_id(row, MAIL_FROM) for row in rows()}
    assert len(expected) == ROWS
    assert set(received) == expected, "a mail was lost"
    again = [key for key, seen in Counter(received).items() if seen > 1]
    # At most the one mail in flight at the kill went twice, and as the same mail.
    assert len(again) <= 1 and len(received) - len(expected) <= 1

"""A request with assignees reaches the people who decide, by their own channels; reminders
and escalations go out again through the outbox, and each sent copy is in the audit trail."""

from __future__ import annotations

from pawflow.channels import Dispatcher, EmailChannel, SmtpConfig
from pawflow.clock import FakeClock
from pawflow.store import Question, Store
from pawflow.store.reach import addresses
from tests.channels.smtp import smtp_server


def _reachable(store: Store, *users: str) -> None:
    for user in users:
        store.ensure_user(user)
        with store.transaction() as tx:
            addresses.set_reach(tx, user, email=f"{user}@example.org", now=store.now())


def test_assignees_are_mailed_reminded_and_escalated_to(store: Store, clock: FakeClock) -> None:
    _reachable(store, "alice", "bob", "lee", "cto")
    with store.unit() as u:
        u.groups.add_members("leads", ["lee"])
    conversation = store.create_conversation("alice", "Releases")
    asked = store.ask(
        Question(
            "alice",
            conversation.id,
            "confirm",
            "Ship 2.0?",
            policy={
                "assignees": ["bob", "group:leads"],
                "remind_every": "1h",
                "escalate": [{"after": "3h", "to": ["cto"]}],
            },
        )
    ).interaction
    with smtp_server() as (inbox, url):
        sender = Dispatcher(
            store, [EmailChannel(SmtpConfig.from_url(url, None))], base_url="http://x", owner="d"
        )

        seen = 0

        def mailed() -> list[tuple[str, str]]:
            """What one dispatcher pass sent."""
            nonlocal seen
            sender.step()
            new = inbox.received()[seen:]
            seen += len(new)
            return sorted((str(m["To"]), str(m["Message-ID"])) for m in new)

        first = mailed()  # the deciders, not the requester
        assert [to for to, _ in first] == ["bob@example.org", "lee@example.org"]

        clock.advance("1h")
        store.sweep()
        reminded = mailed()  # again, as new messages
        assert [to for to, _ in reminded] == ["bob@example.org", "lee@example.org"]
        assert not {key for _, key in reminded} & {key for _, key in first}

        clock.advance("2h")
        store.sweep()  # the 3rd reminder and the escalation to the CTO
        assert [to for to, _ in mailed()] == [
            "bob@example.org",
            "cto@example.org",
            "lee@example.org",
        ]
        assert mailed() == []  # each went once

    with store.unit(write=False) as u:
        trail = u.accountability.details(asked.id, user="alice")["audit"]
    delivered = [e["detail"]["to"] for e in trail if e["action"] == "delivered"]
    assert sorted(delivered) == ["bob", "bob", "bob", "cto", "lee", "lee", "lee"]
    assert all(e["via"] == "email" for e in trail if e["action"] == "delivered")

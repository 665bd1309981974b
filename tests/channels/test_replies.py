"""Replies by mail, read from a real IMAP server, answer like a chat message (both backends)."""

from __future__ import annotations

import logging
from email.message import EmailMessage

import pytest

from pawflow import reading
from pawflow.channels import Dispatcher, EmailChannel, SmtpConfig
from pawflow.channels.replies import ImapConfig, ReplyReader
from pawflow.records import Interaction
from pawflow.store import Question, Store
from pawflow.store.reach import addresses
from tests.channels.imap import imap_server
from tests.channels.smtp import smtp_server
from tests.logs import tracebacks

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _read(request: Interaction, text: str) -> object:
    typed = reading.read(request, text)
    return None if typed is None else typed.value


def _reply(to: EmailMessage, sender: str, text: str) -> bytes:
    reply = EmailMessage()
    reply["From"] = sender
    reply["To"] = str(to["From"])
    reply["Subject"] = f"Re: {to['Subject']}"
    reply["In-Reply-To"] = str(to["Message-ID"])
    reply["References"] = str(to["Message-ID"])
    reply.set_content(f"{text}\n\nOn Tue, 1 Dec 2026, PawFlow wrote:\n> {to['Subject']}\n")
    return bytes(reply)


def test_a_reply_answers_its_request_through_the_readers(store: Store) -> None:
    store.ensure_user("ada")
    with store.transaction() as tx:
        addresses.set_reach(tx, "ada", email="ada@example.org", now=store.now())
    conversation = store.create_conversation("ada", "replies")
    deploy = store.ask(Question("ada", conversation.id, "confirm", "Deploy?")).interaction
    pick = store.ask(
        Question("ada", conversation.id, "choice", "Which region?", options=["eu", "us", "ap"])
    ).interaction
    count = store.ask(Question("ada", conversation.id, "integer", "How many?")).interaction
    with smtp_server() as (inbox, smtp_url):
        channel = EmailChannel(SmtpConfig.from_url(smtp_url, "pawflow@example.org"))
        Dispatcher(store, [channel], base_url="http://127.0.0.1:1", owner="t").step()
    mails = {str(m["X-PawFlow-Request"]): m for m in inbox.received()}
    with imap_server() as imap:
        reader = ReplyReader(store, ImapConfig.from_url(imap.url), _read)
        imap.deliver(_reply(mails[deploy.id], "Ada <ada@example.org>", "Yes, go ahead"))
        imap.deliver(_reply(mails[pick.id], "mallory@example.org", "the 1st one"))
        imap.deliver(_reply(mails[pick.id], "ada@example.org", "the 2nd one"))
        imap.deliver(_reply(mails[count.id], "ada@example.org", "lots"))
        imap.deliver(b"From: someone@example.org\r\nSubject: hello\r\n\r\nhi\r\n")
        assert reader.step() == [
            "answered",
            "not from the recipient",
            "answered",
            "not an answer",
            "not a reply",
        ]
        assert imap.seen() == [True] * 5
        assert reader.step() == []  # each mail is read once
    answered = store.get_interaction(deploy.id, user="ada")
    assert (answered.answer, answered.answered_via) == (True, "email")
    assert store.get_interaction(pick.id, user="ada").answer == "us"
    assert store.get_interaction(count.id, user="ada").status == "pending"


def test_of_two_readers_on_one_store_one_reads_the_mailbox(store: Store) -> None:
    """Several server processes on one store (``serve --workers``): the lease holder reads,
    the other leaves the mailbox alone until the lease is given up."""
    with imap_server() as imap:
        config = ImapConfig.from_url(imap.url)
        first, second = ReplyReader(store, config, _read), ReplyReader(store, config, _read)
        imap.deliver(b"From: someone@example.org\r\nSubject: hello\r\n\r\nhi\r\n")
        assert first.step() == ["not a reply"]
        imap.deliver(b"From: someone@example.org\r\nSubject: again\r\n\r\nhi\r\n")
        assert second.step() == []  # not its turn: the mail stays unseen
        assert imap.seen() == [True, False]
        first.stop()
        assert second.step() == ["not a reply"]
        assert imap.seen() == [True, True]


def test_a_reply_that_is_not_the_senders_to_give_is_refused_without_a_traceback(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    """Ada's reply to a request handed on to bea, and her second vote on a quorum: each is
    read once, refused, and leaves the request as it was."""
    caplog.set_level(logging.INFO)
    for user in ("ada", "bea"):
        store.ensure_user(user)
        with store.transaction() as tx:
            addresses.set_reach(tx, user, email=f"{user}@example.org", now=store.now())
    room = store.create_conversation("req", "replies")
    store.share_conversation(room.id, user="req", with_user="ada", access="write")
    handed_on = store.ask(
        Question(
            "req",
            room.id,
            "confirm",
            "Deploy?",
            policy={"assignees": ["ada"], "reassign_to": ["bea"]},
        )
    ).interaction
    quorum = store.ask(
        Question(
            "req",
            room.id,
            "confirm",
            "Ship?",
            policy={"assignees": ["ada", "bea"], "required_approvals": 2},
        )
    ).interaction
    with smtp_server() as (inbox, smtp_url):
        channel = EmailChannel(SmtpConfig.from_url(smtp_url, "pawflow@example.org"))
        Dispatcher(store, [channel], base_url="http://127.0.0.1:1", owner="t").step()
    mails = {str(m["X-PawFlow-Request"]): m for m in inbox.received() if "ada@" in str(m["To"])}
    with store.unit() as u:
        u.accountability.reassign(handed_on.id, ["bea"], user="ada")
    store.respond_interaction(quorum.id, True, user="ada")  # ada voted elsewhere already
    with imap_server() as imap:
        reader = ReplyReader(store, ImapConfig.from_url(imap.url), _read)
        imap.deliver(_reply(mails[handed_on.id], "ada@example.org", "yes"))
        imap.deliver(_reply(mails[quorum.id], "ada@example.org", "no"))
        assert reader.step() == ["refused", "refused"]
        assert imap.seen() == [True, True]  # read once, not again on every pass
    assert store.get_interaction(handed_on.id, user="req").status == "pending"
    with store.unit(write=False) as u:
        policy = u.accountability.details(quorum.id, user="req")["policy"]
    assert policy["progress"] == "1 of 2 approvals"
    assert [(v["voter"], v["vote"]) for v in policy["votes"]] == [("ada", True)]
    assert tracebacks(caplog.records) == []

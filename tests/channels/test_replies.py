"""Replies by mail, read from a real IMAP server, answer like a chat message (both backends)."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from pawflow.channels import Dispatcher, EmailChannel, SmtpConfig
from pawflow.channels.replies import ImapConfig, ReplyReader
from pawflow.chat import answering
from pawflow.records import Interaction
from pawflow.store import Store, outbox
from tests.channels.imap import imap_server
from tests.channels.smtp import smtp_server

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _read(request: Interaction, text: str) -> object:
    typed = answering.read(request, text)
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
        outbox.set_reach(tx, "ada", email="ada@example.org", now=store.now())
    conversation = store.create_conversation("ada", "replies")
    deploy = store.request_interaction("ada", conversation.id, "confirm", "Deploy?")
    pick = store.request_interaction(
        "ada", conversation.id, "choice", "Which region?", options=["eu", "us", "ap"]
    )
    count = store.request_interaction("ada", conversation.id, "integer", "How many?")
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

"""Replies by mail: with ``PAWFLOW_IMAP_URL`` set, a reply to a request's mail answers it.

The reader polls the mailbox for unseen mail. A reply names the mail it answers in
``In-Reply-To`` (or ``References``): that Message-ID is an outbox row's idempotency key,
random and known only to the mail's recipients, and the reply must come from the address the
row was sent to. Its own words (the quoted mail is left out) are read by the same readers as
a chat message ("yes", "the 2nd one", a number, a date), injected by ``pawflow.serve``, and
answer through ``respond_interaction`` (``answered_via: "email"``), so the request's
validation decides. Whatever is read is marked seen: a mail is read once. Of several
processes on one store (``pawflow serve --workers``), the one holding the lease
``channels:mail-replies`` reads the mailbox: taken at the start of a pass, renewed every
third of its time to live while the pass goes on (the rule of every lease,
``pawflow.store.LeaseTerms``), and a pass stops at the first mail it could not renew it for.

``PAWFLOW_IMAP_URL`` is ``imap://user:pass@host:port/MAILBOX`` (``imaps://`` for TLS;
the mailbox defaults to ``INBOX``).
"""

from __future__ import annotations

import email
import email.policy
import imaplib
import logging
import re
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from email.utils import parseaddr
from typing import Any
from urllib.parse import unquote, urlsplit

from pawflow.channels.dispatcher import process_owner
from pawflow.errors import (
    AlreadyVoted,
    ConfigError,
    Forbidden,
    InvalidInput,
    NotFound,
    NotPending,
)
from pawflow.loops import Loop
from pawflow.records import Interaction
from pawflow.redaction import remember_url
from pawflow.store import Hold, LeaseTerms, OutboxRow, Store

log = logging.getLogger("pawflow.channels.replies")

ReadReply = Callable[[Interaction, str], Any]
"""The answer a reply's text gives to a request, or None when it gives none."""
LEASE = "channels:mail-replies"
_ID = re.compile(r"<([^<>@\s]+)@[^<>\s]+>")
_QUOTE_START = re.compile(r"^\s*(>|On .+ wrote:\s*$|-----\s*Original Message)", re.IGNORECASE)


@dataclass(frozen=True)
class ImapConfig:
    host: str
    port: int
    username: str
    password: str
    tls: bool = False
    mailbox: str = "INBOX"
    timeout: float = 30.0

    @classmethod
    def from_url(cls, url: str) -> ImapConfig:
        remember_url(url)
        parts = urlsplit(url)
        if parts.scheme not in ("imap", "imaps") or not parts.hostname or not parts.username:
            raise ConfigError("PAWFLOW_IMAP_URL must look like imap://user:pass@host:port/INBOX")
        tls = parts.scheme == "imaps"
        try:
            port = parts.port or (993 if tls else 143)
        except ValueError as exc:
            raise ConfigError(f"PAWFLOW_IMAP_URL has an invalid port: {exc}") from exc
        return cls(
            host=parts.hostname,
            port=port,
            username=unquote(parts.username),
            password=unquote(parts.password or ""),
            tls=tls,
            mailbox=unquote(parts.path.strip("/")) or "INBOX",
        )


def reply_text(mail: EmailMessage) -> str:
    """The reply's own words: its text part up to the quoted mail."""
    part = mail.get_body(preferencelist=("plain",))
    if part is None:
        return ""
    lines = []
    for line in str(part.get_content()).splitlines():
        if _QUOTE_START.match(line):
            break
        lines.append(line)
    return "\n".join(lines).strip()


class ReplyReader:
    """Reads replies from one mailbox every ``interval`` seconds and answers with them."""

    def __init__(
        self,
        store: Store,
        config: ImapConfig,
        read: ReadReply,
        *,
        interval: float = 30.0,
        lease_ttl: float | timedelta | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.read = read
        self.owner = process_owner()
        self.terms = LeaseTerms.of(lease_ttl)
        self.lease_ttl = self.terms.ttl
        self.hold = Hold(self.terms)
        self.loop = Loop("mail-replies", self.step, interval=interval)

    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        self.loop.stop()
        try:
            with self.store.unit() as u:
                u.leases.release(LEASE, self.owner)
        except Exception:  # the lease runs out by itself
            log.warning("could not release the mail replies lease", exc_info=True)

    def step(self) -> list[str]:
        """One pass over the unseen mail, if this process holds the lease (else none);
        returns what became of each."""
        if not self._renew():
            return []
        outcomes = []
        with self._connect() as imap:
            imap.login(self.config.username, self.config.password)
            imap.select(self.config.mailbox)
            _, found = imap.uid("SEARCH", "UNSEEN")
            for uid in (found[0] or b"").decode("ascii").split():
                if self.hold.due and not self._renew():
                    break  # another process reads the mailbox now
                _, fetched = imap.uid("FETCH", uid, "(RFC822)")
                raw = next((item[1] for item in fetched if isinstance(item, tuple)), b"")
                outcomes.append(self.handle(raw))
                imap.uid("STORE", uid, "+FLAGS", "(\\Seen)")
        return outcomes

    def _renew(self) -> bool:
        began = self.hold.begin()
        with self.store.unit() as u:
            taken = u.leases.acquire(LEASE, self.owner, self.lease_ttl)
        if taken:
            self.hold.renewed(began)
            return True
        self.hold.lost()
        return False

    def _connect(self) -> imaplib.IMAP4:
        config = self.config
        if config.tls:
            return imaplib.IMAP4_SSL(
                config.host,
                config.port,
                ssl_context=ssl.create_default_context(),
                timeout=config.timeout,
            )
        return imaplib.IMAP4(config.host, config.port, timeout=config.timeout)

    def handle(self, raw: bytes) -> str:
        """Answer with one mail if it is a reply from a request's recipient; says what it did."""
        mail = email.message_from_bytes(raw, policy=email.policy.default)
        if not isinstance(mail, EmailMessage):
            return "unreadable"
        row = self._row(mail)
        if row is None:
            return "not a reply"
        sender = parseaddr(str(mail.get("From", "")))[1].lower()
        if sender != row.address.lower():
            log.warning("a reply to delivery %s came from another address", row.id)
            return "not from the recipient"
        with self.store.unit(write=False) as u:
            request = u.outbox.request_of(row.request_id)
        answer = self.read(request, reply_text(mail))
        if answer is None:
            return "not an answer"
        try:
            self.store.respond_interaction(request.id, answer, user=row.recipient, via="email")
        except (InvalidInput, NotPending, NotFound, Forbidden, AlreadyVoted) as exc:
            log.info("a reply to request %s did not answer it: %s", request.id, exc)
            return "refused"
        return "answered"

    def _row(self, mail: EmailMessage) -> OutboxRow | None:
        named = f"{mail.get('In-Reply-To', '')} {mail.get('References', '')}"
        with self.store.unit(write=False) as u:
            for key in _ID.findall(named):
                row = u.outbox.find_by_key(key)
                if row is not None and row.channel == "email":
                    return row
        return None

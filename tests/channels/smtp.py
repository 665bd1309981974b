"""A real SMTP server (aiosmtpd) on a loopback port that keeps every mail it receives."""

from __future__ import annotations

import email
import email.policy
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

from pawflow.server.testing import free_port


class Inbox:
    """What the SMTP server received, in order; ``delay`` slows each mail down."""

    def __init__(self, delay: float = 0.0, refuse: str | None = None) -> None:
        self.delay = delay
        self.refuse = refuse
        """An SMTP reply (``554 …``) given to every mail instead of taking it."""
        self.mails: list[EmailMessage] = []
        self._lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refuse is not None:
            return self.refuse
        if self.delay:
            time.sleep(self.delay)  # a slow mail server, so a crash can land mid-dispatch
        mail = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(mail, EmailMessage)
        with self._lock:
            self.mails.append(mail)
        return "250 OK"

    def received(self) -> list[EmailMessage]:
        with self._lock:
            return list(self.mails)


@contextmanager
def smtp_server(delay: float = 0.0, refuse: str | None = None) -> Iterator[tuple[Inbox, str]]:
    """An SMTP server and its ``smtp://`` URL."""
    inbox = Inbox(delay, refuse)
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, f"smtp://127.0.0.1:{port}"
    finally:
        controller.stop()


def text_of(mail: EmailMessage) -> str:
    part = mail.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def html_of(mail: EmailMessage) -> str:
    part = mail.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())

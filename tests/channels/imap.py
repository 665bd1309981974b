"""A real IMAP server (twisted.mail's IMAP4Server) on a loopback port, with one mailbox.

Twisted's reactor runs once per process, on a thread of its own; each server is a listening
port on it. Mail is put in the mailbox as a mail server would deliver it.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from twisted.cred import checkers, portal
from twisted.internet import protocol
from twisted.internet import reactor as _the_reactor
from twisted.internet.threads import blockingCallFromThread
from twisted.mail import imap4
from zope.interface import implementer  # type: ignore[import-untyped]

from pawflow.server.testing import free_port

IMAP: Any = imap4  # untyped: used as is
CRED: Any = portal
REACTOR: Any = _the_reactor
_REACTOR: threading.Thread | None = None


def _reactor() -> Any:
    global _REACTOR
    if _REACTOR is None:
        _REACTOR = threading.Thread(
            target=REACTOR.run,
            kwargs={"installSignalHandlers": False},
            daemon=True,
        )
        _REACTOR.start()
    return REACTOR


@implementer(imap4.IMessage, imap4.IMessageFile)
class Mail:
    def __init__(self, uid: int, raw: bytes) -> None:
        self.uid = uid
        self.raw = raw
        self.flags: set[str] = set()

    def open(self) -> io.BytesIO:
        return io.BytesIO(self.raw)

    def getUID(self) -> int:
        return self.uid

    def getFlags(self) -> list[str]:
        return sorted(self.flags)

    def getInternalDate(self) -> str:
        return "01-Dec-2026 00:00:00 +0000"

    def getHeaders(self, negate: bool, *names: str) -> dict[str, str]:
        return {}

    def getBodyFile(self) -> io.BytesIO:
        return io.BytesIO(self.raw)

    def getSize(self) -> int:
        return len(self.raw)

    def isMultipart(self) -> bool:
        return False

    def getSubPart(self, part: int) -> Any:
        raise IndexError(part)


@implementer(imap4.IMailbox)
class Mailbox:
    def __init__(self) -> None:
        self.mails: list[Mail] = []
        self.listeners: list[Any] = []

    def deliver(self, raw: bytes) -> None:
        self.mails.append(Mail(len(self.mails) + 1, raw))

    def seen(self) -> list[bool]:
        return ["\\Seen" in mail.flags for mail in self.mails]

    def getFlags(self) -> list[str]:
        return ["\\Seen"]

    def getHierarchicalDelimiter(self) -> str:
        return "/"

    def getUIDValidity(self) -> int:
        return 1

    def getUIDNext(self) -> int:
        return len(self.mails) + 1

    def getUID(self, message: int) -> int:
        return self.mails[message - 1].uid

    def getMessageCount(self) -> int:
        return len(self.mails)

    def getRecentCount(self) -> int:
        return 0

    def getUnseenCount(self) -> int:
        return sum(1 for mail in self.mails if "\\Seen" not in mail.flags)

    def isWriteable(self) -> bool:
        return True

    def destroy(self) -> None:
        pass

    def requestStatus(self, names: Any) -> Any:
        return IMAP.statusRequestHelper(self, names)

    def addListener(self, listener: Any) -> None:
        self.listeners.append(listener)

    def removeListener(self, listener: Any) -> None:
        self.listeners.remove(listener)

    def addMessage(self, message: Any, flags: Any = (), date: Any = None) -> None:
        self.deliver(message.read())

    def expunge(self) -> list[int]:
        return []

    def fetch(self, messages: Any, uid: bool) -> list[tuple[int, Mail]]:
        with suppress(ValueError):
            messages.last = len(self.mails)
        return [
            (number, mail)
            for number, mail in enumerate(self.mails, start=1)
            if (mail.uid if uid else number) in messages
        ]

    def store(self, messages: Any, flags: Any, mode: int, uid: bool) -> dict[int, list[str]]:
        changed = {}
        for number, mail in self.fetch(messages, uid):
            names = {f.decode() if isinstance(f, bytes) else f for f in flags}
            if mode == 0:
                mail.flags = names
            elif mode > 0:
                mail.flags |= names
            else:
                mail.flags -= names
            changed[number] = mail.getFlags()
        return changed


@implementer(portal.IRealm)
class _Realm:
    def __init__(self, account: Any) -> None:
        self.account = account

    def requestAvatar(self, avatar_id: Any, mind: Any, *interfaces: Any) -> Any:
        return imap4.IAccount, self.account, lambda: None


class _Factory(protocol.Factory):
    def __init__(self, door: Any) -> None:
        self.door = door

    def buildProtocol(self, addr: Any) -> Any:
        server = IMAP.IMAP4Server()
        server.portal = self.door
        server.factory = self
        return server


class ImapServer:
    """The mailbox of one user, reachable over IMAP; deliver and read from the test."""

    def __init__(self, user: str, password: str) -> None:
        self.mailbox = Mailbox()
        account = IMAP.MemoryAccount(user)
        account.addMailbox("INBOX", self.mailbox)
        checker = checkers.InMemoryUsernamePasswordDatabaseDontUse(**{user: password.encode()})
        self.door = CRED.Portal(_Realm(account), [checker])
        self.port = free_port()
        self.url = f"imap://{user}:{password}@127.0.0.1:{self.port}/INBOX"

    def deliver(self, raw: bytes) -> None:
        blockingCallFromThread(_reactor(), self.mailbox.deliver, raw)

    def seen(self) -> list[bool]:
        seen: list[bool] = blockingCallFromThread(_reactor(), self.mailbox.seen)
        return seen


@contextmanager
def imap_server(user: str = "pawflow", password: str = "mailbox-secret") -> Iterator[ImapServer]:
    server = ImapServer(user, password)
    the_reactor = _reactor()
    listening = blockingCallFromThread(
        the_reactor,
        the_reactor.listenTCP,
        server.port,
        _Factory(server.door),
        interface="127.0.0.1",
    )
    try:
        yield server
    finally:
        blockingCallFromThread(the_reactor, listening.stopListening)

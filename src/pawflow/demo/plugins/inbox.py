"""The ``inbox``: reads a local mbox file, and offers numbered shortlists to pick from.

"check my inbox" lists the latest emails; "read the email about X" opens the one email
about X — or, when several match, answers with a numbered shortlist opened as an explicit
``choice`` of the conversation. "the 2nd one" (any phrasing the pick reader accepts) then
opens that email; anything else withdraws the shortlist. The mailbox is only ever read.

Config: ``mailbox`` (path of an mbox file; default: the sample shipped with PawFlow),
``tools_for`` (agents given the ``search_inbox`` tool; default ``["planner"]``),
``shortlist_ttl`` (``"1d"``).
"""

from __future__ import annotations

import email.utils
import json
import mailbox
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from email.message import Message as EmailMessage
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pawflow.agent.tools import Tool
from pawflow.chat.intercepts import InterceptSpec
from pawflow.demo.plugins import declare_rows
from pawflow.errors import Conflict, InvalidInput
from pawflow.reading.words import read_pick

if TYPE_CHECKING:
    from pawflow.chat.plugins import PluginAPI
    from pawflow.chat.turn import Turn

OWNER = "inbox"
OPEN = "inbox.open"
SAMPLE = "sample.mbox"
LIST_LIMIT = 10
PICK_QUESTION = "Which one should I open?"

_READ = re.compile(
    r"\b(?:read|open|show|find)\s+(?:me\s+)?(?:the|my|that|an?)?\s*"
    r"(?:e-?mails?|mails?|messages?)\s+(?:about|from|regarding|on|re)\s+(?P<topic>.+?)[\s?.!]*$",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"^\s*(?:please\s+)?(?:(?:check|show|list|open)\s+(?:me\s+)?(?:my\s+|the\s+)?"
    r"(?:inbox|e-?mails?|mail)\b|what'?s\s+in\s+my\s+inbox\b)",
    re.IGNORECASE,
)
_STOP = {"the", "a", "an", "my", "our", "about", "from", "for", "of", "on", "one", "email", "mail"}


@dataclass(frozen=True)
class Email:
    key: str
    sender: str
    subject: str
    sent: datetime | None
    body: str

    @property
    def label(self) -> str:
        when = f", {self.sent:%d %b}" if self.sent is not None else ""
        return f"{self.subject} — {self.sender}{when}"

    def render(self) -> str:
        sent = f"{self.sent:%Y-%m-%d %H:%M}" if self.sent is not None else "unknown"
        return f"From: {self.sender}\nDate: {sent}\nSubject: {self.subject}\n\n{self.body.strip()}"


def _text_of(message: EmailMessage) -> str:
    part = next(
        (p for p in message.walk() if p.get_content_type() == "text/plain"),
        None,
    )
    if part is None:
        return ""
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        return str(part.get_payload())
    return raw.decode(part.get_content_charset() or "utf-8", errors="replace")


def _parse(position: int, message: EmailMessage) -> Email:
    name, address = email.utils.parseaddr(str(message.get("From", "")))
    try:
        sent: datetime | None = email.utils.parsedate_to_datetime(str(message.get("Date")))
    except (TypeError, ValueError):
        sent = None
    return Email(
        key=str(message.get("Message-ID") or f"#{position}"),
        sender=name or address or "unknown sender",
        subject=" ".join(str(message.get("Subject") or "(no subject)").split()),
        sent=sent,
        body=_text_of(message),
    )


@contextmanager
def _mbox_path(path: Path | None) -> Iterator[Path]:
    if path is not None:
        yield path
        return
    with resources.as_file(resources.files("pawflow.demo.plugins").joinpath(SAMPLE)) as found:
        yield found


class Inbox:
    def __init__(
        self, services: PluginAPI, path: Path | None, *, shortlist_ttl: str = "1d"
    ) -> None:
        self.services = services
        self.path = path
        self.shortlist_ttl = shortlist_ttl

    def emails(self) -> list[Email]:
        """Every email of the mailbox, newest first."""
        with _mbox_path(self.path) as path:
            if not path.is_file():
                return []
            box = mailbox.mbox(path, create=False)
            try:
                found = [_parse(i, message) for i, message in enumerate(box)]
            finally:
                box.close()
        return sorted(found, key=lambda e: e.sent.timestamp() if e.sent else 0.0, reverse=True)

    def search(self, topic: str) -> list[Email]:
        words = [w for w in re.findall(r"[\w#@.-]+", topic.lower()) if w not in _STOP]
        if not words:
            return []
        return [
            mail
            for mail in self.emails()
            if all(w in f"{mail.subject} {mail.sender} {mail.body}".lower() for w in words)
        ]

    def _shortlist(self, turn: Turn, intro: str, found: list[Email]) -> str:
        self.services.ask(
            turn.conversation_id,
            OWNER,
            "choice",
            PICK_QUESTION,
            intent=OPEN,
            payload=[{"label": mail.label, "value": mail.key} for mail in found],
            ttl=self.shortlist_ttl,
        )
        listed = [f"{i}. {mail.label}" for i, mail in enumerate(found, 1)]
        return "\n".join([intro, *listed, PICK_QUESTION])

    # -- intercepts -----------------------------------------------------------------------

    def read(self, turn: Turn) -> str | None:
        """Intercept ``inbox.read``: "read the email about X"."""
        match = _READ.search(turn.text)
        if match is None:
            return None
        topic = match.group("topic").strip().strip("\"'")
        found = self.search(topic)
        if not found:
            return f'I found no email about "{topic}".'
        if len(found) == 1:
            return found[0].render()
        return self._shortlist(turn, f'I found {len(found)} emails about "{topic}":', found)

    def list(self, turn: Turn) -> str | None:
        """Intercept ``inbox.list``: "check my inbox"."""
        if _LIST.search(turn.text) is None or _READ.search(turn.text) is not None:
            return None
        found = self.emails()[:LIST_LIMIT]
        if not found:
            return "Your inbox is empty."
        if len(found) == 1:
            return "Your inbox has one email:\n\n" + found[0].render()
        return self._shortlist(turn, f"The latest {len(found)} emails in your inbox:", found)

    def open(self, turn: Turn) -> str | None:
        """Intercept ``inbox.open``: a pick out of *this session's* shortlist."""
        pending = turn.pending
        if pending is None or pending.owner != OWNER or pending.intent != OPEN:
            return None
        if pending.kind != "choice":
            return None
        pick = read_pick(turn.text, len(pending.options))
        if pick is None:
            return None  # not a pick: the shortlist is withdrawn, the message goes on
        try:
            self.services.answered(pending.id, turn.text)
        except Conflict:
            return None
        key = pending.option_value(pick)
        label = pending.options[pick - 1]
        opened = next((mail for mail in self.emails() if mail.key == key), None)
        asked = f'Earlier I asked "{pending.question}" — taking that as #{pick}: {label}.'
        if opened is None:
            return f"{asked} That email is no longer in the mailbox."
        return f"{asked}\n\n{opened.render()}"

    # -- a tool for agents ----------------------------------------------------------------

    def tool(self) -> Tool:
        def search_inbox(query: str) -> str:
            """Search the user's mailbox; the matching emails, newest first.

            Args:
                query: Words that must all appear in the email (subject, sender or text).
            """
            found = self.search(query)[:LIST_LIMIT]
            return json.dumps(
                [{"subject": m.subject, "from": m.sender, "text": m.body[:500]} for m in found],
                ensure_ascii=False,
            )

        return Tool.from_function(search_inbox)


def register(services: PluginAPI, config: Mapping[str, Any]) -> None:
    unknown = set(config) - {"mailbox", "tools_for", "shortlist_ttl"}
    if unknown:
        raise InvalidInput(f"inbox: unknown settings {sorted(unknown)}")
    path = config.get("mailbox")
    inbox = Inbox(
        services,
        None if path is None else Path(str(path)).expanduser(),
        shortlist_ttl=str(config.get("shortlist_ttl") or "1d"),
    )
    declare_rows(services)
    services.register_intercept(
        InterceptSpec(OPEN, inbox.open, resolves_confirmation=True, owner=OWNER)
    )
    services.register_intercept(InterceptSpec("inbox.read", inbox.read, owner=OWNER))
    services.register_intercept(InterceptSpec("inbox.list", inbox.list, owner=OWNER))
    tools_for = config.get("tools_for", ["planner"])
    if not isinstance(tools_for, list | tuple):
        raise InvalidInput("inbox: tools_for must be a list of agent names")
    for agent in tools_for:
        services.register_tool(inbox.tool(), agent=str(agent))

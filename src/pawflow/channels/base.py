"""The channel adapter: what every way of reaching a person (email, Slack, webhooks, Apprise)
implements, and what the dispatcher hands it.

An adapter renders a request for one recipient, sends it (:meth:`Channel.send`, idempotent
per outbox row: the row's ``idempotency_key`` goes with the message, so a resend after a
crash is recognizably the same message), and updates or settles a sent copy once the
request is answered, cancelled or expires (:meth:`Channel.settle`; a channel whose messages
cannot change does nothing). Adapters never change a request: an answer that comes back
through a channel goes through ``respond_interaction`` like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable
from urllib.parse import quote

from pawflow.clock import iso
from pawflow.errors import DeliveryError
from pawflow.interactions import Kind
from pawflow.records import Interaction
from pawflow.store import OutboxRow

__all__ = [
    "Button",
    "Channel",
    "DeliveryError",
    "Outgoing",
    "about",
    "asker",
    "context_lines",
    "conversation_url",
    "outgoing",
    "plain_text",
    "settled_text",
    "utc",
    "webhook_context",
]


@dataclass(frozen=True)
class Button:
    """One answer offered as a button: its label and the confirm page that answers it."""

    label: str
    url: str


def utc(moment: datetime) -> str:
    """A moment in UTC, as every message says it where the reader's time zone is unknown."""
    return moment.strftime("%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True)
class Outgoing:
    """A request on its way to one recipient by one channel."""

    row: OutboxRow
    request: Interaction
    answer_url: str
    """The answer link's page (the question with its controls)."""
    buttons: tuple[Button, ...]
    """For confirm and choice: one per answer; empty for the other kinds."""
    conversation_title: str = ""
    """The title of the question's conversation ("" when it has none)."""

    @property
    def subject(self) -> str:
        """The question's title (or first line), and who asks when it is an agent or a flow."""
        requester = self.request.requester
        what = about(self.request)
        return what if requester.type == "api" else f"{what} — {asker(self.request)} asks"

    @property
    def conversation_url(self) -> str:
        """The web chat's page of the question's conversation, beside the answer link."""
        base = self.answer_url.rsplit("/a/", 1)[0]
        return conversation_url(base, self.request.conversation_id)

    def context(
        self, when: Callable[[datetime], str] = utc, text: Callable[[str], str] = str
    ) -> list[str]:
        """Who asks, where, and by when: the lines every message carries with the question
        (:func:`context_lines`)."""
        return context_lines(self.request, self.conversation_title, when=when, text=text)


def context_lines(
    request: Interaction,
    conversation_title: str = "",
    *,
    when: Callable[[datetime], str] = utc,
    text: Callable[[str], str] = str,
) -> list[str]:
    """Who asks, in which conversation, and by when, in the words of every channel:
    "Asked by the agent deployer for ada.", "In the conversation “deploys”.", "Answer by
    2026-12-01 16:00 UTC.". ``when`` says a moment (Slack: in each reader's time zone);
    ``text`` escapes what people named (a Slack message's mrkdwn)."""
    who = asker(request)
    lines = [
        f"Asked by {text(who)}."
        if who == request.owner
        else f"Asked by {text(who)} for {text(request.owner)}."
    ]
    if conversation_title.strip():
        lines.append(f"In the conversation “{text(conversation_title.strip())}”.")
    if request.expires_at is not None:
        lines.append(f"Answer by {when(request.expires_at)}.")
    return lines


def asker(request: Interaction) -> str:
    """Who asks, in words: "the agent deployer", "the flow nightly", "ci-bot"."""
    requester = request.requester
    if requester.type in ("agent", "flow"):
        return f"the {requester.type} {requester.name}"
    return requester.name if requester.name and requester.name != "api" else request.owner


def about(request: Interaction) -> str:
    """What the question is about: its title, or its first line."""
    return request.title or _first_line(request.message)


def webhook_context(request: Interaction, conversation_title: str, base_url: str) -> dict[str, Any]:
    """What a webhook's event says besides the request's record: who asks, where, what
    about, by when, the words the other channels say, and the conversation's page."""
    return {
        "asked_by": asker(request),
        "conversation": {
            "id": request.conversation_id,
            "title": conversation_title,
            "url": conversation_url(base_url, request.conversation_id),
        },
        "about": about(request),
        "expires_at": None if request.expires_at is None else iso(request.expires_at),
        "text": " ".join(context_lines(request, conversation_title)),
    }


def conversation_url(base_url: str, conversation_id: str) -> str:
    """The web chat's page of a conversation."""
    return f"{base_url.rstrip('/')}/?c={quote(conversation_id, safe='')}"


def _first_line(text: str, limit: int = 120) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "A question for you"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def answer_url(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/a/{quote(token, safe='')}"


def buttons_for(request: Interaction, page: str) -> tuple[Button, ...]:
    """The one-click answers of a confirm or a choice, each to its confirm page."""
    if request.kind == Kind.CONFIRM:
        labels = ["Yes", "No"]
    elif request.kind == Kind.CHOICE:
        labels = [option["label"] for option in request.options or []]
    else:
        return ()
    return tuple(Button(label, f"{page}/confirm?pick={i}") for i, label in enumerate(labels))


def outgoing(
    row: OutboxRow, request: Interaction, base_url: str, token: str, conversation_title: str = ""
) -> Outgoing:
    page = answer_url(base_url, token)
    return Outgoing(row, request, page, buttons_for(request, page), conversation_title)


def plain_text(message: Outgoing) -> str:
    """The question as plain text: its words, the one-click answers, the page, the deadline
    (what a mail's text part says, and what a notification-only channel can send)."""
    request = message.request
    lines = [request.title or "", request.message, "", *message.context(), ""]
    if message.buttons:
        lines.append("Answer with one click:")
        lines += [f"  {button.label}: {button.url}" for button in message.buttons]
        lines.append("")
    lines.append(f"Open the question: {message.answer_url}")
    lines.append(f"Open the conversation: {message.conversation_url}")
    if request.expires_at is not None:
        lines.append(f"It expires {utc(request.expires_at)}.")
    return "\n".join(lines).strip() + "\n"


VOTE_COUNTED = "Your vote was counted; the request waits for more approvals."
"""What a vote of a quorum that does not decide it is told, on every client."""


def settled_text(request: Interaction) -> str:
    """One line on how the request ended: "Answered by ada via link, 2026-01-02 14:02 UTC"."""
    if request.status == "answered":
        when = request.answered_at.strftime("%Y-%m-%d %H:%M UTC") if request.answered_at else ""
        return f"Answered by {request.answered_by} via {request.answered_via}, {when}"
    return f"This request was {request.status}."


@runtime_checkable
class Channel(Protocol):
    """A way of reaching people; ``name`` is what ``notify`` lists call it."""

    name: str

    def render(self, message: Outgoing) -> object:
        """What the channel sends for ``message`` (a mail, a Slack message's blocks, …)."""
        ...

    def send(self, message: Outgoing) -> str | None:
        """Deliver ``message``; returns the channel's reference to it (kept for updates).
        Raises :class:`DeliveryError`."""
        ...

    def settle(self, row: OutboxRow, request: Interaction) -> None:
        """Update the sent copy of a settled request (or do nothing if it cannot change)."""
        ...

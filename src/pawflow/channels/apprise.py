"""Notification-only channels through Apprise URLs: ntfy, Teams, Discord, Telegram, Matrix,
Pushover and the rest (https://github.com/caronc/apprise/wiki).

The ``apprise`` channel sends to the user's notification URL (``pawflow users set NAME
--notify-url ntfy://ntfy.sh/topic``, or ``set_notifications``): a title (the request's, or
its first line), and a body with the question, its kind and the answer link (and, for a
confirm or a choice, the one-click answers). Nothing comes back this way: the person
answers on the link's page. A sent notification cannot change; :meth:`settle` does nothing.

The generic HTTP targets (``json://``, ``xml://``, ``form://`` and their ``s`` forms) are
held to the webhooks' rule: a host inside the network must be listed in
``PAWFLOW_WEBHOOK_ALLOWED_HOSTS``.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from pawflow.channels.base import DeliveryError, Outgoing
from pawflow.channels.webhooks import AllowedHosts, check_target
from pawflow.records import Interaction
from pawflow.store.outbox import OutboxRow

log = logging.getLogger("pawflow.channels")

GENERIC = {"json": "http", "jsons": "https", "xml": "http", "xmls": "https"}
GENERIC |= {"form": "http", "forms": "https"}
KIND_WORDS = {
    "confirm": "a yes or no question",
    "choice": "a choice",
    "multi": "a choice of several",
    "text": "a question to answer in words",
    "multiline": "a question to answer in words",
    "integer": "a whole number",
    "decimal": "a number",
    "date": "a date",
    "datetime": "a date and time",
    "form": "a form to fill in",
    "file": "a file to send",
}


def notification_text(message: Outgoing) -> str:
    """The body: the question, its kind, the one-click answers, the answer link."""
    request = message.request
    kind = KIND_WORDS.get(request.kind, request.kind)
    lines = [request.message.strip(), "", f"Kind: {request.kind} ({kind})"]
    if message.buttons:
        lines += [f"{button.label}: {button.url}" for button in message.buttons]
    lines.append(f"Answer: {message.answer_url}")
    if request.expires_at is not None:
        lines.append(f"Expires {request.expires_at.strftime('%Y-%m-%d %H:%M UTC')}")
    return "\n".join(lines)


class AppriseChannel:
    """The ``apprise`` channel: one notification per outbox row, to the row's Apprise URL."""

    name = "apprise"

    def __init__(self, allowed: AllowedHosts | None = None, *, timeout: float = 15.0) -> None:
        self.allowed = allowed or AllowedHosts()
        self.timeout = timeout

    def render(self, message: Outgoing) -> tuple[str, str]:
        """The notification's title and body."""
        return message.subject, notification_text(message)

    def send(self, message: Outgoing) -> str | None:
        import apprise  # noqa: PLC0415 - 0.1 s, paid by the first notification

        url = message.row.address
        self._check(url)
        service = apprise.Apprise()
        if not service.add(url):
            raise DeliveryError("the notification URL is not one Apprise knows", permanent=True)
        title, body = self.render(message)
        if not service.notify(body=body, title=title, body_format=apprise.NotifyFormat.TEXT):
            raise DeliveryError("the notification service refused it or did not answer")
        return None

    def _check(self, url: str) -> None:
        parts = urlsplit(url)
        scheme = GENERIC.get(parts.scheme.lower())
        if scheme is None:
            return
        try:
            port = f":{parts.port}" if parts.port else ""
            check_target(f"{scheme}://{parts.hostname or ''}{port}/", self.allowed)
        except ValueError as exc:
            raise DeliveryError(f"the notification URL {exc}", permanent=True) from exc

    def settle(self, row: OutboxRow, request: Interaction) -> None:
        """A notification cannot change; the link's page shows how the request ended."""

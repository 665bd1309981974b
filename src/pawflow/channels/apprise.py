"""Notification-only channels through Apprise URLs: ntfy, Teams, Discord, Telegram, Matrix,
Pushover and the rest (https://github.com/caronc/apprise/wiki).

The ``apprise`` channel sends to the user's notification URL (``pawflow users set NAME
--notify-url ntfy://ntfy.sh/topic``, or ``set_notifications``): a title (the request's, or
its first line), and a body with the question, its kind and the answer link (and, for a
confirm or a choice, the one-click answers). Nothing comes back this way: the person
answers on the link's page. A sent notification cannot change; :meth:`settle` does nothing.

Every URL is held to the egress rule (:mod:`pawflow.egress`), when it is set and again at
each send, in one of three ways by its scheme (:func:`judge`):

- a scheme whose host is the server it calls (:data:`HOST_SCHEMES`: ``json://``,
  ``ntfy://host/topic``, ``gotify://``, ``mmost://``, …): the host is resolved once and
  judged, and the send connects to the addresses judged;
- a scheme of a public service whose URL names no host to call (:data:`SERVICE_SCHEMES`:
  ``discord://``, ``tgram://``, ``ntfy://topic``, ``mailto://`` through a provider, …):
  nothing to judge when it is set; at the send, every name the service resolves is judged;
- any other scheme cannot be judged, and is refused unless ``PAWFLOW_EGRESS_ALLOWED_HOSTS``
  lists it (``mailto://,…``).

A send runs on a thread of its own, held to the rule, and ends by the attempt's deadline
(``PAWFLOW_DELIVERY_TIMEOUT``): past it, the attempt has failed and is tried again. A thread
cannot be stopped, so a send past its deadline is remembered: while it still runs, the next
attempt of the same delivery sends nothing (it fails again, to be tried later), and once it has
ended, the next attempt takes its outcome — a notification that got through late is not sent
twice, and a receiver that never answers holds one thread, not one per attempt.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from urllib.parse import parse_qs, urlsplit

from pawflow.channels.base import DeliveryError, Outgoing
from pawflow.channels.webhooks import MAX_URL, TIMEOUT
from pawflow.egress import EgressRule
from pawflow.errors import EgressRefused, FieldError, InvalidInput
from pawflow.records import Interaction
from pawflow.store import OutboxRow

log = logging.getLogger("pawflow.channels")

HOST_SCHEMES = frozenset(
    f"{name}{s}"
    for name in (
        "json",
        "xml",
        "form",
        "ntfy",
        "gotify",
        "mmost",
        "rocket",
        "ncloud",
        "nctalk",
        "apprise",
        "hassio",
        "kodi",
        "xbmc",
        "emby",
        "signal",
    )
    for s in ("", "s")
)
"""Schemes whose URL's host is the server called."""
SERVICE_SCHEMES = frozenset(
    {
        "discord",
        "tgram",
        "pover",
        "slack",
        "pbul",
        "gchat",
        "ifttt",
        "opsgenie",
        "pagerduty",
        "join",
        "prowl",
        "wxteams",
        "flock",
        "guilded",
        "twilio",
        "sns",
        "ses",
        "spush",
        "pushed",
        "mailto",
        "mailtos",
    }
)
"""Schemes of public services whose URL names no host to call (a token, an id, a mail
domain's provider): judged at the send, by what they resolve."""
TOPIC_ONLY = frozenset({"ntfy", "ntfys"})
"""Schemes whose URL without a path names a topic on the public service, not a host."""


def judge(url: str, rule: EgressRule) -> dict[str, tuple[str, ...]]:
    """Whether the rule lets the server send to the Apprise ``url``: the hosts checked and
    their addresses (to pin at the send); raises :class:`EgressRefused` with the reason."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise EgressRefused(f"cannot be read: {exc}") from exc
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    if scheme in TOPIC_ONLY and parts.path.strip("/") == "":
        return {}  # a topic on the public service
    if scheme in HOST_SCHEMES:
        if not host:
            raise EgressRefused(f"{scheme}:// needs a host")
        return {host.lower(): rule.addresses(host, port or (443 if scheme[-1] == "s" else 80))}
    if scheme in SERVICE_SCHEMES:
        relay = parse_qs(parts.query).get("smtp", [""])[0] if scheme.startswith("mailto") else ""
        relay_host = urlsplit(f"//{relay}").hostname if relay else None
        return {} if not relay_host else {relay_host.lower(): rule.addresses(relay_host, 25)}
    if rule.allows_scheme(scheme):
        return {}
    raise EgressRefused(
        f"uses {scheme}://, which the server cannot judge; list {scheme}:// in"
        " PAWFLOW_EGRESS_ALLOWED_HOSTS to allow it"
    )


def check_notify_url(url: str, rule: EgressRule, field: str = "notify_url") -> str:
    """``url`` as a notification URL may be set, or :class:`InvalidInput` on ``field``: one
    Apprise reads, that the egress rule lets the server call."""
    import apprise  # noqa: PLC0415 - 0.1 s, paid by the first check

    if len(url) > MAX_URL:
        raise InvalidInput(f"{field} is too long", [FieldError(field, f"at most {MAX_URL}")])
    if apprise.Apprise.instantiate(url) is None:
        message = "not a notification URL Apprise knows"
        raise InvalidInput(f"{field} is {message}", [FieldError(field, message)])
    try:
        judge(url, rule)
    except EgressRefused as exc:
        raise exc.on(field) from exc
    return url


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

    def __init__(self, rule: EgressRule | None = None, *, timeout: float = TIMEOUT) -> None:
        self.rule = rule or EgressRule()
        self.timeout = timeout
        self._late: dict[str, tuple[threading.Thread, list[DeliveryError | None]]] = {}
        """Sends past their deadline, by delivery: the thread and where its outcome lands."""
        self._lock = threading.Lock()

    def render(self, message: Outgoing) -> tuple[str, str]:
        """The notification's title and body."""
        return message.subject, notification_text(message)

    def send(self, message: Outgoing) -> str | None:
        url = message.row.address
        try:
            pins = judge(url, self.rule)
        except EgressRefused as exc:
            raise DeliveryError(f"the notification URL {exc.message}", permanent=True) from exc
        key = message.row.id
        with self._lock:
            late = self._late.pop(key, None)
        if late is not None:
            worker, outcome = late
            if worker.is_alive():
                with self._lock:
                    self._late[key] = late
                raise DeliveryError("the previous attempt is still waiting for an answer")
            if outcome and outcome[0] is None:
                return None  # the previous attempt got through after its deadline
        title, body = self.render(message)
        outcome = []
        worker = threading.Thread(
            target=self._notify,
            args=(url, pins, title, body, outcome),
            name="pawflow-apprise",
            daemon=True,
        )
        worker.start()
        worker.join(self.timeout)
        if not outcome:  # it goes on, but this attempt has failed: tried again later
            with self._lock:
                self._late[key] = (worker, outcome)
            raise DeliveryError(f"no complete answer within {self.timeout:g} s")
        if outcome[0] is not None:
            raise outcome[0]
        return None

    def _notify(
        self,
        url: str,
        pins: Mapping[str, tuple[str, ...]],
        title: str,
        body: str,
        outcome: list[DeliveryError | None],
    ) -> None:
        import apprise  # noqa: PLC0415 - 0.1 s, paid by the first notification

        try:
            # One service, notified on this thread (never Apprise's pool): the rule holds it.
            service = apprise.Apprise(asset=apprise.AppriseAsset(async_mode=False))
            if not service.add(url):
                message = "the notification URL is not one Apprise knows"
                outcome.append(DeliveryError(message, permanent=True))
                return
            with self.rule.resolving(pins) as refusals:
                sent = service.notify(body=body, title=title, body_format=apprise.NotifyFormat.TEXT)
            if refusals.reasons:
                reason = f"the notification URL {refusals.reasons[0]}"
                outcome.append(DeliveryError(reason, permanent=True))
            elif not sent:
                outcome.append(
                    DeliveryError("the notification service refused it or did not answer")
                )
            else:
                outcome.append(None)
        except Exception as exc:  # a plugin's bug is this attempt's failure
            outcome.append(DeliveryError(f"{type(exc).__name__}: {exc}"))

    def settle(self, row: OutboxRow, request: Interaction) -> None:
        """A notification cannot change; the link's page shows how the request ended."""

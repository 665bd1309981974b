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
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import parse_qs, urlsplit

from pawflow.channels.base import DeliveryError, Outgoing
from pawflow.channels.webhooks import MAX_URL, TIMEOUT
from pawflow.clock import Clock, SystemClock
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


LATE_KEPT = timedelta(hours=1)
"""How long a send that got through past its deadline is remembered for its row's next
attempt, which sends nothing then (it comes within the outbox's longest backoff, 30
minutes). A row whose request settled meanwhile is never tried again: it is forgotten then."""


@dataclass
class _Late:
    """A send past its deadline: its thread, where its outcome lands, when it ended."""

    worker: threading.Thread
    outcome: list[DeliveryError | None]
    ended: datetime | None = None

    @property
    def delivered(self) -> bool:
        return bool(self.outcome) and self.outcome[0] is None


class AppriseChannel:
    """The ``apprise`` channel: one notification per outbox row, to the row's Apprise URL."""

    name = "apprise"

    def __init__(
        self,
        rule: EgressRule | None = None,
        *,
        timeout: float = TIMEOUT,
        clock: Clock | None = None,
    ) -> None:
        self.rule = rule or EgressRule()
        self.timeout = timeout
        self.clock: Clock = clock or SystemClock()
        self._late: dict[str, _Late] = {}
        """Sends past their deadline, by delivery, while running, and if they got through,
        for :data:`LATE_KEPT` after (a failed one is forgotten as it ends)."""
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
            self._forget_ended()
            late = self._late.pop(key, None)
            if late is not None and late.worker.is_alive():
                self._late[key] = late
                raise DeliveryError("the previous attempt is still waiting for an answer")
        if late is not None and late.delivered:
            return None  # the previous attempt got through after its deadline
        title, body = self.render(message)
        outcome: list[DeliveryError | None] = []
        worker = threading.Thread(
            target=self._attempt,
            args=(key, url, pins, title, body, outcome),
            name="pawflow-apprise",
            daemon=True,
        )
        worker.start()
        worker.join(self.timeout)
        if not outcome:  # it goes on, but this attempt has failed: tried again later
            with self._lock:
                self._late[key] = _Late(worker, outcome)
            raise DeliveryError(f"no complete answer within {self.timeout:g} s")
        if outcome[0] is not None:
            raise outcome[0]
        return None

    def late(self) -> int:
        """How many sends past their deadline are remembered (running, or delivered lately)."""
        with self._lock:
            self._forget_ended()
            return len(self._late)

    def _forget_ended(self) -> None:
        """Forget the late sends that failed, and those delivered more than :data:`LATE_KEPT`
        ago whose row never came back (its request settled, or it went out from elsewhere)."""
        now = self.clock.now()
        for key, late in list(self._late.items()):
            if late.worker.is_alive():
                continue
            if not late.delivered:
                del self._late[key]  # failed: the next attempt sends anew
            elif late.ended is None:
                late.ended = now  # it ended as its send() returned: from now on
            elif now - late.ended >= LATE_KEPT:
                del self._late[key]

    def _attempt(
        self,
        key: str,
        url: str,
        pins: Mapping[str, tuple[str, ...]],
        title: str,
        body: str,
        outcome: list[DeliveryError | None],
    ) -> None:
        self._notify(url, pins, title, body, outcome)
        with self._lock:
            late = self._late.get(key)
            if late is None or late.outcome is not outcome:
                return  # in time (or its send() has not noted it yet: it does when it looks)
            if late.delivered:
                late.ended = self.clock.now()
            else:
                del self._late[key]  # failed: the next attempt sends anew

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

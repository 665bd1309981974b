"""Email over SMTP: the question as a text and an HTML part, with its answer link.

``PAWFLOW_SMTP_URL`` says where mail goes: ``smtp://user:pass@host:port`` (plain, or
``?starttls=true`` to upgrade the connection), ``smtps://…`` for TLS from the start;
``PAWFLOW_MAIL_FROM`` is the sender. A confirm or a choice shows one button per answer,
each to a confirm page whose POST answers; every other kind links to the answer page. The
Message-ID is the outbox row's idempotency key, so a mail sent again after a crash is the
same mail to the recipient's system. A sent mail cannot change: :meth:`settle` does nothing,
and the answer page tells who answered, when and how.
"""

from __future__ import annotations

import html
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

from pawflow.channels.base import DeliveryError, Outgoing, plain_text, utc
from pawflow.errors import ConfigError
from pawflow.records import Interaction
from pawflow.redaction import remember_url
from pawflow.store import OutboxRow

Security = Literal["plain", "starttls", "tls"]


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    mail_from: str
    username: str | None = None
    password: str | None = None
    security: Security = "plain"
    timeout: float = 30.0

    @classmethod
    def from_url(cls, url: str, mail_from: str | None) -> SmtpConfig:
        """``smtp://[user:pass@]host[:port][?starttls=true]`` or ``smtps://…``."""
        remember_url(url)
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ConfigError("PAWFLOW_SMTP_URL must look like smtp://user:pass@host:port")
        query = {k: v[-1].lower() for k, v in parse_qs(parts.query).items()}
        starttls = query.get("starttls", "false") in ("1", "true", "yes", "on")
        security: Security = (
            "tls" if parts.scheme == "smtps" else ("starttls" if starttls else "plain")
        )
        try:
            port = parts.port or (465 if security == "tls" else 587 if starttls else 25)
        except ValueError as exc:
            raise ConfigError(f"PAWFLOW_SMTP_URL has an invalid port: {exc}") from exc
        sender = mail_from or (f"pawflow@{parts.hostname}")
        return cls(
            host=parts.hostname,
            port=port,
            mail_from=sender,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            security=security,
        )


def message_id(row: OutboxRow, mail_from: str) -> str:
    domain = mail_from.rpartition("@")[2].strip(" >") or "pawflow.invalid"
    return f"<{row.idempotency_key}@{domain}>"


_BUTTON = (
    "display:inline-block;margin:0 8px 8px 0;padding:10px 18px;border-radius:6px;"
    "background:#4b3f8f;color:#ffffff;text-decoration:none;font-weight:600"
)


def _html(message: Outgoing) -> str:
    request = message.request
    title = f"<h2>{html.escape(request.title)}</h2>" if request.title else ""
    body = "".join(f"<p>{html.escape(p)}</p>" for p in request.message.split("\n\n") if p)
    if message.buttons:
        links = "".join(
            f'<a href="{html.escape(b.url, quote=True)}" style="{_BUTTON}">'
            f"{html.escape(b.label)}</a>"
            for b in message.buttons
        )
        actions = f"<p>{links}</p>"
        more = "Or open the question"
    else:
        actions = ""
        more = "Answer it here"
    page = html.escape(message.answer_url, quote=True)
    where = html.escape(message.conversation_url, quote=True)
    context = "".join(
        f'<p style="color:#444">{html.escape(line)}</p>' for line in message.context()
    )
    expires = message.request.expires_at
    expiry = f"<p>It expires {html.escape(utc(expires))}.</p>" if expires is not None else ""
    return (
        '<!doctype html><html><body style="font-family:sans-serif;max-width:40em">'
        f"{title}{body}{context}{actions}"
        f'<p><a href="{page}">{more}</a> · <a href="{where}">Open the conversation</a>.</p>'
        f"{expiry}"
        '<p style="color:#666;font-size:small">Each button opens a page that asks you to '
        "confirm: opening it answers nothing.</p></body></html>"
    )


def build(message: Outgoing, config: SmtpConfig) -> EmailMessage:
    mail = EmailMessage()
    mail["Subject"] = message.subject
    mail["From"] = config.mail_from
    mail["To"] = message.row.address
    mail["Date"] = formatdate(localtime=False)
    mail["Message-ID"] = message_id(message.row, config.mail_from)
    mail["Auto-Submitted"] = "auto-generated"
    mail["X-PawFlow-Request"] = message.request.id
    mail.set_content(plain_text(message))
    mail.add_alternative(_html(message), subtype="html")
    return mail


class EmailChannel:
    """The ``email`` channel: one mail per outbox row, over SMTP."""

    name = "email"

    def __init__(self, config: SmtpConfig) -> None:
        self.config = config

    def render(self, message: Outgoing) -> EmailMessage:
        """The mail: a text and an HTML part, its Message-ID the row's idempotency key."""
        return build(message, self.config)

    def send(self, message: Outgoing) -> str | None:
        mail = self.render(message)
        config = self.config
        try:
            with self._connect() as smtp:
                if config.security == "starttls":
                    smtp.starttls(context=ssl.create_default_context())
                if config.username is not None:
                    smtp.login(config.username, config.password or "")
                smtp.send_message(mail)
        except smtplib.SMTPRecipientsRefused as exc:
            raise DeliveryError(f"recipient refused: {_codes(exc)}", permanent=True) from exc
        except smtplib.SMTPResponseException as exc:
            permanent = 500 <= exc.smtp_code < 600
            raise DeliveryError(f"SMTP {exc.smtp_code}", permanent=permanent) from exc
        except (OSError, smtplib.SMTPException) as exc:
            raise DeliveryError(f"SMTP: {type(exc).__name__}: {exc}") from exc
        return str(mail["Message-ID"])

    def _connect(self) -> smtplib.SMTP:
        config = self.config
        if config.security == "tls":
            return smtplib.SMTP_SSL(
                config.host,
                config.port,
                timeout=config.timeout,
                context=ssl.create_default_context(),
            )
        return smtplib.SMTP(config.host, config.port, timeout=config.timeout)

    def settle(self, row: OutboxRow, request: Interaction) -> None:
        """A sent mail cannot change; its link's page shows how the request ended."""


def _codes(exc: smtplib.SMTPRecipientsRefused) -> str:
    return ", ".join(str(code) for code, _ in exc.recipients.values())

"""Typed server settings: explicit values over ``PAWFLOW_*`` environment over defaults."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from pawflow.durations import setting_duration, setting_seconds
from pawflow.errors import ConfigError, InvalidInput
from pawflow.store import DEFAULT_FILE_CAP, default_url

ENV_PREFIX = "PAWFLOW_"
MAY_BE_NONE = frozenset({"wait_for_db"})
OLD_NAMES = {"egress_allowed_hosts": "PAWFLOW_WEBHOOK_ALLOWED_HOSTS"}
"""Variables still read, under their former names, when the new one is not set."""
"""Durations that may be 0 (``0`` or ``0s``): none at all."""


@dataclass(frozen=True)
class ServerSettings:
    """Everything ``pawflow serve`` can be told.

    Durations (the ``float`` intervals, in seconds, and the ``timedelta`` ones) accept
    ``90s`` … ``1y`` or plain seconds, read by :func:`pawflow.durations.setting_duration`.
    """

    host: str = "127.0.0.1"
    port: int = 8765
    db: str = field(default_factory=default_url)
    """The store's URL; by default the SQLite file in the user's data folder."""
    db_timeout: float = 5.0
    """PostgreSQL: seconds a request waits for a database connection (and a connection for
    the server) before it fails with 503; while the server is known to be down, requests
    fail at once."""
    wait_for_db: float = 30.0
    """Seconds ``pawflow serve`` waits at start for the database to be reachable (0: not at
    all) before it gives up."""
    public_url: str | None = None
    """Where browsers reach the server (sign-in links, allowed ``Origin``); default host:port."""
    allowed_origins: tuple[str, ...] = ()
    admins: tuple[str, ...] = ()
    """Users who may manage groups and other users' delegations through the API."""
    secure_cookies: bool | None = None
    """Mark cookies ``Secure``; by default only when ``public_url`` is https."""
    local_user: str = "local"
    sweep_interval: float = 15.0
    max_body: int = 1024 * 1024
    max_upload: int = DEFAULT_FILE_CAP
    rate_limit: int = 600
    """Requests per user per minute (a token bucket)."""
    rate_burst: int = 120
    event_retention: timedelta = timedelta(days=7)
    settled_retention: timedelta = timedelta(days=30)
    """How long what is over is kept: a finished A2A task after its last update, a sent or
    given-up delivery (notification, webhook, A2A push) after it was written, and a request's
    notifications only once the request was settled this long ago."""
    keepalive: float = 15.0
    live_ttl: timedelta = timedelta(seconds=60)
    session_ttl: timedelta = timedelta(days=30)
    """A browser session's absolute timeout: it ends this long after sign-in, used or not."""
    session_idle: timedelta = timedelta(days=3)
    """A browser session's idle timeout: it ends once unused this long."""
    token_max_age: timedelta | None = timedelta(days=90)
    """The longest an API token may be valid, and how long a new one is unless told
    (``--expires``); ``never``: tokens may last forever, and do unless told."""
    signin_ttl: timedelta = timedelta(days=1)
    message_workers: int = 4
    auth_failure_limit: int = 30
    """Failed sign-ins and token guesses per client address per minute (a token bucket)."""
    auth_failure_burst: int = 30
    credential_check: float = 2.0
    """Seconds between an open stream's checks that its token or session is still valid."""
    max_header_bytes: int = 16 * 1024
    """The most a request's line and headers may take; more is a 431."""
    mcp_json_response: bool = False
    """Answer each ``/mcp`` POST of a handshake-era client with one JSON body instead of an
    event stream (``PAWFLOW_MCP_JSON_RESPONSE=on``, for proxies that cannot stream); the
    server then cannot ask during a call: a URL-mode question is the error -32042."""
    metrics: bool = False
    """Serve Prometheus metrics at ``/metrics`` (``PAWFLOW_METRICS=on``)."""
    metrics_token: str | None = None
    """If set, ``/metrics`` answers only ``Authorization: Bearer <metrics_token>``."""
    metrics_port: int | None = None
    """If set, the metrics are served on this port (same host) instead of the app's."""
    metrics_cache: float = 5.0
    """Seconds a scrape's reading of the store is reused by the next scrapes."""
    smtp_url: str | None = None
    """Where mail is sent (``smtp://user:pass@host:port``, ``smtps://…``, ``?starttls=true``);
    unset: no email channel."""
    mail_from: str | None = None
    """The sender of notification mail (``PAWFLOW_MAIL_FROM``)."""
    imap_url: str | None = None
    """A mailbox whose replies answer requests (``imap://user:pass@host:port/INBOX``)."""
    imap_interval: float = 30.0
    """Seconds between two readings of that mailbox."""
    slack_bot_token: str | None = None
    """The Slack app's bot token (``xoxb-…``); unset: no Slack channel."""
    slack_signing_secret: str | None = None
    """Verifies what Slack posts to ``/integrations/slack/interactions``; unset: that is a 404."""
    slack_api_url: str = "https://slack.com/api/"
    """Where Slack's Web API is reached."""
    push: bool = True
    """Web Push to the browsers and phones people subscribe (``PAWFLOW_PUSH=off``: none);
    its VAPID key pair is made on the first start and kept in the store."""
    push_subject: str | None = None
    """Whom push services may contact about this server's pushes (``mailto:`` or an https
    URL); by default ``mailto:`` the mail sender, else ``public_url`` when it is https."""
    outbox_interval: float = 2.0
    """Seconds between the dispatcher's passes over the outbox."""
    lease_ttl: float = 10.0
    """Seconds after its last renewal that a lease (a deployment, an agent, a turn, the
    outbox, the mailbox) runs out and passes to another server; renewed every third of it."""
    max_clock_skew: float = 2.0
    """Seconds this server's clock may be off the database's (PostgreSQL); beyond that it
    keeps the database's time and says so."""
    egress_allowed_hosts: str | None = None
    """Exceptions to the egress rule (:mod:`pawflow.egress`): hosts inside the network that
    webhooks, notification URLs and A2A pushes may call, as comma-separated names, addresses,
    networks, and schemes (``mailto://``) (``PAWFLOW_EGRESS_ALLOWED_HOSTS``; the older
    ``PAWFLOW_WEBHOOK_ALLOWED_HOSTS`` is read when it is not set)."""
    outbox_concurrency: int = 8
    """Deliveries in flight at once per channel (mail, Slack, Apprise, webhooks, pushes);
    one at most per destination."""
    delivery_timeout: float = 10.0
    """Seconds one delivery attempt may take in all: connect, send, and the whole answer."""
    max_webhooks: int = 10
    """Webhooks a user may have."""
    oidc_issuer: str | None = None
    """Single sign-on: the OpenID provider's issuer URL (its discovery document is
    ``ISSUER/.well-known/openid-configuration``); unset: no "Sign in with …" button."""
    oidc_client_id: str | None = None
    oidc_client_secret: str | None = None
    oidc_client_secret_file: str | None = None
    """A file holding the client secret (instead of ``oidc_client_secret``)."""
    oidc_name: str | None = None
    """The provider's name on the sign-in page ("Sign in with NAME"); default: its host."""
    oidc_scopes: tuple[str, ...] = ("openid", "email", "profile")
    oidc_user_claim: str = "email"
    """The ID token's claim a new user is named by (``email``, ``preferred_username``, …)."""
    oidc_email_claim: str = "email"
    oidc_groups_claim: str = "groups"
    """The claim listing the user's groups; the provider keeps those groups in step."""
    oidc_allowed_domains: tuple[str, ...] = ()
    """Email domains whose people may sign in (and are made users on their first sign-in)."""
    oidc_allowed_groups: tuple[str, ...] = ()
    """Provider groups whose members may sign in (and are made users on their first)."""
    oidc_admin_group: str | None = None
    """Members of this provider group are admins."""
    oidc_timeout: float = 5.0
    """Seconds a request to the provider may take."""
    log_format: str = "text"
    """``text`` or ``json`` (one JSON object per line, with the ids of the work at hand)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Settings of serve-time extensions, by name; this module does not read them."""

    def __post_init__(self) -> None:
        problems = []
        if not 0 <= self.port <= 65535:
            problems.append("port must be between 0 and 65535")
        for name in (
            "sweep_interval",
            "keepalive",
            "credential_check",
            "metrics_cache",
            "outbox_interval",
            "lease_ttl",
            "max_clock_skew",
            "imap_interval",
            "db_timeout",
            "delivery_timeout",
            "oidc_timeout",
        ):
            if getattr(self, name) <= 0:
                problems.append(f"{name} must be positive")
        if self.wait_for_db < 0:
            problems.append("wait_for_db must not be negative")
        for name in (
            "max_body",
            "max_upload",
            "rate_limit",
            "rate_burst",
            "message_workers",
            "auth_failure_limit",
            "auth_failure_burst",
            "max_header_bytes",
            "outbox_concurrency",
            "max_webhooks",
        ):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1")
        if self.lease_ttl <= 3 * self.max_clock_skew:
            # The last third of a lease, which its holder does not use, covers clocks that
            # disagree by up to max_clock_skew.
            problems.append("lease_ttl must be more than three times max_clock_skew")
        if self.log_format not in ("text", "json"):
            problems.append("log_format must be text or json")
        if self.metrics_port is not None and not 0 < self.metrics_port <= 65535:
            problems.append("metrics_port must be between 1 and 65535")
        if self.public_url is not None and urlsplit(self.public_url).scheme not in (
            "http",
            "https",
        ):
            problems.append("public_url must start with http:// or https://")
        if self.push_subject is not None and not self.push_subject.startswith(
            ("mailto:", "https://")
        ):
            problems.append("push_subject must start with mailto: or https://")
        if self.oidc_issuer is not None and urlsplit(self.oidc_issuer).scheme not in (
            "http",
            "https",
        ):
            problems.append("oidc_issuer must start with https:// (or http:// on loopback)")
        if problems:
            raise ConfigError("invalid server settings: " + "; ".join(problems))

    @property
    def base_url(self) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def cookies_secure(self) -> bool:
        if self.secure_cookies is not None:
            return self.secure_cookies
        return self.base_url.startswith("https://")

    def channels_off(self) -> dict[str, str | None]:
        """Each channel a user may name in ``notify``, and why this server cannot send it
        (None: it can): ``{"email": "no PAWFLOW_SMTP_URL", "slack": None, …}``."""
        return {
            "email": None if self.smtp_url else "no PAWFLOW_SMTP_URL",
            "slack": None if self.slack_bot_token else "no PAWFLOW_SLACK_BOT_TOKEN",
            "webhook": None,
            "apprise": None,
            "push": None if self.push else "PAWFLOW_PUSH=off",
        }

    def origins(self) -> frozenset[str]:
        """Origins trusted besides the request's own (``public_url`` and the configured)."""
        found = {origin_of(self.base_url)}
        found.update(origin_of(o) for o in self.allowed_origins)
        return frozenset(found)

    def replace(self, **changes: Any) -> ServerSettings:
        """A copy with ``changes``, read as the environment would be (``"1d"``, ``"8765"``)."""
        known = {f.name: f for f in fields(self)}
        unknown = sorted(set(changes) - set(known))
        if unknown:
            raise ConfigError(f"unknown server setting(s): {', '.join(unknown)}")
        converted = {
            name: value
            if value is None or name == "extra"
            else _convert(name, known[name].type, value)
            for name, value in changes.items()
        }
        return dataclasses.replace(self, **converted)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **explicit: Any) -> ServerSettings:
        """Settings from ``explicit`` values, then ``PAWFLOW_<NAME>`` variables, then defaults.

        An explicit key that is not a setting fails loudly; ``None`` means "not given".
        """
        env = os.environ if env is None else env
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(explicit) - set(known))
        if unknown:
            raise ConfigError(f"unknown server setting(s): {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for name, spec in known.items():
            if name == "extra":
                continue
            if explicit.get(name) is not None:
                raw: Any = explicit[name]
            elif ENV_PREFIX + name.upper() in env:
                raw = env[ENV_PREFIX + name.upper()]
            elif name in OLD_NAMES and OLD_NAMES[name] in env:
                raw = env[OLD_NAMES[name]]
            else:
                continue
            values[name] = _convert(name, spec.type, raw)
        if explicit.get("extra") is not None:
            values["extra"] = dict(explicit["extra"])
        return cls(**values)


def _convert(name: str, annotation: Any, raw: Any) -> Any:
    kind = str(annotation)
    try:
        if "timedelta" in kind:
            if "None" in kind and str(raw).strip().lower() in ("never", "0", "0s", "off", ""):
                return None
            return setting_duration(raw)
        if "tuple" in kind:
            if isinstance(raw, str):
                return tuple(part.strip() for part in raw.split(",") if part.strip())
            return tuple(raw)
        if "bool" in kind:
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            if text in ("", "auto") and "None" in kind:
                return None
            raise ValueError(f"expected true or false, got {raw!r}")
        if kind == "int" or (kind == "int | None" and raw != ""):
            return int(raw)
        if kind == "float":  # every float setting is an interval in seconds
            if name in MAY_BE_NONE and str(raw).strip() in ("0", "0s"):
                return 0.0
            return setting_seconds(raw)
        return None if raw == "" and "None" in kind else str(raw)
    except (TypeError, ValueError, InvalidInput) as exc:
        raise ConfigError(f"invalid value for setting {name}: {exc}") from exc


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower-cased, default ports left out."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:  # an untrusted Origin header may be anything
        return ""
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if not scheme or not host:
        return ""
    if ":" in host:
        host = f"[{host}]"
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"

"""Keeping secrets out of what PawFlow stores and logs.

The process remembers every secret it is configured with: model API keys, the tokens its
clients use, the passwords of URLs it was given (a database, a mail server), the headers
and secret-named environment variables of the MCP servers its agents launch, and the
values of its own secret-named environment variables (``…_KEY``, ``…_TOKEN``,
``…_PASSWORD``, …). :func:`redact` replaces each of them in a text with ``***``, and masks
what looks like a secret even when it was never configured: the password of any
``scheme://user:password@host``, a ``Bearer`` credential, a PawFlow API token, an answer
link's secret, and the value of a secret-named query parameter (``token=``,
``access_token=``, ``api_key=``, ``password=``, ``jwt=``, ``otp=``, …, and OAuth's
``code=``, ``state=`` and ``code_verifier=``).

Model errors and tool outputs pass through it before they are stored, so an endpoint that
echoes its key in an error never gets it into a chat message, an event or a database row;
every log line passes through :class:`RedactingFilter`.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

MASK = "***"
MIN_SECRET = 8
"""Shorter values are not remembered: masking every "admin" or "1234" would garble text."""

SECRET_NAME = re.compile(
    r"(?i)(token|secret|passw(or)?d|pwd|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|credential|auth|session|signature|_key$|^key$)"
)
"""Names (of variables, headers, parameters) whose values are secrets."""

_QUERY = re.compile(
    r"(?i)([?&;](?:[a-z0-9_.\-\[\]]*?(?:token|secret|session|passw(?:or)?d|pwd|api[_-]?key"
    r"|apikey|access[_-]?key|private[_-]?key|credential|auth|signature|sig|key|jwt|code|state"
    r"|verifier|otp|ticket|assertion|samlresponse))=)[^&#\s\"']*"
)
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@\"']*:)[^@\s/\"']+(@)")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{8,}")
_PAWFLOW_TOKEN = re.compile(r"\bpfa?_[A-Za-z0-9_\-]{20,}")
"""A PawFlow API token (``pf_…``) or an answer link's secret (``pfa_…``)."""


class _Secrets:
    def __init__(self) -> None:
        self._known: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def add(self, value: str) -> None:
        with self._lock:
            if value not in self._known:
                self._known.add(value)
                self._pattern = None

    def pattern(self) -> re.Pattern[str] | None:
        with self._lock:
            if self._pattern is None and self._known:
                # Longest first: a secret that contains another is masked whole.
                ordered = sorted(self._known, key=len, reverse=True)
                self._pattern = re.compile("|".join(re.escape(s) for s in ordered))
            return self._pattern


_SECRETS = _Secrets()


def remember(secret: str | None) -> None:
    """Mask ``secret`` from now on wherever :func:`redact` looks (ignored if too short)."""
    if secret is None:
        return
    secret = secret.strip()
    if len(secret) < MIN_SECRET:
        return
    _SECRETS.add(secret)
    bearer = _BEARER.fullmatch(secret)
    if bearer is not None:  # "Bearer abc…": the credential alone may show up too
        remember(secret[bearer.end(1) :])


def remember_url(url: str | None) -> None:
    """Remember the password of ``url`` (``postgresql://user:password@host/db``), if any."""
    if not url or "@" not in url:
        return
    try:
        password = urlsplit(url.strip()).password
    except ValueError:
        return
    if password:
        remember(password)
        remember(unquote(password))


def remember_settings(values: Mapping[str, str]) -> None:
    """Remember the values of secret-named entries (``API_KEY``, ``Authorization``, …)
    and the passwords of every URL among the values."""
    for name, value in values.items():
        if not isinstance(value, str):
            continue
        if SECRET_NAME.search(name):
            remember(value)
        remember_url(value)


def redact(text: str) -> str:
    """``text`` with every remembered secret, and whatever looks like one, masked."""
    if not text:
        return text
    pattern = _SECRETS.pattern()
    if pattern is not None:
        text = pattern.sub(MASK, text)
    text = _URL_PASSWORD.sub(rf"\1{MASK}\2", text)
    text = _QUERY.sub(rf"\1{MASK}", text)
    text = _BEARER.sub(rf"\1{MASK}", text)
    return _PAWFLOW_TOKEN.sub(MASK, text)


class RedactingFilter(logging.Filter):
    """Masks secrets in a log record: its message, its arguments and its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redact_arg(arg) for arg in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {key: _redact_arg(arg) for key, arg in record.args.items()}
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def _redact_arg(arg: object) -> object:
    if isinstance(arg, str):
        return redact(arg)
    if isinstance(arg, int | float | bool) or arg is None:
        return arg
    # An exception, a URL object, …: logged as its text, so masked as its text.
    return redact(str(arg))


UVICORN = ("uvicorn", "uvicorn.access", "uvicorn.error")


def redact_logs() -> None:
    """Mask secrets in every log line: a filter on each handler of the root logger (where
    PawFlow's and its libraries' records end up) and of uvicorn's loggers, and on uvicorn's
    loggers themselves (their records do not go on to the root). Call it again after
    logging is reconfigured; nothing is installed twice."""
    places: list[logging.Filterer] = [logging.getLogger(name) for name in UVICORN]
    for name in ("", *UVICORN):
        places.extend(logging.getLogger(name).handlers)
    for place in places:
        if not any(isinstance(f, RedactingFilter) for f in place.filters):
            place.addFilter(RedactingFilter())
    hosts_only_in_http_logs()


class HostOnlyFilter(logging.Filter):
    """HTTP clients' lines about a request they made name its host only, never its path or
    query: webhook URLs (Slack's, Discord's, …) carry their secret in the path. httpx says
    ``HTTP Request: POST https://host/path …`` at INFO, urllib3 (under Apprise) the path
    at DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not isinstance(args, tuple) or not isinstance(record.msg, str):
            return True
        if record.name == "httpx" and record.msg.startswith("HTTP Request:") and len(args) > 1:
            record.args = (args[0], _origin(str(args[1])), *args[2:])
        elif record.name == "urllib3.connectionpool" and record.msg.startswith(_URLLIB3_LINE):
            record.args = (*args[:4], "/…", *args[5:])
        return True


_URLLIB3_LINE = '%s://%s:%s "%s %s %s"'
HTTP_CLIENT_LOGGERS = ("httpx", "urllib3.connectionpool")


def _origin(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}" if parts.scheme and host else MASK


def hosts_only_in_http_logs() -> None:
    """Install :class:`HostOnlyFilter` on the HTTP clients' loggers (once)."""
    for name in HTTP_CLIENT_LOGGERS:
        place = logging.getLogger(name)
        if not any(isinstance(f, HostOnlyFilter) for f in place.filters):
            place.addFilter(HostOnlyFilter())

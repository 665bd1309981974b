"""The one error tree of PawFlow.

Every failure a caller can see is one of these, and every one is exported from ``pawflow``;
backend errors (``sqlite3``, ``psycopg``) are translated at the store boundary and never
escape raw::

    PawFlowError
    ├── InvalidInput                bad input, with field-level ``errors``
    │   ├── InvalidAnswer           an answer that fails its request's schema
    │   ├── InvalidDuration         a duration or deadline that cannot be read
    │   ├── PayloadTooLarge         a payload over the configured cap
    │   ├── ConfigError             a setting or a configuration that cannot be used
    │   │   └── MissingExtra        a part whose extra is not installed (also an ImportError)
    │   ├── FlowDefinitionError     a flow definition that cannot run
    │   ├── ExpressionError         a ``${…}`` expression or JSON path that cannot be read
    │   ├── UndecodableCheckpoint   a checkpoint this version cannot resume
    │   ├── InvalidPattern          a ``pattern`` the linear-time engine refuses
    │   ├── HopLimitReached         a one-shot flow run that loops without end
    │   └── EgressRefused           an outbound address the egress rule refuses
    ├── NotFound                    unknown id, or one the caller may not see
    ├── Forbidden                   seen, but waits for others (``waiting_for``)
    ├── Conflict                    the state forbids the change
    │   ├── NotPending              the request already left ``pending`` (``status``)
    │   ├── AlreadyVoted            a vote for that person stands already (``vote``)
    │   └── LeaseLost               another process has taken this process's work over
    ├── StoreError                  the store failed (translated backend error)
    │   ├── StoreUnavailable        the database cannot be reached or stays busy
    │   └── MigrationError          an upgrade check failed (``check``); nothing changed
    ├── Undeliverable               a handler cannot take a continuation now; retried later
    │   └── QueueFull               a flow's queue has no room; offered again as it drains
    ├── DeliveryError               a channel could not send a notification (``permanent``)
    ├── ModelError                  a model provider failed (``retryable``, ``status``)
    ├── Halt                        governance stopped an agent's run (``reason``)
    ├── TaskFailed                  a flow task could not process a FlowFile
    ├── ApiError                    the HTTP API refused a client's request (``status``)
    │   └── TokenRefused            the server does not accept the client's API token
    ├── ServerUnreachable           the client got no answer from the server at all
    ├── SignInProblem               single sign-on refused someone, or cannot work (``setting``)
    └── HTTPProblem                 the HTTP layer refused a request (``status_code``)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pawflow.redaction import redact

HTTP_MESSAGES = {
    400: "bad request",
    401: "authentication required",
    403: "forbidden",
    404: "not found",
    405: "method not allowed",
    413: "request body too large",
    429: "too many requests",
    500: "internal server error",
    503: "service unavailable, try again shortly",
}
"""What an HTTP status says when nothing more precise is known."""


@dataclass(frozen=True)
class FieldError:
    """One problem with one place in an input: ``path`` is ``""`` for the whole value."""

    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class PawFlowError(Exception):
    """Base of every error PawFlow raises on purpose."""


class InvalidInput(PawFlowError):
    """The input is malformed or violates a constraint."""

    def __init__(self, message: str, errors: list[FieldError] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors: list[FieldError] = errors if errors is not None else [FieldError("", message)]


class InvalidAnswer(InvalidInput):
    """An answer does not satisfy its request's kind or ``response_schema``."""


class InvalidDuration(InvalidInput):
    """A duration or an absolute deadline that cannot be read."""


class PayloadTooLarge(InvalidInput):
    """A parked payload, checkpoint or upload exceeds its cap."""


class ConfigError(InvalidInput):
    """A setting or a configuration (plugins, pipeline stages, intervals) that cannot be used."""


class MissingExtra(ConfigError, ImportError):
    """A part of PawFlow whose optional dependencies are not installed: the message names
    the extra to install (``pip install 'pawflow[server]'``). Raised where the part is
    imported (:mod:`pawflow.extras`), so it is an :class:`ImportError` too."""

    def __init__(self, extra: str, part: str, missing: Sequence[str]) -> None:
        self.extra = extra
        self.part = part
        self.missing = list(missing)
        named = ", ".join(self.missing[:3]) + (", …" if len(self.missing) > 3 else "")
        super().__init__(
            f"{part} needs the {extra!r} extra ({named} not installed):"
            f" pip install 'pawflow[{extra}]'"
        )


class FlowDefinitionError(InvalidInput):
    """A flow definition that cannot run; ``errors`` names each problem's place."""

    def __str__(self) -> str:
        lines = [self.message]
        lines += [
            f"  {e.path}: {e.message}" if e.path else f"  {e.message}"
            for e in self.errors
            if e.path or e.message not in self.message
        ]
        return "\n".join(lines)


class ExpressionError(InvalidInput):
    """A ``${…}`` expression or a JSON path that cannot be read."""


class UndecodableCheckpoint(InvalidInput):
    """A checkpoint whose payload is not a run this version can resume."""


class InvalidPattern(InvalidInput):
    """A ``pattern`` RE2 cannot (or will not) compile; the message says why, briefly."""


class HopLimitReached(InvalidInput):
    """A FlowFile passed more tasks than a one-shot run allows: the flow loops without end."""


class EgressRefused(InvalidInput):
    """An outbound call a user aimed at an address the egress rule refuses (inward, or not
    to be judged); the message says why (see :mod:`pawflow.egress`)."""

    def on(self, field: str) -> InvalidInput:
        """The same refusal as bad input in ``field`` (a 422 naming it)."""
        return InvalidInput(f"{field} {self.message}", [FieldError(field, self.message)])


class NotFound(PawFlowError):
    """Nothing with that id exists for this caller.

    Unknown ids and ids the caller may not see raise the same error with the same message,
    so that it never tells whether something exists.
    """

    def __init__(self, what: str = "interaction") -> None:
        super().__init__(f"{what} not found")
        self.what = what


class Forbidden(PawFlowError):
    """The caller may see the request but not answer it: it waits for ``waiting_for``
    (users and ``group:NAME`` entries), or someone else is handling it."""

    def __init__(self, message: str, waiting_for: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.waiting_for = list(waiting_for)


class Conflict(PawFlowError):
    """The current state does not allow the change."""


class NotPending(Conflict):
    """The interaction already left ``pending``; ``status`` says how."""

    def __init__(self, status: str) -> None:
        super().__init__(f"interaction is no longer pending: it is {status}")
        self.status = status


class AlreadyVoted(Conflict):
    """A quorum's vote for this person was cast already (by them or a delegate): nothing
    changed. ``vote`` is the one that stands: ``voter`` (whom it counts for), ``by`` (the
    account that cast it), ``vote`` and ``via``."""

    def __init__(self, vote: Mapping[str, Any]) -> None:
        self.vote = dict(vote)
        voter, by = self.vote.get("voter"), self.vote.get("by")
        said = "yes" if self.vote.get("vote") is True else "no"
        cast = "" if by in (None, voter) else f" (cast by {by})"
        self.message = f"{voter} has already voted {said}{cast}: the vote stands"
        super().__init__(self.message)


class LeaseLost(Conflict):
    """This process no longer owns the work: another one has taken it over."""


class StoreError(PawFlowError):
    """The store failed; the underlying backend error is the ``__cause__``."""


class StoreUnavailable(StoreError):
    """The database cannot be reached, or stayed busy past the configured timeout."""


class MigrationError(StoreError):
    """A schema upgrade was refused; ``check`` names the verification that failed."""

    def __init__(self, check: str, detail: str) -> None:
        super().__init__(f"migration check failed: {check}: {detail}")
        self.check = check
        self.detail = detail


class Undeliverable(PawFlowError):
    """A delivery handler cannot take a continuation now; it stays resolved and is retried."""


class QueueFull(Undeliverable):
    """Backpressure: a flow's queue has no room now. A continuation refused so is not a
    failure: it waits, with no backoff, until that queue drains and asks for it again."""


class DeliveryError(PawFlowError):
    """A channel could not send or update a notification: retried with backoff unless
    ``permanent`` (a retry cannot help)."""

    def __init__(self, reason: str, *, permanent: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent


class ModelError(PawFlowError):
    """A model provider failed: unreachable, timed out, refused the request, or spoke nonsense.

    ``retryable`` says whether trying again could help (timeouts, 5xx); ``status`` is the HTTP
    status when there was one. The message is redacted (:mod:`pawflow.redaction`): a
    provider that quotes the key it was sent gets it into no reply, log or row.
    """

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        message = redact(message)
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status


class Halt(PawFlowError):
    """The governance gate refuses a call; ``reason`` is one of the halt reasons."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class TaskFailed(PawFlowError):
    """A task could not process a FlowFile; it leaves by ``failure`` with this reason."""


class ApiError(PawFlowError):
    """The server refused a request for a reason outside the store's errors (401, 429, …)."""

    def __init__(
        self, status: int, message: str, body: Any = None, *, retry_after: int | None = None
    ) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.body = body
        self.retry_after = retry_after


class TokenRefused(ApiError):
    """The server does not accept the client's API token (a 401: mistyped, revoked, expired,
    its user disabled, or made on another server's store).

    Its message is the one every command, the terminal app and the MCP server give: which
    server refused, where the token was read from (``source``: ``PAWFLOW_TOKEN``,
    ``--token``, a file) and how to get one that works.
    """

    def __init__(self, server: str, source: str | None, reason: str, body: Any = None) -> None:
        if source is None:
            where, fix = "", "use it"
        elif source == "--token":
            where, fix = " given with --token", "pass it with --token"
        else:
            where, fix = f" in {source}", f"put it in {source}"
        if " expired on " in reason:  # the server names the token: tok_… expired on …
            make = "Make its successor with `pawflow users token rotate ID`"
        elif reason.endswith(" is disabled"):
            make = "Ask an admin to enable the user (`pawflow users enable NAME`) or make a token"
        else:
            make = "Make a token with `pawflow users add NAME`"
        message = (
            f"{server} does not accept the token{where} ({reason}). {make} where the"
            f" server's store is, and {fix}; a browser signs in with a link from"
            " `pawflow users signin-link NAME`."
        )
        super().__init__(401, message, body)
        self.server = server
        self.source = source
        self.reason = reason


class ServerUnreachable(PawFlowError):
    """No answer from the server at all (refused, timed out, name unknown)."""


class SignInProblem(PawFlowError):
    """Single sign-on cannot go on: ``reason`` is shown to the person; ``setting`` names what
    an operator should check; ``status`` is 403 for someone refused, 5xx for a provider that
    is down or misconfigured."""

    def __init__(self, reason: str, *, setting: str | None = None, status: int = 403) -> None:
        super().__init__(reason)
        self.reason = reason
        self.setting = setting
        self.status = status


class HTTPProblem(PawFlowError):
    """A refusal of the HTTP layer itself (authentication, CSRF, limits, unreadable body).

    ``message`` defaults to the status's usual words (the server fills them in).
    """

    def __init__(
        self,
        status_code: int,
        message: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        errors: Sequence[FieldError] | None = None,
    ) -> None:
        self.status_code = status_code
        self.message = message or HTTP_MESSAGES.get(status_code, "error")
        self.headers = dict(headers or {})
        self.errors = list(errors) if errors is not None else None
        super().__init__(self.message)

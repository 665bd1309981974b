"""The one error tree of PawFlow.

Every failure a caller can see is one of these; backend errors (``sqlite3``,
``psycopg``) are translated at the store boundary and never escape raw::

    PawFlowError
    ├── InvalidInput            bad input, with field-level ``errors``
    │   ├── InvalidAnswer       an answer that fails its request's schema
    │   ├── InvalidDuration     a duration or deadline that cannot be read
    │   └── PayloadTooLarge     a payload over the configured cap
    ├── NotFound                unknown id, or one the caller may not see
    ├── Conflict                the state forbids the change
    │   └── NotPending          the request already left ``pending`` (``status``)
    ├── StoreError              the store failed (translated backend error)
    │   ├── StoreUnavailable    the database cannot be reached or stays busy
    │   └── MigrationError      an upgrade check failed (``check``); nothing changed
    ├── Undeliverable           a handler cannot take a continuation now; retried later
    └── ModelError              a model provider failed (``retryable``, ``status``)
"""

from __future__ import annotations

from dataclasses import dataclass


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


class NotFound(PawFlowError):
    """Nothing with that id exists for this caller.

    Unknown ids and ids the caller may not see raise the same error with the same message,
    so that it never tells whether something exists.
    """

    def __init__(self, what: str = "interaction") -> None:
        super().__init__(f"{what} not found")
        self.what = what


class Conflict(PawFlowError):
    """The current state does not allow the change."""


class NotPending(Conflict):
    """The interaction already left ``pending``; ``status`` says how."""

    def __init__(self, status: str) -> None:
        super().__init__(f"interaction is no longer pending: it is {status}")
        self.status = status


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


class ModelError(PawFlowError):
    """A model provider failed: unreachable, timed out, refused the request, or spoke nonsense.

    ``retryable`` says whether trying again could help (timeouts, 5xx); ``status`` is the HTTP
    status when there was one.
    """

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status

"""What the MCP tools need from PawFlow, for one user: the backend protocol.

Two implementations: :mod:`pawflow.mcp.remote` speaks to a server through its HTTP API
(``pawflow mcp`` over stdio), :mod:`pawflow.mcp.local` calls the store of the server it
is mounted in (``/mcp``). Both give the same errors the store raises (``NotFound``,
``NotPending``, ``InvalidInput`` with field errors), so the tools treat them alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pawflow.records import FileRef, Interaction

DEFAULT_CONVERSATION = "MCP"
"""Title of the conversation questions go to when a tool call names none."""


class Backend(Protocol):
    """One user's view of PawFlow. Every method may block on I/O: all are async."""

    @property
    def user(self) -> str: ...

    async def default_conversation(self) -> str:
        """The id of the user's conversation for questions that name none (made if new)."""
        ...

    async def request(
        self, conversation_id: str, kind: str, message: str, **optional: Any
    ) -> Interaction: ...

    async def get(self, request_id: str) -> Interaction: ...

    async def page(
        self,
        *,
        status: str | None,
        conversation_id: str | None,
        kind: str | None,
        limit: int,
        cursor: str | None,
    ) -> tuple[list[Interaction], str | None]: ...

    async def inbox(self) -> list[Interaction]:
        """The pending requests the caller may answer now ("waiting for me"), soonest due
        first: theirs without assignees, assigned to them or their groups, claimed by them."""
        ...

    async def respond(self, request_id: str, answer: Any, *, via: str = "mcp") -> Interaction:
        """Answer a request; ``via`` is where the answer was given (``mcp-app``: the app)."""
        ...

    async def details(self, request_id: str) -> dict[str, Any]:
        """The request with its policy and audit trail: ``get_interaction``'s JSON result."""
        ...

    async def claim(self, request_id: str, *, release: bool, via: str) -> dict[str, Any]:
        """Claim (or release) a request: ``claim_interaction``'s JSON result."""
        ...

    async def upload(
        self,
        request_id: str,
        field: str | None,
        name: str,
        media_type: str | None,
        content: bytes,
    ) -> FileRef:
        """Keep a file for a request's file answer, checked as ``POST /api/files`` checks it."""
        ...

    async def cancel(self, request_id: str) -> Interaction: ...

    async def wait(self, request_id: str, seconds: float) -> Interaction:
        """The request once it is no longer pending, or as it is after ``seconds``."""
        ...

    async def watch(self, on_change: Callable[[], Awaitable[None]]) -> None:
        """Call ``on_change`` whenever the user's requests may have changed, until cancelled:
        once as soon as it listens (for what changed before it did), then on every change."""
        ...

    async def record_round(self, round_id: str, request_id: str, action: str) -> bool:
        """Record the client's reply (accept, decline, cancel) to elicitation round
        ``round_id`` of a request; False when that round was already used."""
        ...

    def answer_url(self, record: Interaction) -> str:
        """Where the person answers ``record`` in the web chat."""
        ...


def chat_url(base_url: str, conversation_id: str) -> str:
    """The web chat's page of a conversation (its inline blocks answer its requests)."""
    return f"{base_url.rstrip('/')}/?c={conversation_id}"

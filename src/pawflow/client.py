"""An HTTP client of the PawFlow server, for terminals, editors and scripts.

Failures come back as the same errors the store raises (``NotFound``, ``NotPending``,
``InvalidInput`` with its field errors, ``PayloadTooLarge``); a token the server does not
accept is a :class:`~pawflow.errors.TokenRefused` saying where the token was read from and
how to get one; anything else the server refuses is an :class:`ApiError` carrying the status.
"""

from __future__ import annotations

import json
import mimetypes
import os
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx

from pawflow.errors import (
    AlreadyVoted,
    Conflict,
    FieldError,
    Forbidden,
    InvalidInput,
    NotFound,
    NotPending,
    PawFlowError,
    PayloadTooLarge,
    TokenRefused,
)
from pawflow.errors import (
    ApiError as ApiError,
)
from pawflow.errors import (
    ServerUnreachable as ServerUnreachable,
)
from pawflow.records import ClientChannel, Conversation, FileRef, Interaction, Message
from pawflow.redaction import remember

DEFAULT_SERVER = "http://127.0.0.1:8765"
SERVER_ENV = "PAWFLOW_SERVER"
TOKEN_ENV = "PAWFLOW_TOKEN"

# An idle connection is let go of well before the server would close it (pawflow serve: 5 s,
# running.KEEP_ALIVE_SECONDS): a request sent just as the server closes its end would be cut.
IDLE_CONNECTION_SECONDS = 2.0


@dataclass(frozen=True)
class ServerEvent:
    """One server-sent event: ``id`` is its position in the user's log."""

    id: int | None
    type: str
    data: Any


def _error_for(response: httpx.Response, refused: Callable[[str], PawFlowError]) -> PawFlowError:
    """The error for a refused request; a 401 is ``refused(the server's reason)``."""
    try:
        body = response.json()
    except ValueError:
        body = None
    message = body.get("error") if isinstance(body, dict) else None
    message = str(message or response.reason_phrase or "error")
    status = response.status_code
    if status == 401:
        return refused(message)
    if status == 404 and message.endswith(" not found"):
        return NotFound(message.removesuffix(" not found"))
    if status == 409 and isinstance(body, dict) and isinstance(body.get("status"), str):
        return NotPending(body["status"])
    if status == 409 and isinstance(body, dict) and isinstance(body.get("vote"), dict):
        return AlreadyVoted(body["vote"])
    if status == 409:
        return Conflict(message)
    if status == 403 and isinstance(body, dict) and isinstance(body.get("waiting_for"), list):
        return Forbidden(message, [str(entry) for entry in body["waiting_for"]])
    if status in (413, 422):
        raw = body.get("errors") if isinstance(body, dict) else None
        errors = [
            FieldError(str(e.get("path", "")), str(e.get("message", "")))
            for e in (raw or [])
            if isinstance(e, dict)
        ] or None
        return (PayloadTooLarge if status == 413 else InvalidInput)(message, errors)
    retry = response.headers.get("retry-after")
    return ApiError(
        status, message, body, retry_after=int(retry) if retry and retry.isdigit() else None
    )


class Client:
    """``Client(server, token)``; or ``Client.from_env()`` for PAWFLOW_SERVER/PAWFLOW_TOKEN.

    ``token_source`` names where the token was read from (``PAWFLOW_TOKEN``, a file), for the
    message of a :class:`~pawflow.errors.TokenRefused`.
    """

    def __init__(
        self,
        server: str = DEFAULT_SERVER,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        token_source: str | None = None,
    ) -> None:
        remember(token)  # masked in whatever this process logs
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.server = server.rstrip("/")
        self.token_source = token_source
        # A plain-HTTP server (the loopback default) needs no certificate store: the client
        # requests only paths under ``server`` and follows no redirect, so loading the store
        # would only slow every command's start.
        plain = self.server.lower().startswith("http://")
        self.http = httpx.Client(
            base_url=self.server,
            headers=headers,
            timeout=timeout,
            limits=httpx.Limits(
                max_connections=100,
                max_keepalive_connections=20,
                keepalive_expiry=IDLE_CONNECTION_SECONDS,
            ),
            transport=transport,
            verify=not plain,
        )

    @classmethod
    def from_env(cls, server: str | None = None, token: str | None = None) -> Client:
        return cls(
            server or os.environ.get(SERVER_ENV) or DEFAULT_SERVER,
            token or os.environ.get(TOKEN_ENV),
            token_source=None if token else TOKEN_ENV,
        )

    def _error(self, response: httpx.Response) -> PawFlowError:
        def refused(reason: str) -> PawFlowError:
            if "authorization" not in self.http.headers:  # no token was sent at all
                return ApiError(401, reason)
            return TokenRefused(self.server, self.token_source, reason)

        return _error_for(response, refused)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return self.http.request(method, url, **kwargs)
        except httpx.TransportError as exc:
            raise ServerUnreachable(f"cannot reach {self.server}: {exc}") from exc

    # -- the action API ---------------------------------------------------------------------

    def action(self, name: str, /, **body: Any) -> dict[str, Any]:
        """Call ``POST /api/actions/{name}``; fields given as None are left out."""
        payload = {key: value for key, value in body.items() if value is not None}
        response = self._send("POST", f"/api/actions/{name}", json=payload)
        if not response.is_success:
            raise self._error(response)
        result: dict[str, Any] = response.json()
        return result

    def whoami(self) -> str:
        response = self._send("GET", "/api/session")
        if not response.is_success:
            raise self._error(response)
        return str(response.json()["user"])

    def request_interaction(
        self, conversation_id: str, kind: str, message: str, **optional: Any
    ) -> Interaction:
        """``optional``: options, title, response_schema, expires_in, expires_at, ui_surface,
        idempotency_key, notify (the channels to notify; ``[]``: none)."""
        found = self.action(
            "request_interaction",
            conversation_id=conversation_id,
            kind=kind,
            message=message,
            **optional,
        )
        return Interaction.model_validate(found["interaction"])

    def get_interaction(self, request_id: str) -> Interaction:
        found = self.action("get_interaction", request_id=request_id)
        return Interaction.model_validate(found["interaction"])

    def list_interactions(
        self,
        *,
        status: str | None = None,
        conversation_id: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> tuple[list[Interaction], str | None]:
        page = self.action(
            "list_interactions",
            status=status,
            conversation_id=conversation_id,
            kind=kind,
            limit=limit,
            cursor=cursor,
        )
        items = [Interaction.model_validate(item) for item in page["interactions"]]
        return items, page["next_cursor"]

    def list_inbox(self, which: str = "all") -> list[tuple[Interaction, str]]:
        """The pending requests the caller may answer now, soonest due first, each with why:
        ``own``, ``mine``, ``groups`` or ``claimed`` (``which`` keeps some of them; ``others``
        and ``visible`` add those that wait for someone else: see :meth:`list_waiting`)."""
        return [(record, why) for record, why, _ in self.list_waiting(which)]

    def list_waiting(self, which: str = "visible") -> list[tuple[Interaction, str, list[str]]]:
        """Like :meth:`list_inbox`, each with whom it waits for (``why == "others"``)."""
        found = self.action("list_inbox", filter=which)
        return [
            (
                Interaction.model_validate(item["interaction"]),
                str(item["why"]),
                [str(name) for name in item.get("waiting_for") or []],
            )
            for item in found["items"]
        ]

    def respond_each(
        self, request_ids: list[str], answer: Any, *, via: str = "api"
    ) -> tuple[list[Interaction], list[dict[str, Any]]]:
        """Give ``answer`` to each of several requests of one kind, each on its own: those
        answered, and those refused (``request_id``, ``status``, ``error``)."""
        found = self.action(
            "respond_each", request_ids=request_ids, answer=answer, answered_via=via
        )
        answered = [Interaction.model_validate(item) for item in found["answered"]]
        return answered, list(found["refused"])

    def iter_interactions(self, **filters: Any) -> Iterator[Interaction]:
        """Every matching interaction, page after page."""
        cursor = None
        while True:
            items, cursor = self.list_interactions(cursor=cursor, **filters)
            yield from items
            if cursor is None:
                return

    def respond_interaction(
        self, request_id: str, answer: Any, *, via: ClientChannel = "api"
    ) -> Interaction:
        """Answer a request; ``via`` says where (a block's ``button``, the ``cli``, ``api``)."""
        found = self.action(
            "respond_interaction", request_id=request_id, answer=answer, answered_via=via
        )
        return Interaction.model_validate(found["interaction"])

    def cancel_interaction(self, request_id: str) -> Interaction:
        found = self.action("cancel_interaction", request_id=request_id)
        return Interaction.model_validate(found["interaction"])

    def create_conversation(self, title: str = "") -> Conversation:
        found = self.action("create_conversation", title=title)
        return Conversation.model_validate(found["conversation"])

    def list_conversations(self) -> list[Conversation]:
        found = self.action("list_conversations")
        return [Conversation.model_validate(c) for c in found["conversations"]]

    def get_history(
        self, conversation_id: str, *, after_seq: int = 0, limit: int = 500
    ) -> list[Message]:
        found = self.action(
            "get_history", conversation_id=conversation_id, after_seq=after_seq, limit=limit
        )
        return [Message.model_validate(m) for m in found["messages"]]

    def send_message(self, conversation_id: str, content: str) -> Message:
        found = self.action("send_message", conversation_id=conversation_id, content=content)
        return Message.model_validate(found["message"])

    def share_conversation(
        self, conversation_id: str, user: str, access: Literal["read", "write"]
    ) -> Conversation:
        """Invite ``user``, who joins with :meth:`accept_invitation` (docs/security.md)."""
        found = self.action(
            "share_conversation", conversation_id=conversation_id, user=user, access=access
        )
        return Conversation.model_validate(found["conversation"])

    def list_invitations(self) -> list[dict[str, Any]]:
        """The conversations offered to the caller, not yet accepted or declined."""
        invitations: list[dict[str, Any]] = self.action("list_invitations")["invitations"]
        return invitations

    def accept_invitation(self, conversation_id: str) -> Conversation:
        found = self.action("accept_invitation", conversation_id=conversation_id)
        return Conversation.model_validate(found["conversation"])

    def decline_invitation(self, conversation_id: str) -> None:
        response = self._send(
            "POST", "/api/actions/decline_invitation", json={"conversation_id": conversation_id}
        )
        if not response.is_success:
            raise self._error(response)

    # -- uploads ----------------------------------------------------------------------------

    def upload(
        self,
        source: str | Path | bytes,
        *,
        name: str | None = None,
        media_type: str | None = None,
        request_id: str | None = None,
        field: str | None = None,
    ) -> FileRef:
        """Upload a file (a path, or bytes with a ``name``), optionally for a request."""
        if isinstance(source, bytes):
            content, filename = source, name or "upload"
        else:
            path = Path(source)
            content, filename = path.read_bytes(), name or path.name
        media = media_type or mimetypes.guess_type(filename)[0] or "application/octet-stream"
        form = {k: v for k, v in (("request_id", request_id), ("field", field)) if v is not None}
        response = self._send(
            "POST", "/api/files", files={"file": (filename, content, media)}, data=form
        )
        if not response.is_success:
            raise self._error(response)
        return FileRef.model_validate(response.json()["file"])

    # -- events -----------------------------------------------------------------------------

    def events(
        self,
        *,
        last_event_id: int | None = None,
        timeout: float | None = None,
        on_open: Callable[[], None] | None = None,
    ) -> Generator[ServerEvent, None, None]:
        """The caller's events over one connection (``ready``/``reset`` included).

        Reconnect with the last ``id`` seen to continue exactly where this one stopped.
        ``on_open`` is called once the server has accepted the stream: a resumed stream
        sends nothing until there is something to replay.
        """
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        try:
            with self.http.stream(
                "GET", "/api/events", headers=headers, timeout=httpx.Timeout(30.0, read=timeout)
            ) as response:
                if not response.is_success:
                    response.read()
                    raise self._error(response)
                if on_open is not None:
                    on_open()
                yield from parse_sse(response.iter_lines())
        except httpx.TransportError as exc:
            raise ServerUnreachable(f"lost the event stream from {self.server}: {exc}") from exc


def parse_sse(lines: Iterator[str]) -> Iterator[ServerEvent]:
    """Server-sent events from a stream's lines (comments and ``retry`` skipped)."""
    event_id: int | None = None
    event_type = "message"
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                payload = "\n".join(data)
                try:
                    value: Any = json.loads(payload)
                except ValueError:
                    value = payload
                yield ServerEvent(event_id, event_type, value)
            event_type, data = "message", []
            continue
        if line.startswith(":"):
            continue
        name, _, value_text = line.partition(":")
        value_text = value_text.removeprefix(" ")
        if name == "id":
            event_id = int(value_text) if value_text.isdigit() else None
        elif name == "event":
            event_type = value_text
        elif name == "data":
            data.append(value_text)


__all__ = ["ApiError", "Client", "ServerEvent", "ServerUnreachable", "parse_sse"]

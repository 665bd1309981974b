"""``/mcp``: the MCP server over streamable HTTP, inside the PawFlow server.

:func:`pawflow.mcp.mounting.mount` adds the endpoint to an app made by ``create_app`` and,
on its first request, loads this module (and the MCP SDK) and enters :func:`serving`.
Callers authenticate as on the action API, with ``Authorization: Bearer <token>``, and under
its rules: a wrong token counts toward the same failed-authentication throttle, a caller gets
the same per-user rate. An MCP session belongs to the token that opened it; a request with
another token is answered as if the session did not exist. Tool calls act on the app's own
store, as that user. When the token is revoked, its open requests end and its sessions with
them, as its event streams do (at once, or within ``credential_check`` seconds when another
process revoked it on SQLite).

The SDK's session manager must run for as long as the app serves: :func:`serving` runs one
until the app stops; a new manager is made for every run (one can run only once).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pawflow.mcp.local import ConversationCache, LocalBackend
from pawflow.mcp.server import build_server
from pawflow.server.auth import (
    CHALLENGE,
    Principal,
    bearer_principal,
    bearer_token,
    client_address,
    until_signed_out,
)
from pawflow.server.context import ServerContext
from pawflow.server.errors import HTTPProblem, problem_response
from pawflow.server.limits import encoded_upload_limit

SESSION_HEADER = "mcp-session-id"


def _identity(principal: Principal) -> AuthenticatedUser:
    """The caller as the SDK knows it: the user, and the digest of the token they sent
    (never the token itself). A session belongs to the token that opened it."""
    token = AccessToken(
        token=principal.credential,
        client_id=principal.user,
        scopes=[],
        subject=principal.credential,
    )
    return AuthenticatedUser(token)


class _Endpoint:
    """The ASGI endpoint: authenticate as the API does, then hand over to the running session
    manager for as long as the caller's token stays valid."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self.manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        try:
            principal = await self._authenticate(HTTPConnection(scope))
            self.ctx.limiter.check(principal.user)
        except HTTPProblem as exc:
            await problem_response(exc)(scope, receive, send)
            return
        manager = self.manager
        if manager is None:
            await problem_response(HTTPProblem(503))(scope, receive, send)
            return
        scope = {**scope, "user": _identity(principal)}
        await self._serve(manager, principal, scope, receive, send)

    async def _authenticate(self, connection: HTTPConnection) -> Principal:
        token = bearer_token(connection.headers.get("authorization"))
        if token is None:
            raise HTTPProblem(401, "use 'Authorization: Bearer <token>'", headers=CHALLENGE)
        address = client_address(connection)
        return await bearer_principal(self.ctx, address, token)

    async def _serve(
        self,
        manager: StreamableHTTPSessionManager,
        principal: Principal,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """Serve one request; a revoked token ends it, and its session, at once."""
        session = HTTPConnection(scope).headers.get(SESSION_HEADER)
        started = complete = ended = False

        async def tracked(message: Message) -> None:
            nonlocal session, started, complete
            if ended:
                return  # what the cancelled request still had to say goes nowhere
            if message["type"] == "http.response.start":
                started = True
                for name, value in message.get("headers", ()):
                    if name.lower() == SESSION_HEADER.encode():
                        session = value.decode("latin-1")
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                complete = True
            await send(message)

        cut = signed_out = False
        async with anyio.create_task_group() as tg:

            async def guard() -> None:
                nonlocal cut, signed_out
                signed_out = await until_signed_out(self.ctx, principal)
                cut = True
                tg.cancel_scope.cancel()

            tg.start_soon(guard)
            await manager.handle_request(scope, receive, tracked)
            tg.cancel_scope.cancel()
        if cut:
            ended = True
            if signed_out and session is not None:
                await _end_session(manager, scope, session)
            if not started:
                status = 401 if signed_out else 503
                await problem_response(HTTPProblem(status, headers=CHALLENGE))(scope, receive, send)
            elif not complete:  # a stream cut short: end it cleanly, so the client sees it end
                await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _end_session(manager: StreamableHTTPSessionManager, scope: Scope, session: str) -> None:
    """End ``session`` as its client would, with a DELETE: its streams close, its calls stop."""
    kept = [
        (name, value)
        for name, value in scope.get("headers", ())
        if name.lower() not in (b"content-length", b"content-type", SESSION_HEADER.encode())
    ]
    ending: Scope = {
        **scope,
        "method": "DELETE",
        "headers": [*kept, (SESSION_HEADER.encode(), session.encode("latin-1"))],
    }

    async def nothing() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def discard(message: Message) -> None:
        return None

    with anyio.CancelScope(shield=True):
        await manager.handle_request(ending, nothing, discard)


def _principal_of(ctx: ServerRequestContext[Any, Any]) -> Principal:
    request = ctx.request
    found = getattr(request, "scope", {}).get("user") if request is not None else None
    if not isinstance(found, AuthenticatedUser):
        raise MCPError(INVALID_REQUEST, "not authenticated")
    token = found.access_token
    return Principal(str(token.client_id), "token", credential=token.token)


@asynccontextmanager
async def serving(ctx: ServerContext, *, conversation: str | None = None) -> AsyncIterator[ASGIApp]:
    """The ``/mcp`` endpoint serving ``ctx``'s store, its session manager running until the
    context exits."""
    conversations = ConversationCache() if conversation is None else ConversationCache(conversation)

    def resolve(request_ctx: ServerRequestContext[Any, Any]) -> LocalBackend:
        return LocalBackend(ctx, _principal_of(request_ctx), conversations)

    endpoint = _Endpoint(ctx)
    manager = StreamableHTTPSessionManager(
        app=build_server(resolve),
        json_response=ctx.settings.mcp_json_response,
        max_request_body_size=encoded_upload_limit(ctx.settings.max_body, ctx.settings.max_upload),
    )
    async with manager.run():
        endpoint.manager = manager
        try:
            yield endpoint
        finally:
            endpoint.manager = None

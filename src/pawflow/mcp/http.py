"""``/mcp``: the MCP server over streamable HTTP, inside the PawFlow server.

:func:`pawflow.mcp.mounting.mount` adds the endpoint to an app made by ``create_app`` and,
on the first request to it, loads this module (and the MCP SDK) and enters
:func:`serving`. Callers authenticate
as on the action API, with ``Authorization: Bearer <token>``; an MCP session belongs to
the user who opened it, and a request with another user's token is answered as if the
session did not exist. Tool calls act on the app's own store, as that user.

The SDK's session manager must run for as long as the app serves: :func:`serving` runs one
until the app stops; a new manager is made for every run (one can run only once).
"""

from __future__ import annotations

import hashlib
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
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from pawflow.mcp.local import ConversationCache, LocalBackend
from pawflow.mcp.server import build_server
from pawflow.server.context import ServerContext
from pawflow.server.credentials import user_for_token
from pawflow.server.errors import HTTPProblem

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="pawflow"'}


class _Endpoint:
    """The ASGI endpoint: authenticate, then hand over to the running session manager."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self.manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        user, token = await self._caller(HTTPConnection(scope))
        if user is None:
            response = JSONResponse({"error": token}, status_code=401, headers=_CHALLENGE)
            await response(scope, receive, send)
            return
        try:
            self.ctx.limiter.check(user)
        except HTTPProblem as exc:
            response = JSONResponse(
                {"error": exc.message}, status_code=exc.status_code, headers=exc.headers
            )
            await response(scope, receive, send)
            return
        manager = self.manager
        if manager is None:
            response = JSONResponse({"error": "the server is not running"}, status_code=503)
            await response(scope, receive, send)
            return
        # The SDK ties a session to the identity that opened it; the token's digest
        # stands in for the token itself, which is never kept.
        scope = {
            **scope,
            "user": AuthenticatedUser(AccessToken(token=token, client_id=user, scopes=[])),
        }
        await manager.handle_request(scope, receive, send)

    async def _caller(self, connection: HTTPConnection) -> tuple[str | None, str]:
        """(user, token digest), or (None, why not)."""
        header = connection.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None, "use 'Authorization: Bearer <token>'"
        store = self.ctx.store

        def lookup() -> str | None:
            with store.transaction(write=False) as tx:
                return user_for_token(tx, token)

        user = await anyio.to_thread.run_sync(lookup)
        if user is None:
            return None, "invalid token"
        return user, hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _user_of(ctx: ServerRequestContext[Any, Any]) -> str:
    request = ctx.request
    found = getattr(request, "scope", {}).get("user") if request is not None else None
    if not isinstance(found, AuthenticatedUser):
        raise MCPError(INVALID_REQUEST, "not authenticated")
    return str(found.access_token.client_id)


@asynccontextmanager
async def serving(ctx: ServerContext, *, conversation: str | None = None) -> AsyncIterator[ASGIApp]:
    """The ``/mcp`` endpoint serving ``ctx``'s store, its session manager running until the
    context exits."""
    conversations = ConversationCache() if conversation is None else ConversationCache(conversation)
    backends: dict[str, LocalBackend] = {}

    def resolve(request_ctx: ServerRequestContext[Any, Any]) -> LocalBackend:
        user = _user_of(request_ctx)
        backend = backends.get(user)
        if backend is None:
            backend = backends[user] = LocalBackend(ctx, user, conversations)
        return backend

    endpoint = _Endpoint(ctx)
    manager = StreamableHTTPSessionManager(app=build_server(resolve))
    async with manager.run():
        endpoint.manager = manager
        try:
            yield endpoint
        finally:
            endpoint.manager = None

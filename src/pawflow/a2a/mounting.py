"""``/a2a/{agent}`` in the PawFlow server, with the A2A SDK loaded on first use.

``mount(app)`` adds the routes at once: the JSON-RPC endpoint and the agent card under it
(``/a2a/{agent}/.well-known/agent-card.json``). The first request to either loads
:mod:`pawflow.a2a.server` (in a worker thread); a server nobody asks over A2A never loads
the ``a2a-sdk`` package. The SDK is the ``a2a`` extra: without it, both routes are a 501
that says which extra to install.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pawflow import extras
from pawflow.errors import MissingExtra
from pawflow.server.context import ServerContext
from pawflow.server.errors import HTTPProblem, problem_response

PATH = "/a2a/{agent}"
CARD_PATH = f"{PATH}/.well-known/agent-card.json"

Handler = Callable[[Request], Awaitable[Response]]


class _Faces:
    """What the first request loads: the SDK's endpoint and card for ``ctx``'s agents."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self.loaded: tuple[Handler, Handler] | None = None

    async def get(self) -> tuple[Handler, Handler]:
        if self.loaded is None:
            self.loaded = await anyio.to_thread.run_sync(self._load)
        return self.loaded

    def _load(self) -> tuple[Handler, Handler]:
        extras.require("a2a", part="A2A (/a2a/{agent})")
        from pawflow.a2a.server import A2AFace  # noqa: PLC0415 - the A2A SDK, on first use

        face = A2AFace(self.ctx)
        return face.handle, face.card


def mount(app: FastAPI) -> None:
    """Serve the app's agents over A2A at ``/a2a/{agent}``."""
    ctx = app.state.pawflow
    assert isinstance(ctx, ServerContext)
    faces = _Faces(ctx)

    async def endpoint(request: Request) -> Response:
        try:
            handle, _ = await faces.get()
        except MissingExtra as missing:
            return problem_response(HTTPProblem(501, str(missing)))
        return await handle(request)

    async def card(request: Request) -> Response:
        try:
            _, show = await faces.get()
        except MissingExtra as missing:
            return problem_response(HTTPProblem(501, str(missing)))
        return await show(request)

    app.router.routes.append(Route(CARD_PATH, endpoint=card, methods=["GET"]))
    app.router.routes.append(Route(PATH, endpoint=endpoint, methods=["POST"]))

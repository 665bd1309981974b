"""``/agui/{agent}`` in the PawFlow server, with the AG-UI types loaded on first use.

``mount(app)`` adds the route at once; the first request to it loads
:mod:`pawflow.agui.endpoint` (in a worker thread) and hands every request to it from then on.
A server nobody asks over AG-UI never loads the ``ag-ui-protocol`` package. The package is
the ``agui`` extra: without it, ``/agui/{agent}`` is a 501 that says which extra to install.
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

PATH = "/agui/{agent}"

Handler = Callable[[ServerContext, Request], Awaitable[Response]]


def _load() -> Handler:
    extras.require("agui", part="AG-UI (/agui/{agent})")
    from pawflow.agui.endpoint import handle  # noqa: PLC0415 - the AG-UI types, on first use

    return handle


def mount(app: FastAPI) -> None:
    """Serve AG-UI runs of the app's agents at ``/agui/{agent}``."""
    ctx = app.state.pawflow
    assert isinstance(ctx, ServerContext)
    loaded: list[Handler] = []

    async def endpoint(request: Request) -> Response:
        if not loaded:
            try:
                loaded.append(await anyio.to_thread.run_sync(_load))
            except MissingExtra as missing:
                return problem_response(HTTPProblem(501, str(missing)))
        return await loaded[0](ctx, request)

    app.router.routes.append(Route(PATH, endpoint=endpoint, methods=["POST"]))

"""``/mcp`` in the PawFlow server, with the MCP SDK loaded on first use.

The SDK's protocol types are large: loading them takes longer than the rest of the server's
start. ``mount(app)`` adds the route at once, and the first request to it loads
:mod:`pawflow.mcp.http` (in a worker thread, so the server keeps answering meanwhile), starts
its session manager in a task group that lives as long as the app serves, and hands every
request from then on to its endpoint. A server nobody asks over MCP never loads the SDK.
The SDK is the ``mcp`` extra: without it, ``/mcp`` is a 501 that says which extra to install.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.abc
from fastapi import FastAPI
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from pawflow import extras
from pawflow.errors import MissingExtra
from pawflow.server.context import ServerContext
from pawflow.server.errors import HTTPProblem, problem_response
from pawflow.server.limits import encoded_upload_limit

PATH = "/mcp"


Serving = Callable[..., AbstractAsyncContextManager[ASGIApp]]


def _load() -> Serving:
    extras.require("mcp", part="MCP (/mcp)")
    from pawflow.mcp.http import serving  # noqa: PLC0415 - the MCP SDK, on first use

    return serving


class _OnFirstUse:
    """The ``/mcp`` endpoint until the real one runs, then a pass-through to it."""

    def __init__(self, ctx: ServerContext, conversation: str | None) -> None:
        self.ctx = ctx
        self.conversation = conversation
        self.tasks: anyio.abc.TaskGroup | None = None
        """The app's own task group while it serves; the real endpoint runs in it."""
        self.endpoint: ASGIApp | None = None
        self._starting = anyio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            endpoint = self.endpoint or await self._start()
        except MissingExtra as missing:
            await problem_response(HTTPProblem(501, str(missing)))(scope, receive, send)
            return
        if endpoint is None:  # not serving (yet, or any more)
            await problem_response(HTTPProblem(503))(scope, receive, send)
            return
        await endpoint(scope, receive, send)

    async def _start(self) -> ASGIApp | None:
        async with self._starting:
            if self.endpoint is None and self.tasks is not None:
                serving = await anyio.to_thread.run_sync(_load)
                self.endpoint = await self.tasks.start(self._run, serving)
        return self.endpoint

    async def _run(self, serving: Serving, *, task_status: anyio.abc.TaskStatus[ASGIApp]) -> None:
        async with serving(self.ctx, conversation=self.conversation) as endpoint:
            task_status.started(endpoint)
            await anyio.sleep_forever()


def mount(app: FastAPI, *, conversation: str | None = None) -> None:
    """Serve MCP at ``/mcp`` in ``app`` (made by ``create_app``), for its store's users;
    ``conversation`` is the title questions go to when a tool names none."""
    ctx = app.state.pawflow
    assert isinstance(ctx, ServerContext)
    endpoint = _OnFirstUse(ctx, conversation)
    app.router.routes.append(Route(PATH, endpoint=endpoint))
    # An app's upload travels in a tool call: /mcp takes bodies as large as its base64.
    ctx.body_limits[PATH] = encoded_upload_limit(ctx.settings.max_body, ctx.settings.max_upload)
    serve_app = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: Any) -> AsyncIterator[Any]:
        async with serve_app(running) as state, anyio.create_task_group() as tasks:
            endpoint.tasks = tasks
            try:
                yield state
            finally:
                endpoint.tasks = endpoint.endpoint = None
                tasks.cancel_scope.cancel()

    app.router.lifespan_context = lifespan

"""The MCP server: PawFlow's tools and the pending list, on the SDK's low-level server.

The low-level server is used so that each tool's schema is exactly its model's (see
:mod:`pawflow.mcp.schemas`). It is transport-free: :mod:`pawflow.mcp.stdio` and
:mod:`pawflow.mcp.http` run it, each with a way to find the caller's backend.

The pending list is the resource ``pawflow://interactions/pending``: the requests waiting
for the caller's answer, as their inbox counts them. A client that
subscribes to it gets ``notifications/resources/updated`` whenever the set of pending
requests changes, for as long as its connection lasts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.server import Server
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

import pawflow
from pawflow import ids
from pawflow.mcp import apps, rounds, schemas
from pawflow.mcp.backend import Backend
from pawflow.mcp.tools import ASKING, Elicitor, call_tool

log = logging.getLogger("pawflow.mcp")

PENDING_URI = "pawflow://interactions/pending"
MAX_LISTED = 1000
"""The pending resource lists at most this many requests (the soonest due first)."""

INSTRUCTIONS = (
    "PawFlow asks a person something and keeps the question until they answer, however "
    "long that takes. Ask with request_confirmation or request_user_input; a pending request "
    "keeps its id: check it later with get_interaction or wait_for_answer."
)

Resolve = Callable[[ServerRequestContext[Any, Any]], Backend]
"""The backend of the caller of one request (raises MCPError when there is none)."""


@dataclass
class Live:
    """What lives as long as the server runs: the watchers of subscribed clients."""

    tasks: TaskGroup
    watchers: dict[int, anyio.CancelScope] = field(default_factory=dict)


async def pending_snapshot(backend: Backend) -> list[dict[str, Any]]:
    """What the pending resource lists: the requests waiting for the caller's answer (the
    inbox's "waiting for me"), never one that waits for someone else."""
    found = await backend.inbox()
    return [record.to_dict() for record in found[:MAX_LISTED]]


def build_server(resolve: Resolve, *, name: str = "pawflow") -> Server[Live]:
    @asynccontextmanager
    async def lifespan(_: Server[Live]) -> AsyncIterator[Live]:
        async with anyio.create_task_group() as tg:
            yield Live(tg)
            tg.cancel_scope.cancel()

    async def list_tools(
        ctx: ServerRequestContext[Live, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [spec.tool() for spec in schemas.TOOLS]
        return types.ListToolsResult(tools=apps.linked(tools) if apps.negotiated(ctx) else tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Live, Any], params: types.CallToolRequestParams
    ) -> HandlerResult:
        backend = resolve(ctx)
        if params.name in apps.APP_TOOLS:
            return await apps.call_app_tool(backend, params.name, params.arguments)
        if params.name in ASKING and params.task is None and apps.negotiated(ctx):
            return await call_tool(backend, params.name, params.arguments, Elicitor(app=True))
        modes = rounds.Modes.of(ctx)
        if rounds.is_modern(ctx):
            if params.name in ASKING:
                return await rounds.call_asking(backend, params, modes)
            return await call_tool(backend, params.name, params.arguments, None)
        return await call_tool(
            backend,
            params.name,
            params.arguments,
            _elicitor(ctx, modes),
            record_round=lambda request_id, action: _record(backend, request_id, action),
        )

    async def list_resources(
        ctx: ServerRequestContext[Live, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        pending = types.Resource(
            uri=PENDING_URI,
            name="pending",
            title="Pending requests",
            description="Your requests still waiting for an answer, oldest first.",
            mime_type="application/json",
        )
        found = [pending, apps.resource()] if apps.negotiated(ctx) else [pending]
        return types.ListResourcesResult(resources=found)

    async def read_resource(
        ctx: ServerRequestContext[Live, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if str(params.uri) == apps.APP_URI:
            return apps.read()
        if str(params.uri) != PENDING_URI:
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {params.uri}")
        items = await pending_snapshot(resolve(ctx))
        text = json.dumps({"interactions": items}, ensure_ascii=False)
        contents = types.TextResourceContents(
            uri=PENDING_URI, mime_type="application/json", text=text
        )
        return types.ReadResourceResult(contents=[contents])

    async def subscribe(
        ctx: ServerRequestContext[Live, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        if str(params.uri) != PENDING_URI:
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {params.uri}")
        await _start_watcher(ctx, resolve(ctx))
        return types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[Live, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        scope = ctx.lifespan_context.watchers.pop(_connection_key(ctx), None)
        if scope is not None:
            scope.cancel()
        return types.EmptyResult()

    async def listen(
        ctx: ServerRequestContext[Live, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        return await _listen(ctx, resolve(ctx), params)

    server = Server(
        name,
        version=pawflow.__version__,
        title="PawFlow",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_subscriptions_listen=listen,
    )
    server.add_request_handler("tools/call", types.CallToolRequestParams, on_call_tool)
    for method, params_type, handler in rounds.task_handlers(resolve):
        server.add_request_handler(method, params_type, handler)
    server.extensions[rounds.TASKS_EXTENSION] = {}
    server.extensions[apps.EXTENSION_ID] = {}
    security = rounds.state_security(lambda ctx: resolve(ctx).user)
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    return server


def _elicitor(ctx: ServerRequestContext[Any, Any], modes: rounds.Modes) -> Elicitor:
    """How a handshake-era call may ask the person directly: requests on its own stream."""
    session, related = ctx.session, ctx.request_id
    elicitor = Elicitor(forms=modes.form)
    if not session.can_send_request:
        elicitor.url_required = modes.url  # no way to send the page but the -32042 error
        return elicitor
    if modes.form:

        async def form(message: str, schema: dict[str, Any]) -> types.ElicitResult:
            return await session.elicit_form(message, schema, related_request_id=related)

        elicitor.form = form
    if modes.url:

        async def url(message: str, page: str, elicitation_id: str) -> types.ElicitResult:
            return await session.elicit_url(
                message, page, elicitation_id, related_request_id=related
            )

        async def complete(elicitation_id: str) -> None:
            await session.send_elicit_complete(elicitation_id, related_request_id=related)

        elicitor.url, elicitor.complete = url, complete
    return elicitor


async def _record(backend: Backend, request_id: str, action: str) -> None:
    """Keep a handshake-era client's reply to an elicitation as a round of its own."""
    await backend.record_round(ids.new_id(), request_id, action)


async def _listen(
    ctx: ServerRequestContext[Any, Any],
    backend: Backend,
    params: types.SubscriptionsListenRequestParams,
) -> types.SubscriptionsListenResult:
    """``subscriptions/listen`` (2026): the SDK's handler serves the stream; a watcher of this
    caller's pending list feeds it, from the list as it is before the acknowledgement."""
    bus = InMemorySubscriptionBus()
    ended: list[types.SubscriptionsListenResult] = []
    wanted = PENDING_URI in (params.notifications.resource_subscriptions or ())
    async with anyio.create_task_group() as tg:
        if wanted:
            seen = [item["id"] for item in await pending_snapshot(backend)]

            async def on_change() -> None:
                nonlocal seen
                now = [item["id"] for item in await pending_snapshot(backend)]
                if now != seen:
                    seen = now
                    await bus.publish(ResourceUpdated(uri=PENDING_URI))

            async def watch() -> None:
                try:
                    await backend.watch(on_change)
                except Exception:  # the token was revoked, or the server is stopping
                    log.debug("pending-list listener ended", exc_info=True)
                tg.cancel_scope.cancel()

            tg.start_soon(watch)

        async def serve() -> None:
            ended.append(await ListenHandler(bus)(ctx, params))
            tg.cancel_scope.cancel()

        tg.start_soon(serve)
    if not ended:
        raise MCPError(types.INTERNAL_ERROR, "the subscription ended")
    return ended[0]


def _connection(ctx: ServerRequestContext[Any, Any]) -> Any:
    # The SDK keeps the per-connection state (and its teardown) on the session's
    # connection; a watcher must end with the connection that asked for it.
    return getattr(ctx.session, "_connection", None)


def _connection_key(ctx: ServerRequestContext[Any, Any]) -> int:
    return id(_connection(ctx) or ctx.session)


async def _start_watcher(ctx: ServerRequestContext[Live, Any], backend: Backend) -> None:
    """Watch the pending list for this connection, from the list as it is now: the baseline
    is read before the subscription is confirmed, so any change after it is notified."""
    live = ctx.lifespan_context
    key = _connection_key(ctx)
    if key in live.watchers:
        return
    scope = anyio.CancelScope()
    live.watchers[key] = scope
    try:
        seen = [item["id"] for item in await pending_snapshot(backend)]
    except BaseException:
        live.watchers.pop(key, None)
        raise
    session = ctx.session

    async def on_change() -> None:
        nonlocal seen
        now = [item["id"] for item in await pending_snapshot(backend)]
        if now != seen:
            seen = now
            await session.send_resource_updated(PENDING_URI)

    async def watch() -> None:
        with scope:
            try:
                await backend.watch(on_change)
            except Exception:  # the connection is gone (or the server going down)
                log.debug("pending-list watcher ended", exc_info=True)
        if live.watchers.get(key) is scope:  # not a newer subscription of this connection
            del live.watchers[key]

    connection = _connection(ctx)
    if connection is not None:
        connection.exit_stack.callback(scope.cancel)
    live.tasks.start_soon(watch)

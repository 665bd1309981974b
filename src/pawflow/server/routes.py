"""How an action's handler runs: in one turn, its response checked on the loop.

An action is a plain function: it reads and writes the store, whose calls block, so it runs
on a worker thread. Left to FastAPI, a plain handler's response is also checked against the
action's model on a worker thread, a second turn after the handler's own; each turn is two
hand-overs between the event loop and a thread, which on a busy server cost more than the
work they carry. Here the handler runs in one turn and hands back its record, which the
loop checks and encodes (pydantic's own code, a few microseconds).

An action that only reads and writes the store (``on_loop``) skips even that turn where
the store never waits to read (SQLite in WAL mode): it runs on the loop itself, its store
calls refusing to wait (:func:`pawflow.store.refusing_waits`). Where one would wait — for
another writer, or to hand an answer to a handler of this process — nothing of the call
has committed yet, and the whole handler runs again on a worker thread.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar, get_type_hints

import anyio
from fastapi import APIRouter
from pydantic import BaseModel

from pawflow.server.context import context_of
from pawflow.server.errors import ERROR_RESPONSES
from pawflow.store import WouldWait, refusing_waits

_Handler = TypeVar("_Handler", bound=Callable[..., Any])


def action_route(
    router: APIRouter,
    name: str,
    response: type[BaseModel],
    summary: str,
    statuses: Sequence[int],
    *,
    on_loop: bool = False,
) -> Callable[[_Handler], _Handler]:
    """``POST /api/actions/{name}``: an action of the API, with its model and the errors it
    may answer (from :data:`ERROR_RESPONSES`), run by :func:`one_turn` (``on_loop``: see
    there). The handler itself is returned as it was."""
    register = router.post(
        f"/{name}",
        name=name,
        summary=summary,
        response_model=response,
        responses={k: v for k, v in ERROR_RESPONSES.items() if k in statuses},
        operation_id=name,
    )

    def decorate(handler: _Handler) -> _Handler:
        register(one_turn(handler, on_loop=on_loop))
        return handler

    return decorate


def one_turn(handler: Callable[..., Any], *, on_loop: bool = False) -> Callable[..., Any]:
    """An endpoint for FastAPI that runs ``handler`` (a plain function) in one turn on a
    worker thread, with the same parameters (their annotations resolved here, as FastAPI
    reads them off the endpoint).

    ``on_loop``: the handler does nothing but call the store for one record (no other
    waits: no network, no files; no page of many, which would hold the loop as long as it
    takes) and takes the ``request`` (the store's is found through it). Where the store's
    reads never wait, it runs on the loop first, its store calls refusing to wait, and on a
    worker thread only if one would have waited."""
    if inspect.iscoroutinefunction(handler):
        return handler
    hints = get_type_hints(handler, include_extras=True)
    signature = inspect.signature(handler)
    if on_loop and "request" not in signature.parameters:
        raise TypeError(f"{handler.__qualname__}: an action on the loop takes the request")
    parameters = [
        parameter.replace(annotation=hints.get(parameter.name, parameter.annotation))
        for parameter in signature.parameters.values()
    ]

    async def endpoint(**kwargs: Any) -> Any:
        if on_loop and not context_of(kwargs["request"]).store.db.reads_wait:
            try:
                with refusing_waits():
                    return handler(**kwargs)
            except WouldWait:
                pass  # nothing of it committed: run it again where it may wait
        return await anyio.to_thread.run_sync(partial(handler, **kwargs))

    endpoint.__name__ = handler.__name__
    endpoint.__qualname__ = handler.__qualname__
    endpoint.__doc__ = handler.__doc__
    endpoint.__module__ = handler.__module__
    endpoint.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=hints.get("return", signature.return_annotation)
    )
    return endpoint

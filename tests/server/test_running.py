"""Serving: what the server keeps out of the garbage collector's full passes once started."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from pawflow.server.running import freeze_after_startup


class Made:
    """Something start-up makes (tracked by the collector)."""

    def __init__(self) -> None:
        self.me = self


def test_what_start_up_made_is_frozen_once_the_app_has_started() -> None:
    """A full collection walks only what came after start-up: what the app's start-up made
    and keeps is frozen; garbage it left behind is collected first, not frozen for good."""
    kept: list[Made] = []
    left: list[weakref.ref[Made]] = []
    frozen_while_starting: list[int] = []

    @asynccontextmanager
    async def starting(app: FastAPI) -> AsyncIterator[None]:
        kept.append(Made())
        left.append(weakref.ref(Made()))  # a cycle nobody holds: only the collector frees it
        frozen_while_starting.append(gc.get_freeze_count())
        yield

    app = FastAPI(lifespan=starting)
    freeze_after_startup(app)
    before = gc.get_freeze_count()

    async def serve() -> tuple[int, bool, bool]:
        async with app.router.lifespan_context(app):
            walked = gc.get_objects()
            return (
                gc.get_freeze_count(),
                any(obj is kept[0] for obj in walked),
                left[0]() is None,
            )

    try:
        frozen, walked, freed = asyncio.run(serve())
        assert frozen_while_starting == [before]  # nothing frozen before start-up ran
        assert frozen > before
        assert not walked  # out of every pass of the collector
        assert freed
    finally:
        gc.unfreeze()

"""One event loop on a thread of its own, for the async frameworks' resumed runs."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from pawflow.errors import Undeliverable

T = TypeVar("T")


class LoopThread:
    """One event loop, on a thread of its own, for every resumed run of a bridge: the model's
    client keeps its connections on one loop, whichever thread delivers."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self._thread:
            coroutine.close()
            # A run that answers its own approval would wait on itself: later, elsewhere.
            raise Undeliverable("a resumed run cannot resume another on its own loop")
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=self._loop.run_forever, name=self.name, daemon=True
                )
                self._thread.start()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    def close(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        if thread.is_alive():
            # What the frameworks left running on the loop (a client's background worker)
            # is cancelled and awaited, so nothing is left pending on a closed loop.
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_cancel_the_rest(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


async def _cancel_the_rest() -> None:
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


__all__ = ["LoopThread"]

"""The streams of one user share their credential re-checks (:meth:`Feed.signed_in`)."""

from __future__ import annotations

import asyncio
import time

import pytest

from pawflow.server.hub import Feed


class Checks:
    """A credential check that waits until let go, counting how often it ran."""

    def __init__(self, answer: bool = True) -> None:
        self.ran = 0
        self.answer = answer
        self.go = asyncio.Event()

    async def __call__(self) -> bool:
        self.ran += 1
        await self.go.wait()
        return self.answer


def test_streams_due_together_wait_on_one_check() -> None:
    async def scenario() -> None:
        feed: Feed[object] = Feed()
        checks = Checks()
        since = time.monotonic() - 1
        asking = [
            asyncio.ensure_future(feed.signed_in("token-a", since, 60, checks)) for _ in range(20)
        ]
        await asyncio.sleep(0)
        checks.go.set()
        found = await asyncio.gather(*asking)
        assert checks.ran == 1 and feed.checks == 1
        assert {current for current, _ in found} == {True}
        assert len({began for _, began in found}) == 1
        began = found[0][1]
        # A stream whose last check is that one, due again: a new check, which a stream
        # whose last check is older shares.
        again, later = await feed.signed_in("token-a", began, 60, checks)
        assert (again, checks.ran) == (True, 2) and later > began
        assert await feed.signed_in("token-a", since, 60, checks) == (True, later)
        assert checks.ran == 2
        # One older than its freshness is not shared.
        assert (await feed.signed_in("token-a", since, 0, checks))[1] > later
        assert checks.ran == 3
        # Another credential of the user is checked on its own.
        await feed.signed_in("session-b", since, 60, checks)
        assert checks.ran == 4

    asyncio.run(scenario())


def test_a_revocation_notice_makes_every_stream_check_anew() -> None:
    async def scenario() -> None:
        feed: Feed[object] = Feed()
        checks = Checks()
        checks.go.set()
        since = time.monotonic() - 1
        assert (await feed.signed_in("token-a", since, 60, checks))[0]
        checks.answer = False  # revoked meanwhile
        assert (await feed.signed_in("token-a", since, 60, checks))[0]  # shared: not told yet
        feed.forget_checks()  # the notice
        assert not (await feed.signed_in("token-a", since, 60, checks))[0]
        assert checks.ran == 2

    asyncio.run(scenario())


def test_a_failed_check_is_not_shared_afterwards() -> None:
    async def scenario() -> None:
        feed: Feed[object] = Feed()
        failing = True

        async def check() -> bool:
            if failing:
                raise OSError("the store is away")
            return True

        since = time.monotonic() - 1
        with pytest.raises(OSError):
            await feed.signed_in("token-a", since, 60, check)
        failing = False
        assert (await feed.signed_in("token-a", since, 60, check))[0]
        assert feed.checks == 2

    asyncio.run(scenario())

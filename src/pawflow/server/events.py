"""``GET /api/events``: the user's durable event log as server-sent events.

Each SSE ``id`` is the event's number in the user's own log (it counts only that user's
events, so it says nothing of anyone else's activity), so a client that reconnects with
``Last-Event-ID`` (or ``?after=``) gets exactly what it has not seen. A new client without
either starts at the end of the log (a ``ready`` event gives it its first id) and loads
current state through the actions. A client whose id is older than the retained log, or
newer than anything logged, gets a ``reset`` event: reload state, continue from its id.

Requests and answers of the confirm/choice/multi kinds are also sent under their
confirmation-family names, in the same write, with the same id. A stream ends within
``credential_check`` seconds of its token being revoked or its session ending.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse

from pawflow.errors import StoreError
from pawflow.interactions import CONFIRMATION_KINDS
from pawflow.records import Event
from pawflow.server.auth import Principal, caller, still_signed_in
from pawflow.server.context import ServerContext, context_of
from pawflow.server.credentials import prune_expired
from pawflow.server.errors import ERROR_RESPONSES, HTTPProblem
from pawflow.server.markdown import with_html
from pawflow.server.models import MAX_SAFE_INTEGER
from pawflow.store import EVENT_PRUNE_BATCH, Store, SweepStep, Unit

BATCH = 500
RETRY_MILLIS = 2000
STORE_FAILED = (
    f"retry: {RETRY_MILLIS}\n: the store is unavailable; reconnect with Last-Event-ID\n\n"
)
"""The last words of a stream whose store failed: a comment every client reads past."""

log = logging.getLogger("pawflow.server")

ALIASES = {
    "interaction_request": "confirmation_request",
    "interaction_answered": "confirmation_answered",
}
_CONFIRMATION_KINDS = frozenset(kind.value for kind in CONFIRMATION_KINDS)

router = APIRouter()


# -- the log's bounds and its retention ------------------------------------------------------


def read_batch(u: Unit, user: str, after: int) -> tuple[list[Event], bool]:
    """The next events after ``after``, and whether some after it were pruned unseen.

    A user's numbers have no holes (each comes from the user's counter, in the transaction
    that logs the event), so the next one missing while the counter is past ``after`` means
    retention removed it.
    """
    tail = u.events.last_seq(user)
    if after >= tail:
        return [], False
    batch = u.events.events_after(user, after, BATCH)
    if not batch or batch[0].seq != after + 1:
        return [], True
    return batch, False


# -- the stream ------------------------------------------------------------------------------


def frame(seq: int, type_: str, data: dict[str, Any]) -> str:
    return f"id: {seq}\nevent: {type_}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def frames(event: Event) -> str:
    data = with_html(event.data) if event.type == "message" else dict(event.data)
    if event.type == "notification":
        data.setdefault("conversation_id", event.conversation_id)
    text = frame(event.seq, event.type, data)
    alias = ALIASES.get(event.type)
    if alias is not None and data.get("kind") in _CONFIRMATION_KINDS:
        text += frame(event.seq, alias, data)
    return text


def _mark_live(store: Store, client_id: str, user: str, ttl: timedelta) -> None:
    """``user`` has a live client (``client_id``) for ``ttl``: notices go there."""
    with store.unit() as u:
        u.messages.mark_live(client_id, user, ttl)


def _drop_live(store: Store, client_id: str) -> None:
    with store.unit() as u:
        u.messages.drop_live(client_id)


def _start(store: Store, user: str, asked: int | None) -> tuple[int, bool]:
    """Where a stream starts, and whether the client must be told to reset."""
    with store.unit(write=False) as u:
        tail = u.events.last_seq(user)
        if asked is None:
            return tail, False
        if asked > tail or read_batch(u, user, asked)[1]:
            return tail, True
        return asked, False


async def event_stream(
    ctx: ServerContext,
    principal: Principal,
    start: tuple[int, bool],
    asked: int | None,
    client_id: str,
) -> AsyncIterator[str]:
    """The stream from ``start`` (a position and whether to reset, fixed before the response
    headers go out, so a client that reads state once they arrive misses nothing logged after
    its read), for ``client_id``, already marked live; it ends when the caller's token is
    revoked or their session ends, and cleanly (a last comment) when the store fails: the
    client reconnects with ``Last-Event-ID``."""
    store, settings, hub = ctx.store, ctx.settings, ctx.hub
    user = principal.user
    ttl = settings.live_ttl
    refresh = max(ttl.total_seconds() / 3, 0.05)
    recheck = settings.credential_check
    waiter = hub.subscribe(user)
    feed = hub.feed(waiter)

    async def fetch(after: int) -> Read:
        return await anyio.to_thread.run_sync(_read, store, user, after)

    async def check() -> bool:
        idle = settings.session_idle
        return await anyio.to_thread.run_sync(still_signed_in, store, principal, idle)

    checked = marked = time.monotonic()
    try:
        position, reset = start
        opening = f"retry: {RETRY_MILLIS}\n\n"
        if reset:
            opening += frame(position, "reset", {"last_event_id": position, "reason": "gap"})
        elif asked is None:
            opening += frame(position, "ready", {"last_event_id": position})
        yield opening
        sent = time.monotonic()
        while hub.running:
            if waiter.recheck or time.monotonic() - checked >= recheck:
                waiter.recheck = False
                current, checked = await feed.signed_in(principal, checked, recheck, check)
                if not current:
                    return
            waiter.clear()  # before reading: a notice during the read wakes the next wait
            read: Read = await feed.read(position, fetch)
            if read.gone:
                position, _ = await anyio.to_thread.run_sync(_start, store, user, None)
                yield frame(position, "reset", {"last_event_id": position, "reason": "pruned"})
                sent = time.monotonic()
                continue
            if read.count:
                position = read.last
                yield read.text
                sent = time.monotonic()
                if read.count == BATCH:
                    continue
            if time.monotonic() - marked >= refresh:
                await anyio.to_thread.run_sync(_mark_live, store, client_id, user, ttl)
                marked = time.monotonic()
            await waiter.wait_at_most(min(settings.keepalive, refresh, recheck))
            # Woken early only to re-check credentials: keep-alives stay keepalive apart.
            if time.monotonic() - sent >= settings.keepalive:
                yield ": keep-alive\n\n"
                sent = time.monotonic()
    except StoreError as exc:
        # The headers went long ago: no 503 now. End the stream as a stream ends, saying
        # why; the client comes back from its last id once the store answers again.
        log.warning("an event stream of %s ended: %s", user, exc)
        yield STORE_FAILED
    finally:
        hub.unsubscribe(waiter)
        hub.drop_feed(waiter)
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(StoreError):  # the mark runs out by itself
                await anyio.to_thread.run_sync(_drop_live, store, client_id)


@dataclass(frozen=True)
class Read:
    """What follows a position in a user's log, rendered once for all their streams."""

    text: str
    count: int
    last: int
    gone: bool


def _read(store: Store, user: str, after: int) -> Read:
    with store.unit(write=False) as u:
        batch, gone = read_batch(u, user, after)
    text = "".join(frames(event) for event in batch)
    return Read(text, len(batch), batch[-1].seq if batch else after, gone)


def _event_id(raw: str | None) -> int | None:
    if raw is None or raw.strip() == "":
        return None
    text = raw.strip()
    # ASCII digits only: str.isdigit() also accepts "²", which int() refuses.
    if not _EVENT_ID.fullmatch(text):
        raise HTTPProblem(400, "Last-Event-ID must be an event id from this server")
    return int(text)


_EVENT_ID = re.compile(r"[0-9]{1,18}")


@router.get(
    "/api/events",
    summary="Stream the caller's events (server-sent events)",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
            "description": "interaction_request, confirmation_request, interaction_answered, "
            "confirmation_answered, message, notification, reset, ready, …",
        },
        **{k: v for k, v in ERROR_RESPONSES.items() if k in (400, 401, 422, 429, 503)},
    },
)
async def events(
    request: Request,
    principal: Annotated[Principal, Depends(caller)],
    after: Annotated[int | None, Query(ge=0, le=MAX_SAFE_INTEGER)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    asked = _event_id(last_event_id)
    if asked is None:
        asked = after
    ctx = context_of(request)
    # What the stream needs of the store, done before its headers: a store that fails
    # here is a 503 with Retry-After, not a 200 cut short.
    start = await anyio.to_thread.run_sync(_start, ctx.store, principal.user, asked)
    client_id = "sse:" + secrets.token_urlsafe(12)
    await anyio.to_thread.run_sync(
        _mark_live, ctx.store, client_id, principal.user, ctx.settings.live_ttl
    )
    return StreamingResponse(
        event_stream(ctx, principal, start, asked, client_id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def retention_step(retention: timedelta) -> SweepStep:
    """A sweep step pruning the log past ``retention``, and expired sessions and links."""

    def prune(store: Store) -> dict[str, int]:
        now = store.now()
        removed = 0
        while True:
            with store.unit() as u:
                done = u.events.prune_events(now - retention)
            removed += done
            if done < EVENT_PRUNE_BATCH:
                break
        with store.unit() as u:
            sessions = prune_expired(u.tx, now)
        return {"events_pruned": removed, "sessions_pruned": sessions}

    return prune

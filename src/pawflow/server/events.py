"""``GET /api/events``: the user's durable event log as server-sent events.

Each SSE ``id`` is the event's ``seq`` in the log, so a client that reconnects with
``Last-Event-ID`` (or ``?after=``) gets exactly what it has not seen. A new client without
either starts at the end of the log (a ``ready`` event gives it its first id) and loads
current state through the actions. A client whose id is older than the retained log, or
newer than anything logged, gets a ``reset`` event: reload state, continue from its id.

Requests and answers of the confirm/choice/multi kinds are also sent under their
confirmation-family names, in the same write, with the same id.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse

from pawflow.clock import to_millis
from pawflow.interactions import CONFIRMATION_KINDS
from pawflow.records import Event
from pawflow.server.auth import Principal, authenticate, prune_expired
from pawflow.server.context import ServerContext, context_of
from pawflow.server.errors import ERROR_RESPONSES, HTTPProblem
from pawflow.server.markdown import with_html
from pawflow.store import Store
from pawflow.store import events as event_log
from pawflow.store.database import Tx
from pawflow.store.store import SweepStep

BATCH = 500
PRUNE_BATCH = 5000
PRUNED_KEY = "events_pruned_through"
RETRY_MILLIS = 2000

ALIASES = {
    "interaction_request": "confirmation_request",
    "interaction_answered": "confirmation_answered",
}
_CONFIRMATION_KINDS = frozenset(kind.value for kind in CONFIRMATION_KINDS)

router = APIRouter()


# -- the log's bounds and its retention ------------------------------------------------------


def pruned_through(tx: Tx) -> int:
    row = tx.one("SELECT value FROM server_state WHERE key = ?", (PRUNED_KEY,))
    return 0 if row is None else int(row["value"])


def log_tail(tx: Tx) -> int:
    """The newest ``seq`` ever logged that a reader may rely on (0 for an empty log)."""
    row = tx.one("SELECT max(seq) AS seq FROM events")
    newest = 0 if row is None or row["seq"] is None else int(row["seq"])
    return max(newest, pruned_through(tx))


def read_batch(tx: Tx, user: str, after: int) -> tuple[list[Event], bool]:
    """The next events after ``after``, and whether some after it were pruned unseen."""
    gone = pruned_through(tx) > after
    return ([] if gone else event_log.events_after(tx, user, after, BATCH)), gone


def prune_events(tx: Tx, cutoff: datetime) -> int:
    """Remove one batch from the start of the log, older than ``cutoff``; how many went."""
    row = tx.one(
        "SELECT max(seq) AS seq FROM (SELECT seq FROM events WHERE created_at < ?"
        " ORDER BY seq LIMIT ?) AS batch",
        (to_millis(cutoff), PRUNE_BATCH),
    )
    if row is None or row["seq"] is None:
        return 0
    upto = int(row["seq"])
    # The mark moves first, in the same transaction: a reader never sees the log shortened
    # without also seeing how far.
    tx.execute(
        "INSERT INTO server_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE"
        " SET value = CASE WHEN excluded.value > server_state.value"
        " THEN excluded.value ELSE server_state.value END",
        (PRUNED_KEY, upto),
    )
    return tx.execute("DELETE FROM events WHERE seq <= ?", (upto,))


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


def _start(store: Store, asked: int | None) -> tuple[int, bool]:
    """Where a stream starts, and whether the client must be told to reset."""
    with store.transaction(write=False) as tx:
        tail = log_tail(tx)
        if asked is None:
            return tail, False
        if asked < pruned_through(tx) or asked > tail:
            return tail, True
        return asked, False


async def event_stream(ctx: ServerContext, user: str, asked: int | None) -> AsyncIterator[str]:
    store, settings, hub = ctx.store, ctx.settings, ctx.hub
    client_id = "sse:" + secrets.token_urlsafe(12)
    ttl = settings.live_ttl
    refresh = max(ttl.total_seconds() / 3, 0.05)
    waiter = hub.subscribe()
    try:
        await anyio.to_thread.run_sync(store.mark_live, client_id, user, ttl)
        marked = time.monotonic()
        position, reset = await anyio.to_thread.run_sync(_start, store, asked)
        opening = f"retry: {RETRY_MILLIS}\n\n"
        if reset:
            opening += frame(position, "reset", {"last_event_id": position, "reason": "gap"})
        elif asked is None:
            opening += frame(position, "ready", {"last_event_id": position})
        yield opening
        while hub.running:
            waiter.clear()  # before reading: a notice during the read wakes the next wait
            batch, gone = await anyio.to_thread.run_sync(_read, store, user, position)
            if gone:
                position, _ = await anyio.to_thread.run_sync(_start, store, None)
                yield frame(position, "reset", {"last_event_id": position, "reason": "pruned"})
                continue
            if batch:
                position = batch[-1].seq
                yield "".join(frames(event) for event in batch)
                if len(batch) == BATCH:
                    continue
            if time.monotonic() - marked >= refresh:
                await anyio.to_thread.run_sync(store.mark_live, client_id, user, ttl)
                marked = time.monotonic()
            with anyio.move_on_after(min(settings.keepalive, refresh)) as waited:
                await waiter.wait()
            if waited.cancelled_caught:
                yield ": keep-alive\n\n"
    finally:
        hub.unsubscribe(waiter)
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(store.drop_live, client_id)


def _read(store: Store, user: str, after: int) -> tuple[list[Event], bool]:
    with store.transaction(write=False) as tx:
        return read_batch(tx, user, after)


def _event_id(raw: str | None) -> int | None:
    if raw is None or raw.strip() == "":
        return None
    text = raw.strip()
    if not text.isdigit() or len(text) > 18:
        raise HTTPProblem(400, "Last-Event-ID must be an event id from this server")
    return int(text)


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
        **{k: v for k, v in ERROR_RESPONSES.items() if k in (400, 401, 422, 429)},
    },
)
async def events(
    request: Request,
    principal: Annotated[Principal, Depends(authenticate)],
    after: Annotated[int | None, Query(ge=0, le=10**18)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    asked = _event_id(last_event_id)
    if asked is None:
        asked = after
    ctx = context_of(request)
    return StreamingResponse(
        event_stream(ctx, principal.user, asked),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def retention_step(retention: timedelta) -> SweepStep:
    """A sweep step pruning the log past ``retention``, and expired sessions and links."""

    def prune(store: Store) -> dict[str, int]:
        now = store.now()
        removed = 0
        while True:
            with store.transaction() as tx:
                done = prune_events(tx, now - retention)
            removed += done
            if done < PRUNE_BATCH:
                break
        with store.transaction() as tx:
            sessions = prune_expired(tx, now)
        return {"events_pruned": removed, "sessions_pruned": sessions}

    return prune

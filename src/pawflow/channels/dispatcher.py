"""The dispatcher: sends the outbox, under a lease, with retry and backoff.

Every server runs one; the one holding the lease ``channels:outbox`` sends, the others
wait to take over when it stops renewing (it renews in every transaction that claims rows,
so a process that lost the lease claims nothing more). The lease follows the rule of every
lease (``pawflow.store.LeaseTerms``): passes come at least every third of its time to live,
and before each send the dispatcher checks, by its monotonic clock, that the lease was
renewed recently enough to trust; a dispatcher frozen or cut off past that sends nothing
more of its batch (the rows left go out after their backoff, from whoever holds the lease
then). A pass claims a batch of due rows
and, in the same transaction, makes each row's answer link; then sends each through its
channel and records the outcome (:mod:`pawflow.store.reach.outbox`). The claim commits before
the send, so a crash between the two sends that row again after its backoff, with the same
idempotency key, and a crash after the send but before the record does the same: a row is
never lost, and never sent as two different messages. Settled requests have their sent
copies updated in the same pass, and the webhook deliveries that are due are sent the same
way (:mod:`pawflow.channels.webhooks`), and so are the A2A push notifications
(:mod:`pawflow.store.reach.a2a_push`).

Deliveries go out side by side: each channel (mail, Slack, Apprise, Web Push, webhooks, A2A
pushes, the updates of settled copies) is a lane of its own with up to ``concurrency``
attempts in flight (``PAWFLOW_OUTBOX_CONCURRENCY``, 8), and a destination (``host:port`` of
a URL; the relay of mail or Slack; a person's Web Push devices) has at most one attempt in
flight: a pass claims only the oldest due delivery of each destination that is idle, and
never waits for a send to end. A slow receiver holds its own destination and one place in
its lane, never another user's deliveries nor another channel.

A pass runs every ``interval`` and also as soon as a delivery is committed: the transaction
that queues one says so (:data:`pawflow.store.reach.outbox.NOTICE`), heard at once in this process
and by LISTEN/NOTIFY in others on PostgreSQL; on SQLite another process's commit is seen by
the store's change watcher, and the lease holder then looks (one read) for anything due.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Generic, Protocol, TypeVar

from pawflow.channels.base import Channel, DeliveryError, Outgoing, outgoing, webhook_context
from pawflow.channels.webhooks import Attempt, WebhookSender
from pawflow.loops import Loop
from pawflow.records import Interaction
from pawflow.store import (
    NOTIFY_CHANNELS,
    OUTBOX_NOTICE,
    TOUCHED,
    A2APushTable,
    Hold,
    LeaseTerms,
    OutboxRow,
    PushConfig,
    PushDelivery,
    Store,
    Unit,
    Webhook,
    WebhookDelivery,
    WebhooksTable,
    lane_destination,
)
from pawflow.store import Transaction as Tx

log = logging.getLogger("pawflow.channels")

LEASE = "channels:outbox"
BATCH = 20
CONCURRENCY = 8
"""Attempts in flight at once per lane (``PAWFLOW_OUTBOX_CONCURRENCY``)."""
SETTLE = "settle"
WEBHOOKS = "webhook"
PUSHES = "a2a_push"


class _Delivery(Protocol):
    @property
    def id(self) -> str: ...


D = TypeVar("D", bound=_Delivery)
T = TypeVar("T")
D_contra = TypeVar("D_contra", bound=_Delivery, contravariant=True)


class _MarkFailed(Protocol[D_contra]):
    def __call__(
        self,
        tx: Tx,
        /,
        claimed: D_contra,
        reason: str,
        *,
        response_status: int | None = ...,
        permanent: bool = ...,
    ) -> bool: ...


@dataclass(frozen=True)
class Posting(Generic[D, T]):
    """One kind of HTTP delivery the dispatcher sends besides the outbox: webhook
    deliveries and A2A push notifications, each claimed, posted to its target and recorded
    the same way."""

    what: str
    gone: str
    """Why a delivery whose target was deleted meanwhile is given up."""
    lane: str
    claim_due: Callable[[Tx, datetime, int, Collection[str]], list[D]]
    target_of: Callable[[Tx, D], T | None]
    send: Callable[[T, D, datetime], Attempt]
    mark_sent: Callable[[Tx, D, int, datetime], bool]
    mark_failed: _MarkFailed[D]
    url_of: Callable[[T], str]
    prepare: Callable[[Tx, D], D] = lambda tx, delivery: delivery
    """The delivery as it is posted (a webhook's event gains its context)."""


def _title(u: Unit, conversation_id: str) -> str:
    found = u.conversations.find_conversation(conversation_id)
    return "" if found is None else found.title


def process_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class Dispatcher:
    """Sends the outbox through ``channels`` (by name), and webhook deliveries through
    ``webhooks`` (by default to public hosts only); links point at ``base_url``."""

    def __init__(
        self,
        store: Store,
        channels: Sequence[Channel],
        *,
        base_url: str,
        owner: str | None = None,
        interval: float = 2.0,
        lease_ttl: float | timedelta | None = None,
        batch: int = BATCH,
        webhooks: WebhookSender | None = None,
        concurrency: int = CONCURRENCY,
    ) -> None:
        self.store = store
        self.channels = {channel.name: channel for channel in channels}
        self.base_url = base_url.rstrip("/")
        self.owner = owner or process_owner()
        self.terms = LeaseTerms.of(lease_ttl)
        self.lease_ttl = self.terms.ttl
        self.hold = Hold(self.terms)
        self.batch = batch
        self.webhooks = webhooks or WebhookSender()
        self._webhook_posts = Posting[WebhookDelivery, Webhook](
            "webhook delivery",
            "the webhook was deleted",
            WEBHOOKS,
            lambda tx, now, limit, busy: Unit(tx, now).webhooks.claim_due(limit, busy),
            WebhooksTable.webhook_of.fn,
            self.webhooks.send,
            lambda tx, sent, status, now: Unit(tx, now).webhooks.mark_sent(sent, status),
            WebhooksTable.mark_failed.fn,
            lambda hook: hook.url,
            self._with_context,
        )
        self._push_posts = Posting[PushDelivery, PushConfig](
            "A2A push",
            "the push config was deleted",
            PUSHES,
            lambda tx, now, limit, busy: Unit(tx, now).a2a_push.claim_due(limit, busy),
            A2APushTable.config_of.fn,
            self.webhooks.push,
            lambda tx, sent, status, now: Unit(tx, now).a2a_push.mark_sent(sent, status),
            A2APushTable.mark_failed.fn,
            lambda config: config.url,
        )
        self.concurrency = max(1, concurrency)
        lanes = [c for c in NOTIFY_CHANNELS if c != "webhook"] + [SETTLE, WEBHOOKS, PUSHES]
        self._lanes = dict.fromkeys(lanes, 0)
        """Attempts in flight by lane."""
        self._busy: set[str] = set()
        """Destinations with an attempt in flight."""
        self._flight = threading.Condition()
        self._pool = ThreadPoolExecutor(
            max_workers=self.concurrency * len(lanes), thread_name_prefix="pawflow-send"
        )
        # An idle dispatcher renews its lease on every pass: one every third of its TTL.
        self.loop = Loop("outbox", self._pass, interval=min(interval, self.terms.renew_every))
        self._stop_listening: Callable[[], None] | None = None

    def start(self) -> None:
        self.loop.start()
        if self._stop_listening is None:
            self._stop_listening = self.store.db.listen(self._on_notice)

    def stop(self) -> None:
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None
        self.loop.stop()
        self._pool.shutdown(wait=False)  # what is in flight ends by its deadline, recorded
        for channel in self.channels.values():
            close = getattr(channel, "close", None)  # a channel's own threads (push's)
            if callable(close):
                close()
        try:
            with self.store.unit() as u:
                u.leases.release(LEASE, self.owner)
        except Exception:  # the lease runs out by itself
            log.warning("could not release the outbox lease", exc_info=True)

    def wake(self) -> None:
        self.loop.wake()

    def _on_notice(self, notice: str) -> None:
        """A delivery was queued: pass now. The store changed in a way that does not say
        what (another process's commit on SQLite, maybe beside one of this process's; a
        reconnection): the holder of the lease passes if anything is due. While an attempt
        is in flight it waits for its end, which wakes a pass: a due delivery it cannot
        claim yet (its destination is busy) does not make it pass again and again."""
        if notice == OUTBOX_NOTICE:
            self.loop.wake()
            return
        if notice not in ("changed", TOUCHED) or not self.hold.valid or self.in_flight():
            return
        try:
            with self.store.unit(write=False) as u:
                due = u.webhooks.anything_due()
        except Exception:  # the next pass finds it
            log.debug("could not look for due deliveries", exc_info=True)
            return
        if due:
            self.loop.wake()

    def step(self, *, wait: bool = True) -> int:
        """Claim what is due and send it; with ``wait``, until nothing more is due and every
        attempt has ended (what a test or a one-off run wants). Returns how many rows and
        deliveries it started."""
        done = 0
        while True:
            started = self._start_due()
            done += started
            if not wait:
                return done
            self.idle()
            if started == 0:
                return done

    def _pass(self) -> int:
        return self.step(wait=False)

    def idle(self, timeout: float | None = None) -> bool:
        """Wait until no attempt is in flight; whether none is."""
        with self._flight:
            return self._flight.wait_for(lambda: not self._busy, timeout)

    def in_flight(self) -> frozenset[str]:
        """The destinations with an attempt in flight now."""
        with self._flight:
            return frozenset(self._busy)

    def _start_due(self) -> int:
        """Renew the lease and claim, in one transaction, the oldest due delivery of each
        idle destination, as many as each lane has room for; start each on its own."""
        began = self.hold.begin()
        now = self.store.now()
        jobs: list[tuple[str, str, Callable[[], bool]]] = []
        with self.store.unit() as u:
            if not self._renew(u.tx, now, began):
                return 0
            with self._flight:
                busy = set(self._busy)
                room = {lane: self.concurrency - n for lane, n in self._lanes.items()}
            for channel in self._lanes:
                if channel in (SETTLE, WEBHOOKS, PUSHES) or room[channel] <= 0:
                    continue
                limit = min(room[channel], self.batch)
                for row in u.outbox.claim_due(limit, busy, channel=channel):
                    where = lane_destination(row.channel, row.address, row.recipient)
                    busy.add(where)
                    message = self._outgoing(u.tx, row)
                    jobs.append((channel, where, partial(self._send, row, message)))
            if room[SETTLE] > 0:
                for row in u.outbox.claim_settle(min(room[SETTLE], self.batch), busy):
                    where = lane_destination(row.channel, row.address, row.recipient)
                    busy.add(where)
                    jobs.append((SETTLE, where, partial(self._settle, row)))
            hooks, pushes = self._webhook_posts, self._push_posts
            jobs += self._claim_posts(u.tx, hooks, now, min(room[WEBHOOKS], self.batch), busy)
            jobs += self._claim_posts(u.tx, pushes, now, min(room[PUSHES], self.batch), busy)
        for lane, where, job in jobs:
            self._start(lane, where, job)
        return len(jobs)

    def _claim_posts(
        self, tx: Tx, posting: Posting[D, T], now: datetime, limit: int, busy: set[str]
    ) -> list[tuple[str, str, Callable[[], bool]]]:
        if limit <= 0:
            return []
        jobs: list[tuple[str, str, Callable[[], bool]]] = []
        for claimed in posting.claim_due(tx, now, limit, busy):
            delivery = posting.prepare(tx, claimed)
            target = posting.target_of(tx, delivery)
            where = lane_destination("", "" if target is None else posting.url_of(target))
            busy.add(where)
            jobs.append((posting.lane, where, partial(self._post, posting, delivery, target)))
        return jobs

    def _start(self, lane: str, where: str, job: Callable[[], bool]) -> None:
        with self._flight:
            self._lanes[lane] += 1
            self._busy.add(where)
        try:
            self._pool.submit(self._run, lane, where, job)
        except RuntimeError:  # stopping: the claim's backoff sends it again
            self._done(lane, where)

    def _run(self, lane: str, where: str, job: Callable[[], bool]) -> None:
        try:
            if self._trusted():
                job()
        except Exception:  # a failure to record is retried after the backoff
            log.exception("a delivery to %s failed to be recorded", where)
        finally:
            self._done(lane, where)
            self.loop.wake()  # the destination's next delivery may go now

    def _done(self, lane: str, where: str) -> None:
        with self._flight:
            self._lanes[lane] -= 1
            self._busy.discard(where)
            self._flight.notify_all()

    def _outgoing(self, tx: Tx, row: OutboxRow) -> Outgoing | None:
        u = Unit(tx, self.store.now)
        if row.channel not in self.channels:
            return None
        request = u.outbox.request_of(row.request_id)
        token = u.answer_links.create(
            request.id,
            row.recipient,
            expires_at=request.expires_at,
            outbox_id=row.id,
        )
        return outgoing(row, request, self.base_url, token, _title(u, request.conversation_id))

    def _with_context(self, tx: Tx, delivery: WebhookDelivery) -> WebhookDelivery:
        """A webhook's event with its ``context``: who asks, in which conversation (its
        title and page), what about and by when, as the other channels say it. Made from
        the request's record the event carries, so each attempt posts the same body."""
        try:
            event = json.loads(delivery.payload)
            record = Interaction.model_validate(event["data"]["interaction"])
        except (ValueError, KeyError, TypeError):
            return delivery  # an event of another shape: posted as it was written
        title = _title(Unit(tx, self.store.now), record.conversation_id)
        event["data"]["context"] = webhook_context(record, title, self.base_url)
        return replace(delivery, payload=json.dumps(event, separators=(",", ":")))

    def _send(self, row: OutboxRow, message: Outgoing | None) -> bool:
        """Send one claimed row and record how it went; False once the lease is lost."""
        channel = self.channels.get(row.channel)
        error: DeliveryError | None = None
        ref: str | None = None
        if channel is None or message is None:
            error = DeliveryError(
                f"the {row.channel} channel is not configured on this server", permanent=True
            )
        else:
            try:
                ref = channel.send(message)
            except DeliveryError as exc:
                error = exc
            except Exception as exc:  # an adapter's bug is this row's failure, not the pass's
                log.exception("the %s channel failed on delivery %s", row.channel, row.id)
                error = DeliveryError(f"{type(exc).__name__}: {exc}")
        began = self.hold.begin()
        now = self.store.now()
        with self.store.unit() as u:
            if error is None:
                u.outbox.mark_sent(row, ref)
            else:
                log.warning("delivery %s by %s failed: %s", row.id, row.channel, error.reason)
                u.outbox.mark_failed(row, error.reason, permanent=error.permanent)
            return self._renew(u.tx, now, began)

    def _post(self, posting: Posting[D, T], delivery: D, target: T | None) -> bool:
        """Send one claimed delivery and record it; False once the lease is lost."""
        if target is None:
            attempt = Attempt(None, posting.gone, permanent=True)
        else:
            attempt = posting.send(target, delivery, self.store.now())
        began = self.hold.begin()
        now = self.store.now()
        with self.store.unit() as u:
            if attempt.error is None:
                posting.mark_sent(u.tx, delivery, attempt.status or 0, now)
            else:
                log.warning("%s %s failed: %s", posting.what, delivery.id, attempt.error)
                posting.mark_failed(
                    u.tx,
                    delivery,
                    attempt.error,
                    response_status=attempt.status,
                    permanent=attempt.permanent,
                )
            return self._renew(u.tx, now, began)

    def _renew_now(self) -> bool:
        """Renew the lease, if still held (never take it anew: what this process claimed
        may have gone out from another meanwhile)."""
        with self.store.unit() as u:
            return u.leases.renew(LEASE, self.owner, self.lease_ttl)

    def _renew(self, tx: Tx, now: datetime, began: float) -> bool:
        """Take or renew the lease in ``tx``; the hold follows once ``tx`` commits (``began``:
        read before ``now``)."""
        if Unit(tx, now).leases.acquire(LEASE, self.owner, self.lease_ttl):
            tx.after_commit(lambda: self.hold.renewed(began))
            return True
        self.hold.lost()
        return False

    def _trusted(self) -> bool:
        """Whether the lease was renewed recently enough to send under (no statement), or
        is renewed now, still this process's (a statement only after a pause)."""
        if self.hold.confirm(self._renew_now):
            return True
        age = self.hold.age
        log.warning(
            "the outbox lease %s; the rest of this batch is left to whoever holds it next",
            "went to another process"
            if age is None
            else f"was last renewed {age:.1f} s ago and could not be renewed now",
        )
        return False

    def _settle(self, row: OutboxRow) -> bool:
        channel = self.channels.get(row.channel)
        error: str | None = None
        with self.store.unit(write=False) as u:
            request = u.outbox.request_of(row.request_id)
        if channel is not None:
            try:
                channel.settle(row, request)
            except DeliveryError as exc:
                error = exc.reason
            except Exception as exc:
                log.exception("the %s channel failed to update delivery %s", row.channel, row.id)
                error = f"{type(exc).__name__}: {exc}"
        with self.store.unit() as u:
            return u.outbox.mark_settled(row, error=error)

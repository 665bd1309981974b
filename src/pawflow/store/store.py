"""The store: one interface over SQLite and PostgreSQL for everything PawFlow keeps.

Every method that changes state is one transaction. Records come back as pydantic models;
backend errors never escape untranslated."""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from pawflow import durations
from pawflow.clock import Clock, SystemClock
from pawflow.errors import InvalidInput, NotPending
from pawflow.records import Conversation, Event, FileRef, Interaction, Message, Requester
from pawflow.store.engine import migrations
from pawflow.store.engine.database import Database, Tx, sql
from pawflow.store.governance.assignments import escalate_due, remind_due
from pawflow.store.ledger import conversations as convs
from pawflow.store.ledger import events
from pawflow.store.people import invitations
from pawflow.store.reach import file_links
from pawflow.store.runtime import answering, asking, turns
from pawflow.store.runtime import continuations as cont
from pawflow.store.runtime import interactions as inter
from pawflow.store.runtime.continuations import Continuation, Payload, SignalValue
from pawflow.store.runtime.delivery import Delivery, DeliveryHandler
from pawflow.store.runtime.dispatch import Dispatcher
from pawflow.store.runtime.interactions import Asked, Park, Question
from pawflow.store.runtime.reports import SWEEP_BATCH, SweepReport
from pawflow.store.unit import Unit, doors

DEFAULT_PAYLOAD_CAP = 1024 * 1024
DEFAULT_FILE_CAP = 10 * 1024 * 1024

SweepStep = Callable[["Store"], dict[str, int]]
"""An extra step of each sweeper pass; returns its counts by name."""

DEPRECATED = "Store.{} is deprecated: use Store.ask(Question(...), park=Park(...))"
"""What the older spellings of :meth:`Store.ask` warn (they go in a later release)."""


@doors
class Store:
    """Everything PawFlow keeps, over SQLite or PostgreSQL (``db``), with its ``clock``.

    Every public method is one transaction and returns records (:mod:`pawflow.records`).
    Reads are scoped to a ``user``; what is not theirs is ``NotFound``, like what does not
    exist. ``payload_cap`` and ``file_cap`` bound parked payloads and uploads. Its methods
    compose several rules; everything else is a table's, reached through :meth:`unit`
    (``u.turns``, ``u.messages``, ``u.leases``, ``u.accountability``, …).
    """

    def __init__(
        self,
        db: Database,
        *,
        clock: Clock | None = None,
        payload_cap: int = DEFAULT_PAYLOAD_CAP,
        file_cap: int = DEFAULT_FILE_CAP,
    ) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()
        self.payload_cap = payload_cap
        self.file_cap = file_cap
        self._dispatch = Dispatcher(db, self.now)
        self.deliveries = self._dispatch.registry
        self._sweep_steps: list[SweepStep] = []

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgres``."""
        return self.db.dialect

    def migrate(self) -> int:
        """Bring the schema up to date; returns its version."""
        return migrations.migrate(self.db)

    def close(self) -> None:
        """Stop listening for change notices and close the database."""
        self._dispatch.close()
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> datetime:
        """The store's clock (a ``FakeClock`` in tests)."""
        return self.clock.now()

    def ping(self) -> None:
        """Reach the database once; raises ``StoreUnavailable`` when it cannot be reached."""
        with self.db.transaction(write=False) as tx:
            sql(tx).one("SELECT 1 AS ok")

    def problem(self) -> str | None:
        """What is wrong with the database as this process last found it (unreachable,
        its disk full), and for how long; None while it works. Known without asking it."""
        return self.db.availability.describe()

    @contextlib.contextmanager
    def unit(self, *, write: bool = True, tx: Tx | None = None) -> Iterator[Unit]:
        """One transaction (or ``tx``, a caller's) with the tables bound to it: ``u.turns``, …"""
        with self._within(tx, write) as inner:
            yield Unit(inner, self.now)

    def transaction(self, *, write: bool = True) -> contextlib.AbstractContextManager[Tx]:
        """A bare transaction, for the store's own modules (above it, :meth:`unit`)."""
        return self.db.transaction(write=write)

    # -- users, conversations, uploads ----------------------------------------------------

    def has_users(self) -> bool:
        """Whether anyone has signed up yet (a fresh database has no one)."""
        with self.db.transaction(write=False) as tx:
            return convs.has_users(tx)

    def ensure_user(self, user: str) -> str:
        """Create ``user`` unless they exist; returns the name."""
        with self.db.transaction() as tx:
            return convs.ensure_user(tx, user, self.now())

    def create_conversation(self, owner: str, title: str = "") -> Conversation:
        """A new conversation owned by ``owner`` (created as a user if new)."""
        with self.db.transaction() as tx:
            return convs.create_conversation(tx, owner, title, self.now())

    def find_conversation(self, conversation_id: str) -> Conversation | None:
        """Any conversation, as its owner sees it (for operators' tools); None if unknown."""
        with self.db.transaction(write=False) as tx:
            return convs.find_conversation(tx, conversation_id)

    def get_conversation(self, conversation_id: str, *, user: str) -> Conversation:
        """The conversation as ``user`` (any member) sees it."""
        with self.db.transaction(write=False) as tx:
            return convs.get_conversation(tx, conversation_id, user=user)

    def list_conversations(self, *, user: str) -> list[Conversation]:
        """Every conversation ``user`` owns or was shared, oldest first."""
        with self.db.transaction(write=False) as tx:
            return convs.list_conversations(tx, user=user)

    def share_conversation(
        self,
        conversation_id: str,
        *,
        user: str,
        with_user: str,
        access: Literal["read", "write"],
        known_users_only: bool = False,
    ) -> Conversation:
        """The owner ``user`` gives ``with_user`` read or write access (again: changes it).

        ``known_users_only`` refuses a ``with_user`` who does not exist yet (rather than
        creating them); only the owner learns that, after the ownership check.
        """
        with self.db.transaction() as tx:
            return convs.share_conversation(
                tx,
                conversation_id,
                user=user,
                with_user=with_user,
                access=access,
                now=self.now(),
                known_users_only=known_users_only,
            )

    def invite_to_conversation(
        self,
        conversation_id: str,
        *,
        user: str,
        with_user: str,
        access: Literal["read", "write"],
    ) -> Conversation:
        """Offer a conversation to another user, who joins by accepting (owner only)."""
        with self.db.transaction() as tx:
            return invitations.invite(
                tx, conversation_id, user=user, with_user=with_user, access=access, now=self.now()
            )

    def list_invitations(self, *, user: str) -> list[dict[str, Any]]:
        """The invitations waiting for ``user`` to accept or decline."""
        with self.db.transaction(write=False) as tx:
            return invitations.invitations_for(tx, user)

    def accept_invitation(self, conversation_id: str, *, user: str) -> Conversation:
        """Join the conversation ``user`` was invited to; NotFound without an invitation."""
        with self.db.transaction() as tx:
            return invitations.accept(tx, conversation_id, user=user, now=self.now())

    def decline_invitation(self, conversation_id: str, *, user: str) -> None:
        """Drop the invitation; the conversation never appears for ``user``."""
        with self.db.transaction() as tx:
            invitations.decline(tx, conversation_id, user=user)

    def add_file(self, owner: str, name: str, media_type: str, content: bytes) -> FileRef:
        """Keep an upload of ``owner`` (at most ``file_cap`` bytes)."""
        with self.db.transaction() as tx:
            return convs.add_file(
                tx, owner, name, media_type, content, max_bytes=self.file_cap, now=self.now()
            )

    def discard_files(self, owner: str, file_ids: Collection[str]) -> int:
        """Remove ``owner``'s uploads that answer nothing (their answer was refused); how many."""
        with self.db.transaction() as tx:
            return convs.discard_files(tx, owner, file_ids)

    def get_file(self, file_id: str, *, user: str) -> FileRef:
        """An upload ``user`` made; anyone else's is not found."""
        with self.db.transaction(write=False) as tx:
            return convs.get_file(tx, file_id, user=user)

    def readable_file(self, file_id: str, *, user: str) -> FileRef:
        """An upload ``user`` made, or one answering a request they may read."""
        with self.db.transaction(write=False) as tx:
            return file_links.readable_file(tx, file_id, user=user)

    # -- interactions ---------------------------------------------------------------------

    def request_interaction(
        self,
        owner: str,
        conversation_id: str,
        kind: str,
        message: str,
        *,
        options: object = None,
        title: str | None = None,
        response_schema: dict[str, Any] | None = None,
        expires_in: str | int | timedelta | None = None,
        expires_at: str | datetime | None = None,
        requester: Requester | dict[str, Any] | None = None,
        signal_family: Literal["confirmation", "interaction"] | None = None,
        ui_surface: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        policy: Mapping[str, Any] | None = None,
        notify: Sequence[str] | None = None,
    ) -> Interaction:
        """Publish a question for ``owner``, who needs write access to the conversation
        (an ``idempotency_key`` of theirs asked again returns the first request), and its
        notifications: to the ``notify`` channels, or by default the owner's own; ``policy``:
        who answers and what happens when nobody does (docs/governance.md). Deprecated
        spelling of :meth:`ask` with a :class:`Question`."""
        warnings.warn(DEPRECATED.format("request_interaction"), DeprecationWarning, stacklevel=2)
        question = Question(
            owner,
            conversation_id,
            kind,
            message,
            options=options,
            title=title,
            response_schema=response_schema,
            expires_in=expires_in,
            expires_at=expires_at,
            requester=requester,
            signal_family=signal_family,
            ui_surface=ui_surface,
            idempotency_key=idempotency_key,
            policy=policy,
            notify=notify,
        )
        return self.ask(question).interaction

    def ask_and_park(
        self,
        owner: str,
        conversation_id: str,
        kind: str,
        message: str,
        *,
        target: str,
        payload: Payload | Callable[[Interaction], Payload] = b"",
        options: object = None,
        title: str | None = None,
        response_schema: dict[str, Any] | None = None,
        expires_in: str | int | timedelta | None = None,
        expires_at: str | datetime | None = None,
        requester: Requester | dict[str, Any] | None = None,
        signal_family: Literal["confirmation", "interaction"] | None = None,
        ui_surface: dict[str, Any] | None = None,
        tx: Tx | None = None,
        policy: Mapping[str, Any] | None = None,
        notify: Sequence[str] | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[Interaction, Continuation]:
        """Ask as :meth:`request_interaction` does and park a continuation for ``target`` on
        the answer's signal. Deprecated spelling of :meth:`ask` with ``park``."""
        warnings.warn(DEPRECATED.format("ask_and_park"), DeprecationWarning, stacklevel=2)
        question = Question(
            owner,
            conversation_id,
            kind,
            message,
            options=options,
            title=title,
            response_schema=response_schema,
            expires_in=expires_in,
            expires_at=expires_at,
            requester=requester,
            signal_family=signal_family,
            ui_surface=ui_surface,
            idempotency_key=idempotency_key,
            policy=policy,
            notify=notify,
        )
        interaction, parked = self.ask(question, park=Park(target, payload), tx=tx)
        assert parked is not None
        return interaction, parked

    def ask(self, question: Question, *, park: Park | None = None, tx: Tx | None = None) -> Asked:
        """Publish ``question`` (:class:`Question`) and, with ``park``, park a continuation
        on its answer's signal in the same transaction: a requester that asks and waits.

        The question's idempotency key is honoured either way: asked again, the first
        request comes back, with the continuation parked for it then (none is parked twice).
        Inside a delivery handler, pass its ``tx``: the question then commits with the
        delivery, or not at all.
        """
        now = self.now()
        with self._within(tx) as opened:
            interaction = question.publish(opened, now)
            parked = None
            if park is not None:
                parked = asking.park_for(opened, question, interaction, park, now, self.payload_cap)
            if tx is None:
                self._deliver_here(opened, now)
        return Asked(interaction, parked)

    def get_interaction(self, request_id: str, *, user: str) -> Interaction:
        """One of ``user``'s requests (reads stay with the owner)."""
        with self.db.transaction(write=False) as tx:
            return inter.get(tx, request_id, user=user)

    def list_interactions(
        self,
        *,
        user: str,
        status: str | None = None,
        conversation_id: str | None = None,
        kind: str | Sequence[str] | None = None,
    ) -> list[Interaction]:
        """All of the user's interactions that match, oldest first (every page)."""
        found: list[Interaction] = []
        cursor: str | None = None
        while True:
            page, cursor = self.page_interactions(
                user=user,
                status=status,
                conversation_id=conversation_id,
                kind=kind,
                limit=1000,
                cursor=cursor,
            )
            found.extend(page)
            if cursor is None:
                return found

    def page_interactions(
        self,
        *,
        user: str,
        status: str | None = None,
        conversation_id: str | None = None,
        kind: str | Sequence[str] | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> tuple[list[Interaction], str | None]:
        """A page of the user's interactions, oldest first, and the cursor of the next."""
        with self.db.transaction(write=False) as tx:
            return inter.list_for(
                tx,
                user=user,
                status=status,
                conversation_id=conversation_id,
                kind=kind,
                limit=limit,
                cursor=cursor,
            )

    def respond_interaction(
        self,
        request_id: str,
        answer: Any,
        *,
        user: str,
        kinds: Collection[str] | None = None,
        via: str = "api",
        seq: int | None = None,
        also: Callable[[Tx, Interaction], None] | None = None,
    ) -> Interaction:
        """Answer a pending request as ``user`` (owner or writer; of a kind in ``kinds`` if given)
        from ``via`` (``seq``: a chat answer's message), in one transaction that reads the
        request once; ``also(tx, record)`` runs in it. ``NotPending`` once it left
        ``pending``."""
        now = self.now()
        with self.db.transaction() as tx:
            found = answering.read_answering(tx, request_id)
            normalized = answering.prepare_answer(
                tx, found, answer, user=user, now=now, kinds=kinds
            )
            outcome = answering.respond(
                tx, found, normalized, user=user, now=now, kinds=kinds, via=via, seq=seq
            )
            if also is not None and not isinstance(outcome, NotPending):
                also(tx, outcome)  # a chat turn ends with the answer; what it raises undoes it
            self._deliver_here(tx, now)
        if isinstance(outcome, NotPending):
            raise outcome
        return outcome

    def pending_request(self, conversation_id: str) -> Interaction | None:
        """The newest request of a conversation still waiting for an answer: what the
        conversation waits on (no access check: for the runtime and operators' tools)."""
        with self.db.transaction(write=False) as tx:
            return inter.newest_pending(tx, conversation_id, self.now())

    def answerable_interaction(self, request_id: str, *, user: str) -> Interaction:
        """The request if ``user`` may answer it (pending or not); else NotFound."""
        with self.db.transaction(write=False) as tx:
            return Interaction.from_row(inter.answerable(tx, request_id, user, None))

    def cancel_interaction(
        self, request_id: str, *, user: str, kinds: Collection[str] | None = None
    ) -> Interaction:
        """Cancel a pending request, as :meth:`respond_interaction` answers one."""
        now = self.now()
        with self.db.transaction() as tx:
            cancelled = inter.cancel(tx, request_id, user=user, now=now, kinds=kinds)
            self._deliver_here(tx, now)
        return cancelled

    # -- durable signals and continuations -------------------------------------------------

    def notify_signal(self, signal_id: str, value: Any = None) -> int:
        """Fire a signal; returns how many parked continuations it resolved."""
        if not isinstance(signal_id, str) or not signal_id:
            raise InvalidInput("signal_id must be a non-empty string")
        now = self.now()
        with self.db.transaction() as tx:
            resolved = cont.fire_signal(tx, signal_id, value, now)
            self._deliver_here(tx, now)
        return resolved

    def get_signal(self, signal_id: str) -> SignalValue | None:
        """The signal's latest value, or None if it never fired."""
        with self.db.transaction(write=False) as tx:
            return cont.read_signal(tx, signal_id)

    def wait_signal(self, signal_id: str, timeout: float) -> SignalValue | None:
        """Block until the signal has fired (or already had), at most ``timeout`` seconds."""
        self._dispatch.ensure_listening()
        deadline = time.monotonic() + timeout
        while True:
            seen = self._dispatch.changes()
            fired = self.get_signal(signal_id)
            remaining = deadline - time.monotonic()
            if fired is not None or remaining <= 0:
                return fired
            self._dispatch.wait_change(seen, remaining)

    def park(
        self,
        target: str,
        *,
        signal_id: str | None = None,
        timeout: str | int | timedelta | None = None,
        until: str | datetime | None = None,
        payload: Payload = b"",
    ) -> Continuation:
        """Park a continuation for ``target`` on a signal (optional ``timeout``) or ``until``,
        carrying ``payload`` (bytes, or a JSON value kept as its JSON)."""
        now = self.now()
        if timeout is not None and until is not None:
            raise InvalidInput("give a timeout or an until, not both")
        deadline = (
            durations.parse_deadline(until)
            if until is not None
            else durations.deadline_after(now, timeout)
        )
        with self.db.transaction() as tx:
            parked = cont.park(
                tx,
                target,
                now=now,
                payload=payload,
                payload_cap=self.payload_cap,
                signal_id=signal_id,
                deadline=deadline,
            )
            self._deliver_here(tx, now)
        return parked

    def get_continuation(self, continuation_id: str) -> Continuation:
        """A parked or resolved continuation by id."""
        with self.db.transaction(write=False) as tx:
            return cont.get_continuation(tx, continuation_id)

    def cancel_continuation(self, continuation_id: str) -> bool:
        """Withdraw a parked continuation; False if it was no longer parked."""
        now = self.now()
        with self.db.transaction() as tx:
            cancelled = cont.cancel_continuation(tx, continuation_id, now)
            self._deliver_here(tx, now)
        return cancelled

    def pending_continuations(self, target: str, *, tx: Tx | None = None) -> int:
        """How many continuations for ``target`` are parked or not delivered yet."""
        with self._within(tx, write=False) as read:
            return cont.pending_for_target(read, target)

    def deliver_due(self, limit: int = SWEEP_BATCH, *, target: str | None = None) -> int:
        """Hand resolved continuations to the handlers registered in this process; with
        ``target``, that requester's whether due or not (its queue has room again)."""
        return self._dispatch.deliver_due(limit, target=target)

    def register_handler(
        self, kind: str, handler: DeliveryHandler | Callable[[Delivery], None]
    ) -> None:
        """Deliver continuations for targets ``kind:…`` to ``handler`` from now on.

        Deliveries happen as soon as anything resolves, here or in another process; the
        sweeper retries those a handler could not take.
        """
        self._dispatch.register(kind, handler)

    def _within(self, tx: Tx | None, write: bool = True) -> contextlib.AbstractContextManager[Tx]:
        """``tx`` when the caller has one open (a delivery's), else a new transaction."""
        return contextlib.nullcontext(tx) if tx is not None else self.db.transaction(write=write)

    def _deliver_here(self, tx: Tx, now: datetime) -> None:
        """Deliver what ``tx`` resolved to this process's handlers, before it commits."""
        self._dispatch.deliver_here(tx, now)

    # -- sweeping -------------------------------------------------------------------------

    def add_sweep_step(self, step: SweepStep) -> Callable[[], None]:
        """Run ``step`` at the end of every sweep pass; call what it returns to stop."""
        self._sweep_steps.append(step)
        return lambda: self._sweep_steps.remove(step) if step in self._sweep_steps else None

    def sweep(self) -> SweepReport:
        """One sweeper pass: expire, release what is due, deliver, take the reminders and
        escalations that are due, then the extra steps."""
        report = SweepReport()
        now = self.now()
        # Deliveries wait for the end of the pass, so the report counts them in one place.
        with self._dispatch.held():
            for name, step in (("expired", inter.expire_due), ("released", cont.release_due)):
                report.add({name: self._batches(step, now)})
        report.add({"delivered": self.deliver_due()})
        # Escalate first: a reminder due then reaches the newcomers too.
        for name, step in (("escalated", escalate_due), ("reminded", remind_due)):
            report.add({name: self._batches(step, now)})
        for extra in list(self._sweep_steps):
            report.add(extra(self))
        return report

    def _batches(self, step: Callable[[Tx, datetime, int], int], now: datetime) -> int:
        """Run ``step`` a batch (a transaction) at a time until a batch falls short."""
        total = 0
        while True:
            with self.db.transaction() as tx:
                done = step(tx, now, SWEEP_BATCH)
            total += done
            if done < SWEEP_BATCH:
                return total

    # -- history and notifications -------------------------------------------------------

    def post_message(self, conversation_id: str, content: str, *, user: str) -> Message:
        """``user``'s own message, where they need write access, and the turn that answers
        it: one transaction, so no crash loses the turn."""
        with self.db.transaction() as tx:
            convs.require_write(tx, conversation_id, user)
            message, _ = turns.post_user_message(
                tx, conversation_id, content, author=user, now=self.now()
            )
        return message

    # -- events ---------------------------------------------------------------------------

    def events_after(self, user: str, after_seq: int = 0, limit: int = 500) -> list[Event]:
        """The user's durable events after ``after_seq``, oldest first."""
        with self.db.transaction(write=False) as tx:
            return events.events_after(tx, user, after_seq, limit)

    def announce(self, conversation_id: str, event_type: str, data: dict[str, Any]) -> None:
        """Log an event for everyone in the conversation (readers too)."""
        with self.db.transaction() as tx:
            audience = convs.conversation_audience(tx, conversation_id, writers_only=False)
            events.append_event(tx, audience, conversation_id, event_type, data, self.now())

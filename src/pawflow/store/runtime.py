"""The store's side for the runtime: who answers a conversation, its recent history, the
durable turn queue, and leases. :class:`~pawflow.store.Store` has these methods; they live
here to keep each module to one concern."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from pawflow.records import Interaction, Message
from pawflow.store import interactions, leases, messages, turns
from pawflow.store.database import Database


class RuntimeStore:
    db: Database

    def now(self) -> datetime:
        """The store's clock (the facade provides it)."""
        raise NotImplementedError

    # -- who answers, and what was said ------------------------------------------------------

    def assign_agent(self, conversation_id: str, agent: str) -> None:
        """Have ``agent`` answer the conversation's messages from now on."""
        with self.db.transaction() as tx:
            turns.assign_agent(tx, conversation_id, agent, self.now())

    def assigned_agent(self, conversation_id: str) -> str | None:
        """The agent answering the conversation's messages, if any."""
        with self.db.transaction(write=False) as tx:
            return turns.assigned_agent(tx, conversation_id)

    def pending_request(self, conversation_id: str) -> Interaction | None:
        """The newest request of a conversation still waiting for an answer: what the
        conversation waits on (no access check: for the runtime and operators' tools)."""
        with self.db.transaction(write=False) as tx:
            return interactions.newest_pending(tx, conversation_id, self.now())

    def recent_messages(
        self, conversation_id: str, limit: int, *, until: str | None = None
    ) -> list[Message]:
        """The last ``limit`` messages, oldest first, up to the message ``until`` (a queued
        message: later ones are later turns). No access check: for the runtime."""
        with self.db.transaction(write=False) as tx:
            return messages.recent(tx, conversation_id, limit, until)

    # -- leases: one live owner at a time ----------------------------------------------------

    def acquire_lease(self, name: str, owner: str, ttl: timedelta) -> bool:
        """Take or renew the lease ``name`` for ``owner``; False while another holds it."""
        with self.db.transaction() as tx:
            return leases.acquire(tx, name, owner, self.now(), ttl)

    def release_lease(self, name: str, owner: str) -> bool:
        """Give the lease up, if ``owner`` holds it."""
        with self.db.transaction() as tx:
            return leases.release(tx, name, owner)

    def live_leases(self, prefix: str = "") -> list[leases.Lease]:
        """The leases not yet run out whose names start with ``prefix``."""
        with self.db.transaction(write=False) as tx:
            return leases.held(tx, prefix, self.now())

    # -- the turn queue ------------------------------------------------------------------

    def due_turns(self, agents: Sequence[str] | None, limit: int) -> list[turns.QueuedTurn]:
        """Turns ready to run for ``agents`` (and turns of no agent); None: every agent."""
        with self.db.transaction(write=False) as tx:
            return turns.due(tx, self.now(), agents, limit)

    def claim_turn(self, turn_id: str, owner: str, lease: timedelta) -> turns.QueuedTurn | None:
        """Take a due turn to run under a lease; None when another process has it."""
        with self.db.transaction() as tx:
            return turns.claim(tx, turn_id, owner, self.now(), lease)

    def renew_turns(
        self, running: Sequence[tuple[turns.TurnKey, str | None]], lease: timedelta
    ) -> list[turns.TurnKey]:
        """Heartbeat of running turns (with where each is); returns those no longer ours."""
        lost = []
        with self.db.transaction() as tx:
            for key, stage in running:
                if not turns.renew(tx, key, self.now(), lease, stage):
                    lost.append(key)
        return lost

    def complete_turn(
        self,
        key: turns.TurnKey,
        reply: str | None = None,
        *,
        role: messages.Role = "assistant",
        author: str = "",
        data: dict[str, Any] | None = None,
    ) -> tuple[bool, Message | None]:
        """End a turn and post its reply, both or neither: the reply is written once."""
        with self.db.transaction() as tx:
            return turns.complete(
                tx, key, self.now(), reply=reply, role=role, author=author, data=data
            )

    def open_turns(self, conversation_id: str) -> list[turns.QueuedTurn]:
        """The conversation\'s turns still queued or running, oldest first."""
        with self.db.transaction(write=False) as tx:
            return turns.open_turns(tx, conversation_id)

    def get_history(
        self, conversation_id: str, *, user: str, after_seq: int = 0, limit: int = 500
    ) -> list[Message]:
        """The messages after ``after_seq`` that ``user`` (any member) may read, oldest first."""
        with self.db.transaction(write=False) as tx:
            return messages.history(
                tx, conversation_id, user=user, after_seq=after_seq, limit=limit
            )

    def notify_user(
        self,
        user: str,
        message: str,
        *,
        title: str | None = None,
        urgency: messages.Urgency = "normal",
        conversation_id: str | None = None,
    ) -> Literal["sent", "queued"]:
        """Tell ``user`` something: ``sent`` when a client of theirs is live, else ``queued``."""
        with self.db.transaction() as tx:
            return messages.notify_user(
                tx,
                user,
                message=message,
                title=title,
                urgency=urgency,
                conversation_id=conversation_id,
                now=self.now(),
            )

    def mark_live(self, client_id: str, user: str, ttl: timedelta) -> None:
        """``user`` has a live client (``client_id``) for ``ttl``: notices go there."""
        with self.db.transaction() as tx:
            messages.mark_live(tx, client_id, user, ttl, self.now())

    def drop_live(self, client_id: str) -> None:
        """The live client went away."""
        with self.db.transaction() as tx:
            messages.drop_live(tx, client_id)

"""``ChatService``: runs a store's agents — their turns, their wakeups, their checkpoints.

``start()`` registers the ``agent`` delivery handler (an answer to an agent's question,
consumed together with the wakeup it schedules), adds the sweep steps (expired checkpoints
and session continuations; due wakeups), and starts the wakeup poller. Chat plugins plug in
through :attr:`ChatService.chat`. :meth:`ChatService.handle_message` is what the
server calls for each user message.

Turns of one conversation never overlap in this process: a user message waits for the turn
in progress; a wakeup whose conversation is busy is left for the next pass.
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from pawflow.agent import wakeups
from pawflow.agent.builtin_tools import wakeup_text
from pawflow.agent.checkpoints import DEFAULT_TTL, CheckpointStore
from pawflow.agent.loop import AgentLoop
from pawflow.agent.spec import AgentSpec
from pawflow.chat.intercepts import Intercept, InterceptChain
from pawflow.chat.pipeline import Pipeline, default_pipeline
from pawflow.chat.services import ChatServices
from pawflow.chat.sessions import SessionRegistry, expire_due
from pawflow.chat.turn import Turn
from pawflow.clock import to_millis
from pawflow.errors import InvalidInput, NotFound
from pawflow.records import Message
from pawflow.store import Store
from pawflow.store.database import Tx
from pawflow.store.delivery import Delivery

log = logging.getLogger("pawflow.agent")

TARGET_KIND = "agent"
WAKEUP_BATCH = 20

_running: weakref.WeakKeyDictionary[Store, ChatService] = weakref.WeakKeyDictionary()


def running_service(store: Store) -> ChatService | None:
    """The started service of ``store`` in this process, if any."""
    return _running.get(store)


# --- which agent answers a conversation -----------------------------------------------


def assign(tx: Tx, conversation_id: str, agent: str, now_millis: int) -> None:
    if tx.one("SELECT 1 AS found FROM conversations WHERE id = ?", (conversation_id,)) is None:
        raise NotFound("conversation")
    tx.execute(
        "INSERT INTO agent_assignments (conversation_id, agent, assigned_at) VALUES (?, ?, ?)"
        " ON CONFLICT (conversation_id) DO UPDATE SET agent = excluded.agent,"
        " assigned_at = excluded.assigned_at",
        (conversation_id, agent, now_millis),
    )


def unassign(tx: Tx, conversation_id: str) -> bool:
    return bool(
        tx.execute("DELETE FROM agent_assignments WHERE conversation_id = ?", (conversation_id,))
    )


def assigned(tx: Tx, conversation_id: str) -> str | None:
    row = tx.one(
        "SELECT agent FROM agent_assignments WHERE conversation_id = ?", (conversation_id,)
    )
    return None if row is None else str(row["agent"])


class _AgentDelivery:
    """The ``agent`` delivery handler: turns an answer into a scheduled wakeup."""

    def __init__(self, service: ChatService) -> None:
        self.service = service

    def accepts(self, target: str) -> bool:
        # An agent this process does not run stays resolved, for a process that does.
        return self.service.agent(target.split(":", 1)[1]) is not None

    def deliver(self, delivery: Delivery) -> None:
        self.service.schedule_wakeup(delivery)


class ChatService:
    def __init__(
        self,
        store: Store,
        agents: Iterable[AgentSpec] = (),
        *,
        poll_interval: float | None = 1.0,
        checkpoint_ttl: timedelta = DEFAULT_TTL,
        lease: timedelta = wakeups.DEFAULT_LEASE,
        intercepts: Iterable[Intercept] = (),
        continuation_ttl: str | timedelta = "7d",
    ) -> None:
        self.store = store
        self.checkpoints = CheckpointStore(store, ttl=checkpoint_ttl)
        self.sessions = SessionRegistry(store, default_ttl=continuation_ttl)
        self.lease = lease
        self._agents: dict[str, AgentSpec] = {}
        for spec in agents:
            self.add_agent(spec)
        self.intercepts = InterceptChain.packaged(intercepts)
        self.pipeline: Pipeline = default_pipeline(self, self.intercepts)
        # What plugins register through: intercepts, agents, tools, session continuations.
        self.chat = ChatServices(
            store, host=self, intercepts=self.intercepts, sessions=self.sessions
        )
        self.poller = (
            None
            if poll_interval is None
            else wakeups.WakeupPoller(self.run_due, interval=poll_interval)
        )
        self._handler = _AgentDelivery(self)
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._started = False

    # -- agents and assignments ---------------------------------------------------------

    def add_agent(self, spec: AgentSpec) -> AgentSpec:
        if spec.name in self._agents:
            raise InvalidInput(f"an agent named {spec.name!r} is already registered")
        self._agents[spec.name] = spec
        return spec

    def agent(self, name: str) -> AgentSpec | None:
        return self._agents.get(name)

    @property
    def agents(self) -> list[str]:
        return sorted(self._agents)

    def assign(self, conversation_id: str, agent: str) -> None:
        """Have ``agent`` answer the messages of a conversation from now on."""
        if agent not in self._agents:
            raise InvalidInput(f"unknown agent {agent!r}")
        with self.store.transaction() as tx:
            assign(tx, conversation_id, agent, to_millis(self.store.now()))

    def assigned_agent(self, conversation_id: str) -> str | None:
        with self.store.transaction(write=False) as tx:
            return assigned(tx, conversation_id)

    def loop_for(self, spec: AgentSpec) -> AgentLoop:
        return spec.loop(self.checkpoints)

    def conversation_lock(self, conversation_id: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(conversation_id, threading.Lock())

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        _running[self.store] = self
        self.store.sweep_steps.append(self._sweep_step)
        self.store.register_handler(TARGET_KIND, self._handler)
        if self.poller is not None:
            self.poller.start()

    def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        self.store.deliveries.unregister(TARGET_KIND)
        if self._sweep_step in self.store.sweep_steps:
            self.store.sweep_steps.remove(self._sweep_step)
        if self.poller is not None:
            self.poller.stop()
        if _running.get(self.store) is self:
            del _running[self.store]

    def __enter__(self) -> ChatService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _sweep_step(self, store: Store) -> dict[str, int]:
        counts = {"checkpoints_expired": self.checkpoints.sweep_expired(), **expire_due(store)}
        if self.poller is not None and self.poller.running:
            self.poller.wake()  # picks up wakeups other processes scheduled
        else:
            counts["wakeups"] = self.run_due()
        return counts

    def _wake_poller(self) -> None:
        if self.poller is not None:
            self.poller.wake()

    # -- answers become wakeups -----------------------------------------------------------

    def schedule_wakeup(self, delivery: Delivery) -> None:
        """Write the wakeup for a consumed continuation, in the transaction consuming it."""
        continuation = delivery.continuation
        try:
            payload: dict[str, Any] = json.loads(continuation.payload.decode("utf-8"))
            agent = str(payload["agent"])
            request_id = str(payload["request_id"])
            question = str(payload["question"])
            conversation_id = str(payload["conversation_id"])
            user = str(payload["user"])
        except (ValueError, KeyError, TypeError) as exc:
            # Retrying cannot fix a payload; consuming it keeps it from blocking the queue.
            log.error("agent continuation %s has an unreadable payload: %s", continuation.id, exc)
            return
        if continuation.outcome == "cancelled":
            return  # the wait itself was withdrawn: there is nothing to tell the agent
        value = continuation.value if isinstance(continuation.value, dict) else {}
        status = (
            str(value.get("status") or "expired")
            if continuation.outcome == "signaled"
            else "expired"
        )
        answer = value.get("answer") if status == "answered" else None
        data = {
            "purpose": payload.get("purpose", "confirmation"),
            "request_id": request_id,
            "question": question,
            "status": status,
            "answer": answer,
            "run_id": payload.get("run_id"),
        }
        if "tool_call" in payload:
            data["tool_call"] = payload["tool_call"]
        wakeups.schedule(
            delivery.tx,
            agent=agent,
            conversation_id=conversation_id,
            user=user,
            source=str(payload.get("signal_id") or f"confirmation:{request_id}"),
            text=wakeup_text(agent, request_id, question, status, answer),
            data=data,
            now=self.store.now(),
        )
        delivery.tx.after_commit(self._wake_poller)

    # -- turns ------------------------------------------------------------------------------

    def handle_message(
        self, store: Store, conversation_id: str, message: Message | str
    ) -> Turn | None:
        """Answer a user message of a conversation with its agent (if it has one).

        ``message`` is the stored message (as the server passes it); a plain string is first
        stored as a message of the conversation's owner.
        """
        if store is not self.store:
            raise InvalidInput("this message belongs to another store")
        if isinstance(message, str):
            with store.transaction(write=False) as tx:
                row = tx.one("SELECT owner FROM conversations WHERE id = ?", (conversation_id,))
            if row is None:
                raise NotFound("conversation")
            message = store.append_message(
                conversation_id, message, role="user", author=row["owner"]
            )
        if message.role != "user" or message.conversation_id != conversation_id:
            return None
        with self.conversation_lock(conversation_id):
            turn = self.pipeline.run(Turn.for_message(store, message))
        self._wake_poller()  # wakeups skipped while the conversation was busy
        return turn

    def run_due(self, limit: int = WAKEUP_BATCH) -> int:
        """Run the wakeups that are due (each exactly once); returns how many ran."""
        with self.store.transaction(write=False) as tx:
            due = wakeups.due(tx, self.store.now(), limit)
        ran = 0
        for wakeup in due:
            if self.agent(wakeup.agent) is None:
                continue  # another process runs this agent
            lock = self.conversation_lock(wakeup.conversation_id)
            if not lock.acquire(blocking=False):
                continue  # a turn is in progress there; the next pass takes it
            try:
                if self.run_wakeup(wakeup):
                    ran += 1
            finally:
                lock.release()
        return ran

    def run_wakeup(self, wakeup: wakeups.Wakeup) -> bool:
        with self.store.transaction() as tx:
            claimed = wakeups.claim(tx, wakeup, self.store.now(), self.lease)
            current = wakeups.get(tx, wakeup.id) if claimed is not False else None
        if claimed is False or current is None:
            return False  # another poller has it
        try:
            self.pipeline.run(Turn.for_wakeup(self.store, current))
        except Exception as exc:
            log.exception("wakeup %s of agent %s failed", wakeup.id, wakeup.agent)
            with self.store.transaction() as tx:
                status = wakeups.retry_later(
                    tx, current, f"{type(exc).__name__}: {exc}", self.store.now()
                )
            if status == "failed":
                self.store.append_message(
                    current.conversation_id,
                    f"{current.agent} could not continue after the answer to"
                    f" {json.dumps(current.data.get('question'))}: {exc}",
                    role="system",
                    author=f"agent:{current.agent}",
                    data={"wakeup": current.id, "error": True},
                )
            return False
        with self.store.transaction() as tx:
            wakeups.finish(tx, wakeup.id, self.store.now())
        return True

    def wakeups_of(self, conversation_id: str) -> list[wakeups.Wakeup]:
        with self.store.transaction(write=False) as tx:
            return wakeups.for_conversation(tx, conversation_id)

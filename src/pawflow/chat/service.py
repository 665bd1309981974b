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
from collections.abc import Callable, Iterable
from datetime import timedelta

from pawflow.agent.builtin_tools import wakeup_text
from pawflow.agent.checkpoints import DEFAULT_TTL, CheckpointStore
from pawflow.agent.loop import AgentLoop
from pawflow.agent.spec import AgentSpec
from pawflow.agent.waits import AgentWait
from pawflow.chat.intercepts import Intercept, InterceptChain
from pawflow.chat.ownership import AgentOwnership
from pawflow.chat.pipeline import Pipeline, default_pipeline
from pawflow.chat.plugins import PluginAPI
from pawflow.chat.runner import TurnRunner
from pawflow.chat.sessions import SessionRegistry, expire_due
from pawflow.chat.turn import Turn
from pawflow.errors import InvalidInput, LeaseLost, NotFound, PawFlowError
from pawflow.loops import Loop
from pawflow.records import Message, Outcome
from pawflow.store import (
    LEASE_TTL,
    Delivery,
    LeaseTerms,
    QueuedTurn,
    Store,
    TurnKey,
    Wakeup,
    resuming,
)

log = logging.getLogger("pawflow.agent")

TARGET_KIND = "agent"
WAKEUP_BATCH = 20
TURN_LEASE = LEASE_TTL  # a crashed turn resumes elsewhere within this


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
        lease: timedelta = TURN_LEASE,
        heartbeat: float | None = None,
        workers: int = 4,
        owner: str | None = None,
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
        self.chat = PluginAPI(store, host=self, intercepts=self.intercepts, sessions=self.sessions)
        self.ownership = AgentOwnership(store, lambda: self._agents, owner=owner, ttl=lease)
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self.runner = TurnRunner(
            store,
            self._run_turn,
            owner=self.ownership.owner,
            lease=lease,
            agents=lambda: self.ownership.held,
            lock_for=self.conversation_lock,
            workers=workers,
            interval=poll_interval,
        )
        # The loop that runs turns (named as before: it was the wakeup poller).
        self.poller = self.runner.loop
        # The agent and turn leases are renewed every third of their time to live.
        beat_every = LeaseTerms(lease).renew_every if heartbeat is None else heartbeat
        self.heartbeat = (
            None if poll_interval is None else Loop("heartbeat", self.beat, interval=beat_every)
        )
        self._handler = _AgentDelivery(self)
        self._started = False
        self._stop_sweeping: Callable[[], None] = lambda: None

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
        with self.store.unit() as u:
            u.turns.assign_agent(conversation_id, agent)

    def assigned_agent(self, conversation_id: str) -> str | None:
        with self.store.unit(write=False) as u:
            return u.turns.assigned_agent(conversation_id)

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
        self.beat()  # own agents before the first pass
        self._stop_sweeping = self.store.add_sweep_step(self._sweep_step)
        self.store.register_handler(TARGET_KIND, self._handler)
        if self.heartbeat is not None:
            self.heartbeat.start()
        self.runner.start()

    def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        self.store.deliveries.unregister(TARGET_KIND)
        self._stop_sweeping()
        self.runner.stop()
        if self.heartbeat is not None:
            self.heartbeat.stop()
        try:
            self.ownership.release()
        except PawFlowError:  # the store is going away: the leases simply run out
            log.warning("agent leases of %s not released", self.ownership.owner)

    def __enter__(self) -> ChatService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def beat(self) -> None:
        """The heartbeat: this process's agent leases, and the leases of its turns."""
        before = set(self.ownership.held)
        self.ownership.beat()
        self.runner.renew()
        if set(self.ownership.held) - before:
            self.runner.wake()  # agents taken over: their queued turns are ours now

    def _sweep_step(self, store: Store) -> dict[str, int]:
        counts = {"checkpoints_expired": self.checkpoints.sweep_expired(), **expire_due(store)}
        if self.poller is not None and self.poller.running:
            self.poller.wake()  # picks up turns other processes queued
        else:
            ran = self._run_due()
            counts["turns"] = len(ran)
            counts["wakeups"] = sum(1 for turn in ran if turn.kind == "wakeup")
        return counts

    def _wake_poller(self) -> None:
        self.runner.wake()

    # -- answers become wakeups -----------------------------------------------------------

    def schedule_wakeup(self, delivery: Delivery) -> None:
        """Write the wakeup for a consumed continuation, in the transaction consuming it."""
        continuation = delivery.continuation
        try:
            wait = AgentWait.decode(continuation.payload)
        except InvalidInput as exc:
            # Retrying cannot fix a payload; consuming it keeps it from blocking the queue.
            log.error("agent continuation %s has an unreadable payload: %s", continuation.id, exc)
            return
        if continuation.outcome == "cancelled":
            return  # the wait itself was withdrawn: there is nothing to tell the agent
        outcome = Outcome.of(continuation.value, resolution=continuation.outcome)
        data = {
            "purpose": wait.purpose,
            "request_id": wait.request_id,
            "question": wait.question,
            **outcome.to_value(),
            "run_id": wait.run_id,
        }
        if wait.tool_call is not None:
            data["tool_call"] = wait.tool_call
        with self.store.unit(tx=delivery.tx) as u:
            u.turns.schedule_wakeup(
                agent=wait.agent,
                conversation_id=wait.conversation_id,
                user=wait.user,
                source=wait.source,
                text=wakeup_text(wait.agent, wait.request_id, wait.question, outcome),
                data=data,
            )
        delivery.tx.after_commit(self._wake_poller)

    # -- turns ------------------------------------------------------------------------------

    def message_posted(self, store: Store, conversation_id: str, message: Message) -> None:
        """The server's ``on_message``: the message and its turn are stored; run it soon."""
        self.runner.wake()

    def handle_message(
        self, store: Store, conversation_id: str, message: Message | str
    ) -> Turn | None:
        """Answer a user message of a conversation now, in this thread (if it has an agent).

        ``message`` is the stored message; a plain string is first stored as a message of
        the conversation's owner. The turn goes through the durable queue like any other:
        None when another process already runs it.
        """
        if store is not self.store:
            raise InvalidInput("this message belongs to another store")
        if isinstance(message, str):
            conversation = store.find_conversation(conversation_id)
            if conversation is None:
                raise NotFound("conversation")
            message = store.post_message(conversation_id, message, user=conversation.owner)
        if message.role != "user" or message.conversation_id != conversation_id:
            return None
        with self.conversation_lock(conversation_id):
            with store.unit() as u:
                turn_id = u.turns.enqueue(
                    conversation_id,
                    agent=u.turns.assigned_agent(conversation_id),
                    message_id=message.id,
                )
            claimed = self.runner.claim(turn_id)
            result = None if claimed is None else self.runner.run_claimed(claimed)
        self._wake_poller()  # turns passed over while the conversation was busy
        return result if isinstance(result, Turn) else None

    def run_due(self, limit: int = WAKEUP_BATCH) -> int:
        """Run the turns that are due here (each exactly once); returns how many ran."""
        return len(self._run_due(limit))

    def _run_due(self, limit: int = WAKEUP_BATCH) -> list[QueuedTurn]:
        if self.heartbeat is None or not self.heartbeat.running:
            self.ownership.beat()
        return self.runner.run_due(limit)

    def run_wakeup(self, wakeup: Wakeup) -> bool:
        """Run one wakeup's turn now; False when it ran already or runs elsewhere."""
        with self.conversation_lock(wakeup.conversation_id):
            claimed = self.runner.claim(wakeup.id)
            return claimed is not None and bool(self.runner.run_claimed(claimed))

    def _run_turn(self, queued: QueuedTurn) -> Turn | bool:
        """Run a claimed turn through the pipeline; False when there was nothing to run."""
        key = queued.key
        if queued.kind == "wakeup":
            return self._run_wakeup_turn(queued, key)
        with self.store.unit(write=False) as u:
            message = u.turns.message_of(queued)
        if message is None:  # cannot happen while messages are kept; end it regardless
            with self.store.unit() as u:
                u.turns.complete(key)
            return False
        turn = Turn.for_message(self.store, message)
        return self._through_pipeline(turn, key)

    def _through_pipeline(self, turn: Turn, key: TurnKey) -> Turn | bool:
        turn.key = key
        turn.on_stage = lambda where: self._at_stage(key, where)
        try:
            self.pipeline.run(turn)
        except LeaseLost as exc:  # another process runs it now, or will: it stops here
            log.warning("turn %s in %s stops here: %s", key.turn_id, turn.conversation_id, exc)
            return False
        except Exception as exc:
            log.exception("turn %s in %s failed", key.turn_id, turn.conversation_id)
            self._failed(turn, key, exc)
            return False
        with self.store.unit() as u:
            u.turns.complete(key)  # a turn without a reply ends here
        return turn

    def _at_stage(self, key: TurnKey, where: str) -> None:
        """Before each model call and tool call: the turn's lease must be one to trust (no
        statement but after a pause: the time since its last renewal, by the monotonic
        clock), or the turn stops here: another process has it, or will."""
        if not self.runner.confirm(key, where):
            raise LeaseLost(f"the lease of turn {key.turn_id} was not renewed in time")
        self.runner.set_stage(key.turn_id, where)

    def _failed(self, turn: Turn, key: TurnKey, exc: Exception) -> None:
        error = f"{type(exc).__name__}: {exc}"
        with self.store.unit() as u:
            status = u.turns.retry_later(key, error)
        if status == "failed":
            what = (
                f"after the answer to {json.dumps(turn.wakeup.data.get('question'))}"
                if turn.wakeup is not None
                else "to this message"
            )
            agent = turn.agent.name if turn.agent is not None else "the agent"
            with self.store.unit() as u:
                u.messages.append_message(
                    turn.conversation_id,
                    content=f"{agent} could not reply {what}: {exc}",
                    role="system",
                    author=f"agent:{agent}",
                    data={"turn": key.turn_id, "error": True},
                )

    def _run_wakeup_turn(self, queued: QueuedTurn, key: TurnKey) -> Turn | bool:
        with self.store.unit() as u:
            current = u.turns.start_wakeup(key)
        if current is None:  # no longer ours
            return False
        with resuming(self.store, current.source, "agent", conversation_id=current.conversation_id):
            return self._through_pipeline(Turn.for_wakeup(self.store, current), key)

    def wakeups_of(self, conversation_id: str) -> list[Wakeup]:
        with self.store.unit(write=False) as u:
            return u.turns.wakeups_for_conversation(conversation_id)

"""LangGraph's ``interrupt(...)`` answered through PawFlow, the graph resumed from any process.

A graph compiled with a checkpointer pauses on ``interrupt(value)``. :class:`LangGraphBridge`
turns each pending interrupt of a thread into a PawFlow request (:func:`interrupt_request`
reads the kind and schema from the value) and parks a continuation on its answer, whose target
names the bridge, the thread and the interrupt. When the request is answered — from the web
chat, ``pawflow answer``, the HTTP API, weeks later — whichever process runs the bridge's
handler resumes the graph with ``Command(resume={interrupt_id: answer})`` through the graph's
own checkpointer, then asks for the interrupts the graph reached next, in the transaction that
consumes the answer. A request that is cancelled or expires resumes the graph too, with the
value :func:`unanswered` recognizes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import is_invalid_resume
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt

from pawflow.bridges.parking import decode, delivery_kind, encode, outcome_of
from pawflow.bridges.questions import interrupt_request
from pawflow.errors import InvalidInput
from pawflow.records import Interaction, Outcome
from pawflow.store import Delivery, Park, Question, Store
from pawflow.store import Transaction as Tx

log = logging.getLogger("pawflow.bridges")

FRAMEWORK = "langgraph"
UNANSWERED = "pawflow_unanswered"
"""The key of the value an interrupt returns when its request was cancelled or expired."""

Graph = Pregel[Any, Any, Any, Any]


def unanswered(value: object) -> Literal["cancelled", "expired"] | None:
    """``cancelled`` or ``expired`` when ``value`` (what ``interrupt(...)`` returned) says
    that nobody answered its request; None for an answer."""
    if isinstance(value, Mapping) and set(value) == {UNANSWERED, "request_id"}:
        status = value[UNANSWERED]
        if status == "cancelled":
            return "cancelled"
        if status == "expired":
            return "expired"
    return None


class LangGraphBridge:
    """Asks through ``store`` what ``graph`` (compiled with a checkpointer) interrupts on,
    and resumes it on the answers.

    ``name`` tells the graph's bridge from others on the same store: its delivery kind is
    ``langgraph.<name>``. Every process that should resume the graph calls :meth:`listen`
    (building the same graph over the same checkpointer); the one that asks need not.
    ``expires_in`` is the default deadline of the requests (an interrupt may give its own).
    """

    def __init__(
        self,
        store: Store,
        graph: Graph,
        *,
        name: str,
        expires_in: str | int | timedelta | None = None,
    ) -> None:
        if not isinstance(graph.checkpointer, BaseCheckpointSaver):
            raise InvalidInput("the graph needs a checkpointer to be resumed later")
        self.store = store
        self.graph = graph
        self.kind = delivery_kind(FRAMEWORK, name)
        self.expires_in = expires_in

    # -- asking ---------------------------------------------------------------------------

    def listen(self) -> LangGraphBridge:
        """Resume the graph in this process whenever one of its requests is answered (and at
        once for those answered while no process listened)."""
        self.store.register_handler(self.kind, self)
        return self

    def invoke(
        self,
        graph_input: Any,
        *,
        thread_id: str,
        owner: str,
        conversation_id: str,
        configurable: Mapping[str, Any] | None = None,
    ) -> Any:
        """Run the graph on ``thread_id`` and ask ``owner`` (in ``conversation_id``) for
        every interrupt it stopped on; returns what ``graph.invoke`` returned."""
        config = self._config(thread_id, configurable)
        result = self.graph.invoke(graph_input, config)
        self.ask(
            thread_id=thread_id,
            owner=owner,
            conversation_id=conversation_id,
            configurable=configurable,
        )
        return result

    def ask(
        self,
        *,
        thread_id: str,
        owner: str,
        conversation_id: str,
        configurable: Mapping[str, Any] | None = None,
    ) -> list[Interaction]:
        """Ask for each interrupt the thread waits on that has no open request yet (so
        asking again, after a crash between the run and the ask, doubles nothing)."""
        self._config(thread_id, configurable)  # refuses a bad thread before a transaction
        thread = _Thread(thread_id, dict(configurable or {}), owner, conversation_id)
        with self.store.unit() as u:
            u.tx.lock_key(self._thread_target(thread_id))
            return self._ask_pending(u.tx, thread, None)

    # -- resuming -------------------------------------------------------------------------

    def accepts(self, target: str) -> bool:
        return target.startswith(self.kind + ":")

    def deliver(self, delivery: Delivery) -> None:
        """Resume the graph with the answer, then ask what it waits on next — all in the
        transaction that consumes the answer, so a failure retries the whole of it."""
        continuation = delivery.continuation
        payload = decode(continuation)
        thread = _Thread(
            str(payload["thread_id"]),
            dict(payload.get("configurable") or {}),
            str(payload["owner"]),
            str(payload["conversation_id"]),
        )
        interrupt_id = str(payload["interrupt_id"])
        delivery.tx.lock_key(self._thread_target(thread.thread_id))
        config = self._config(thread.thread_id, thread.configurable)
        state = self.graph.get_state(config)
        if any(pending.id == interrupt_id for pending in state.interrupts):
            outcome = outcome_of(continuation)
            resume = _resume_value(outcome, str(payload["request_id"]))
            try:
                self.graph.invoke(Command(resume={interrupt_id: resume}), config)
            except Exception as exc:
                if not is_invalid_resume(exc):
                    raise
                # The interrupt's typed response_schema refused the value; nothing was saved.
                log.warning("%s refused the resume of %s: %s", self.kind, interrupt_id, exc)
                if not outcome.answered:
                    return  # it stays interrupted, unasked, until ask() asks again
                # An answer that does not fit: the interrupt is asked again just below.
        elif state.next and not state.interrupts:
            # An earlier attempt resumed it and failed on the way: carry on from its checkpoint.
            self.graph.invoke(None, config)
        self._ask_pending(delivery.tx, thread, continuation.target)

    # -- inside ---------------------------------------------------------------------------

    def _ask_pending(self, tx: Tx, thread: _Thread, delivering: str | None) -> list[Interaction]:
        """Ask for the thread's interrupts that no question waits on (the thread is locked)."""
        config = self._config(thread.thread_id, thread.configurable)
        asked: list[Interaction] = []
        for pending in self.graph.get_state(config).interrupts:
            target = f"{self._thread_target(thread.thread_id)}:{pending.id}"
            waiting = self.store.pending_continuations(target, tx=tx)
            if target == delivering:
                waiting -= 1  # the answer being delivered: its row goes with this transaction
            if waiting > 0:
                continue
            asked.append(self._ask_one(tx, thread, pending, target))
        return asked

    def _ask_one(self, tx: Tx, thread: _Thread, pending: Interrupt, target: str) -> Interaction:
        schema = getattr(pending, "response_schema", None)  # given to interrupt() (LangGraph 1.2)
        request = interrupt_request(pending.value, schema if isinstance(schema, Mapping) else None)
        if self.expires_in is not None and not {"expires_in", "expires_at"} & set(request):
            request["expires_in"] = self.expires_in
        fields = {
            "thread_id": thread.thread_id,
            "configurable": thread.configurable,
            "interrupt_id": pending.id,
            "owner": thread.owner,
            "conversation_id": thread.conversation_id,
        }
        question = Question(
            thread.owner,
            thread.conversation_id,
            request.pop("kind"),
            request.pop("message"),
            requester={"type": "api", "name": self.kind, "thread_id": thread.thread_id},
            **request,
        )
        park = Park(target, lambda asked: encode({**fields, "request_id": asked.id}))
        interaction = self.store.ask(question, park=park, tx=tx).interaction
        return interaction

    def _thread_target(self, thread_id: str) -> str:
        return f"{self.kind}:{thread_id}"

    def _config(self, thread_id: str, configurable: Mapping[str, Any] | None) -> RunnableConfig:
        if not isinstance(thread_id, str) or not thread_id:
            raise InvalidInput("thread_id must be a non-empty string")
        extra = dict(configurable or {})
        encode(extra)  # kept with each question: JSON only
        return {"configurable": {**extra, "thread_id": thread_id}}


@dataclass(frozen=True)
class _Thread:
    """A graph's thread as the bridge keeps it with each question: how to resume it, and
    whom to ask."""

    thread_id: str
    configurable: dict[str, Any]
    owner: str
    conversation_id: str


def _resume_value(outcome: Outcome, request_id: str) -> Any:
    if outcome.unanswered is None:
        return outcome.answer
    return {UNANSWERED: outcome.unanswered, "request_id": request_id}


__all__ = ["UNANSWERED", "LangGraphBridge", "interrupt_request", "unanswered"]

"""CrewAI flows' human feedback answered through PawFlow, the persisted flow resumed from any
process.

A flow method decorated with ``@human_feedback(..., provider=PAUSE)`` pauses the flow instead
of reading the console: :data:`PAUSE` raises ``HumanFeedbackPending``, CrewAI saves the flow's
state and the pending feedback in the flow's persistence, and ``kickoff()`` returns the
``HumanFeedbackPending``. :meth:`CrewAIBridge.ask` asks a person for that feedback:

- with ``emit`` outcomes, a ``choice`` of them (CrewAI still reads the chosen one through its
  ``llm``, as it reads any feedback);
- with ``metadata`` naming a PawFlow request (``kind``, ``response_schema``, ``options``…),
  that request (:func:`~pawflow.bridges.questions.interrupt_request`; an answer that is not
  text goes back as JSON);
- else a ``text`` question.

Whichever process listens takes the answer, restores the flow with ``from_pending`` from the
same persistence and resumes it with ``resume(feedback)`` — asking again when it pauses on
the next feedback. A cancelled or expired request resumes it with no feedback (CrewAI then
takes the ``default_outcome``, else the first of ``emit``). Each step happens in the
transaction that consumes the answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from crewai.flow.async_feedback import HumanFeedbackPending, PendingFeedbackContext
from crewai.flow.flow import Flow
from crewai.flow.persistence import FlowPersistence

from pawflow.bridges.parking import decode, delivery_kind, encode, outcome_of
from pawflow.bridges.questions import MAX_MESSAGE, interrupt_request
from pawflow.records import Interaction, Outcome
from pawflow.store import Delivery, Park, Question, Store
from pawflow.store import Transaction as Tx

log = logging.getLogger("pawflow.bridges")

FRAMEWORK = "crewai"
MAX_OUTPUT_SHOWN = 8000

ResultHandler = Callable[[Any, Any], None]


class _Pause:
    """The feedback provider that pauses a flow for PawFlow: ``@human_feedback(...,
    provider=PAUSE)``."""

    def request_feedback(self, context: PendingFeedbackContext, flow: Any) -> str:
        raise HumanFeedbackPending(context=context)


PAUSE = _Pause()


class CrewAIBridge:
    """Asks through ``store`` for the human feedback ``flow_class``'s flows pause on, and
    resumes them on the answers.

    ``name`` tells this bridge from others on the same store (its delivery kind is
    ``crewai.<name>``). ``persistence`` is where the flows are saved (CrewAI's default when
    None); every process that should resume flows builds the bridge over the same one and
    calls :meth:`listen`. ``on_result`` receives each resumed flow that finished, and its
    result, inside the delivery: raising retries the delivery, flow included.
    """

    def __init__(
        self,
        store: Store,
        flow_class: type[Flow[Any]],
        *,
        name: str,
        persistence: FlowPersistence | None = None,
        expires_in: str | int | timedelta | None = None,
        on_result: ResultHandler | None = None,
    ) -> None:
        self.store = store
        self.flow_class = flow_class
        self.kind = delivery_kind(FRAMEWORK, name)
        self.persistence = persistence
        self.expires_in = expires_in
        self.on_result = on_result

    def listen(self) -> CrewAIBridge:
        """Resume flows in this process whenever their feedback is answered (and at once for
        the answers given while no process listened)."""
        self.store.register_handler(self.kind, self)
        return self

    def close(self) -> None:
        self.store.deliveries.unregister(self.kind)

    # -- asking ---------------------------------------------------------------------------

    def ask(self, paused: object, *, owner: str, conversation_id: str) -> Interaction | None:
        """Ask ``owner`` (in ``conversation_id``) for the feedback a flow paused on
        (``paused``: what ``kickoff()`` returned); None when it did not pause."""
        if not isinstance(paused, HumanFeedbackPending):
            return None
        with self.store.unit() as u:
            return self._ask(u.tx, paused.context, owner, conversation_id)

    def _ask(
        self, tx: Tx, context: PendingFeedbackContext, owner: str, conversation_id: str
    ) -> Interaction:
        request = feedback_request(context)
        if self.expires_in is not None and not {"expires_in", "expires_at"} & set(request):
            request["expires_in"] = self.expires_in
        kept = {"flow_id": context.flow_id, "owner": owner, "conversation_id": conversation_id}
        question = Question(
            owner,
            conversation_id,
            request.pop("kind"),
            request.pop("message"),
            requester={"type": "api", "name": self.kind, "step": context.method_name},
            **request,
        )
        park = Park(
            f"{self.kind}:{context.flow_id}:{context.method_name}",
            lambda asked: encode({**kept, "request_id": asked.id}),
        )
        interaction = self.store.ask(question, park=park, tx=tx).interaction
        return interaction

    # -- resuming -------------------------------------------------------------------------

    def accepts(self, target: str) -> bool:
        return target.startswith(self.kind + ":")

    def deliver(self, delivery: Delivery) -> None:
        """Resume the flow with the feedback, then ask what it pauses on next — in the
        transaction that consumes the answer."""
        payload = decode(delivery.continuation)
        flow_id = str(payload["flow_id"])
        try:
            flow = self.flow_class.from_pending(flow_id, self.persistence)
        except ValueError:
            # No feedback pending: an earlier attempt resumed it before its delivery failed.
            log.warning("%s: flow %s waits on no feedback any more", self.kind, flow_id)
            return
        result = flow.resume(feedback_of(outcome_of(delivery.continuation)))
        if isinstance(result, HumanFeedbackPending):
            owner, conversation_id = str(payload["owner"]), str(payload["conversation_id"])
            self._ask(delivery.tx, result.context, owner, conversation_id)
        elif self.on_result is not None:
            self.on_result(flow, result)


def feedback_request(context: PendingFeedbackContext) -> dict[str, Any]:
    """The request that asks for a flow's pending feedback, as keyword arguments of
    ``Store.ask``: the step's message, then what it shows for review."""
    shown = _shown(context.method_output)
    message = context.message.strip() or f"Feedback on {context.method_name}?"
    if shown:
        message = f"{message}\n\n{shown}"[:MAX_MESSAGE]
    metadata = dict(context.metadata or {})
    if "kind" in metadata:
        return interrupt_request({**metadata, "message": message})
    title = f"Review {context.method_name}"
    if context.emit:
        return {"kind": "choice", "message": message, "title": title, "options": list(context.emit)}
    return {"kind": "text", "message": message, "title": title}


def feedback_of(outcome: Outcome) -> str:
    """The feedback an answer gives the flow: text as it is, anything else as JSON; none
    when nobody answered."""
    if not outcome.answered or outcome.answer is None:
        return ""
    if isinstance(outcome.answer, str):
        return outcome.answer
    return json.dumps(outcome.answer, ensure_ascii=False)


def _shown(output: object) -> str:
    if output is None:
        return ""
    text = (
        output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    )
    return text if len(text) <= MAX_OUTPUT_SHOWN else text[: MAX_OUTPUT_SHOWN - 1] + "…"


__all__ = ["PAUSE", "CrewAIBridge", "feedback_of", "feedback_request"]

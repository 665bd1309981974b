"""Pydantic AI's deferred tool calls answered through PawFlow, the run resumed from any process.

A run whose output types include ``DeferredToolRequests`` ends with one when the model calls a
tool that needs approval (``requires_approval=True``, or ``ApprovalRequired`` raised) or that
runs elsewhere (``CallDeferred``, an external toolset). :meth:`PydanticAIBridge.ask` asks a
person about the first of those calls and parks the run's message history — Pydantic AI's own
state of a run — as the continuation's payload:

- a call that needs approval is a ``tool_approval`` request: approve, edit the arguments
  (``ToolApproved(override_args=…)``), reject with a reason the model reads (``ToolDenied``),
  or respond with the tool's result instead of running it;
- a deferred call asks for its result: the request its ``CallDeferred(metadata=…)`` describes
  (:func:`~pawflow.bridges.questions.interrupt_request`), else a ``text`` question.

Whichever process listens takes the answer, asks the next call of the same pause, and once
every call is decided runs the agent again with ``message_history`` and
``DeferredToolResults`` — asking again if the run ends on new deferred calls. Each step happens
in the transaction that consumes the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ToolCallPart

from pawflow.bridges.loop import LoopThread
from pawflow.bridges.parking import decode, delivery_kind, encode, outcome_of
from pawflow.bridges.questions import decision_of, interrupt_request, tool_approval_request
from pawflow.errors import InvalidInput
from pawflow.ids import new_id
from pawflow.records import Interaction, Outcome
from pawflow.store import Delivery, Park, Question, Store
from pawflow.store import Transaction as Tx

FRAMEWORK = "pydantic-ai"
UNANSWERED_RESULTS = {
    "cancelled": "The request for this result was cancelled: nobody gave it.",
    "expired": "Nobody gave this result in time.",
}
"""The result a deferred call gets when its request is cancelled or expires."""

ResultHandler = Callable[[AgentRunResult[Any]], None]


class PydanticAIBridge:
    """Asks through ``store`` about the deferred tool calls ``agent``'s runs end on, and
    resumes the runs on the answers.

    ``name`` tells this bridge from others on the same store (its delivery kind is
    ``pydantic-ai.<name>``). Every process that should resume runs builds the same agent and
    calls :meth:`listen`. ``deps`` and ``run_options`` (keyword arguments of ``Agent.run``,
    e.g. ``output_type``) are given to each resumed run; ``on_result`` receives each resumed
    run that finished, inside the delivery: raising retries the delivery, run included.
    """

    def __init__(
        self,
        store: Store,
        agent: Agent[Any, Any],
        *,
        name: str,
        deps: Any = None,
        run_options: Mapping[str, Any] | None = None,
        expires_in: str | int | timedelta | None = None,
        on_result: ResultHandler | None = None,
    ) -> None:
        self.store = store
        self.agent = agent
        self.kind = delivery_kind(FRAMEWORK, name)
        self.deps = deps
        self.run_options = dict(run_options or {})
        self.expires_in = expires_in
        self.on_result = on_result
        self._loop = LoopThread(f"pawflow-{self.kind}")

    def listen(self) -> PydanticAIBridge:
        """Resume runs in this process whenever one of their questions is answered (and at
        once for those answered while no process listened)."""
        self.store.register_handler(self.kind, self)
        return self

    def close(self) -> None:
        """Stop listening and stop the event loop resumed runs use."""
        self.store.deliveries.unregister(self.kind)
        self._loop.close()

    # -- asking ---------------------------------------------------------------------------

    def ask(
        self, result: AgentRunResult[Any], *, owner: str, conversation_id: str
    ) -> Interaction | None:
        """Ask ``owner`` (in ``conversation_id``) about the first deferred call ``result``
        ended on, parking the run's messages; None when it ended on none."""
        if not isinstance(result.output, DeferredToolRequests):
            return None
        pause = _Pause.of(result.all_messages(), result.output, owner, conversation_id)
        with self.store.unit() as u:
            return self._ask(u.tx, pause)

    def _ask(self, tx: Tx, pause: _Pause) -> Interaction:
        call = pause.asking
        request = self._request(call)
        if self.expires_in is not None and not {"expires_in", "expires_at"} & set(request):
            request["expires_in"] = self.expires_in
        question = Question(
            pause.owner,
            pause.conversation_id,
            request.pop("kind"),
            request.pop("message"),
            requester={"type": "api", "name": self.kind, "tool": call["tool"]},
            **request,
        )
        park = Park(
            f"{self.kind}:{new_id()}",
            lambda asked: encode({**pause.payload(), "request_id": asked.id}),
        )
        interaction = self.store.ask(question, park=park, tx=tx).interaction
        return interaction

    def _request(self, call: dict[str, Any]) -> dict[str, Any]:
        tool, arguments = str(call["tool"]), dict(call["args"])
        if call["approval"]:
            description, schema = self._tool_definition(tool)
            return tool_approval_request(
                tool,
                arguments,
                agent=self.agent.name or "The agent",
                description=description,
                schema=schema,
            )
        metadata = call.get("metadata") or {}
        if {"kind", "message", "question"} & set(metadata):
            return interrupt_request(metadata)
        shown = encode(arguments).decode("utf-8")
        agent = self.agent.name or "The agent"
        return {"kind": "text", "message": f"{agent} needs the result of {tool}({shown})."}

    def _tool_definition(self, tool: str) -> tuple[str, dict[str, Any] | None]:
        """The tool's description and the JSON Schema of its arguments, when the agent's
        toolsets say (an edit is checked against the schema)."""
        for toolset in self.agent.toolsets:
            found = getattr(toolset, "tools", {}).get(tool)
            definition = getattr(found, "tool_def", None)
            if definition is not None:
                return definition.description or "", dict(definition.parameters_json_schema)
        return "", None

    # -- resuming -------------------------------------------------------------------------

    def accepts(self, target: str) -> bool:
        return target.startswith(self.kind + ":")

    def deliver(self, delivery: Delivery) -> None:
        """Apply the answer; ask the next call, or resume the run (and ask what it ends on
        next) — in the transaction that consumes the answer."""
        pause = _Pause.from_payload(decode(delivery.continuation))
        outcome = outcome_of(delivery.continuation)
        decided = {**pause.decided, pause.asking["id"]: _result_of(pause.asking, outcome)}
        following = pause.next(decided)
        if following is not None:
            self._ask(delivery.tx, following)
            return
        result = self._loop.run(self._resume(pause, decided))
        if isinstance(result.output, DeferredToolRequests):
            self._ask(
                delivery.tx,
                _Pause.of(result.all_messages(), result.output, pause.owner, pause.conversation_id),
            )
        elif self.on_result is not None:
            self.on_result(result)

    async def _resume(self, pause: _Pause, decided: dict[str, Any]) -> AgentRunResult[Any]:
        results = DeferredToolResults()
        for call in pause.calls:
            entry = decided[call["id"]]
            if entry["as"] == "approved":
                results.approvals[call["id"]] = ToolApproved(override_args=entry.get("args"))
            elif entry["as"] == "denied":
                message = entry.get("message")
                results.approvals[call["id"]] = ToolDenied(message) if message else ToolDenied()
            else:
                results.calls[call["id"]] = entry["value"]
        messages = ModelMessagesTypeAdapter.validate_python(pause.messages)
        return await self.agent.run(
            message_history=messages,
            deferred_tool_results=results,
            deps=self.deps,
            **self.run_options,
        )


def _result_of(call: Mapping[str, Any], outcome: Outcome) -> dict[str, Any]:
    """What an answer makes of one call, as JSON kept with the pause until the run resumes."""
    if not call["approval"]:
        if outcome.unanswered is not None:
            return {"as": "result", "value": UNANSWERED_RESULTS[outcome.unanswered]}
        return {"as": "result", "value": outcome.answer}
    decision = decision_of(outcome)
    if decision.decision == "approve":
        return {"as": "approved"}
    if decision.decision == "edit":
        return {"as": "approved", "args": decision.arguments}
    if decision.decision == "respond":
        return {"as": "result", "value": decision.text}
    return {"as": "denied", "message": decision.reason}


@dataclass(frozen=True)
class _Pause:
    """A run ended on deferred calls: its messages, the calls, the answers so far."""

    messages: list[Any]
    calls: list[dict[str, Any]]
    owner: str
    conversation_id: str
    decided: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        messages: Sequence[ModelMessage],
        requests: DeferredToolRequests,
        owner: str,
        conversation_id: str,
    ) -> _Pause:
        calls = [_call(part, requests, approval=True) for part in requests.approvals]
        calls += [_call(part, requests, approval=False) for part in requests.calls]
        if not calls:
            raise InvalidInput("the run ended on no deferred tool call")
        kept = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
        return cls(kept, calls, owner, conversation_id)

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> _Pause:
        return cls(
            list(payload["messages"]),
            list(payload["calls"]),
            str(payload["owner"]),
            str(payload["conversation_id"]),
            dict(payload.get("decided") or {}),
        )

    @property
    def asking(self) -> dict[str, Any]:
        return next(call for call in self.calls if call["id"] not in self.decided)

    def next(self, decided: dict[str, Any]) -> _Pause | None:
        """The same pause with ``decided`` kept, while a call remains to ask about."""
        if all(call["id"] in decided for call in self.calls):
            return None
        return _Pause(self.messages, self.calls, self.owner, self.conversation_id, decided)

    def payload(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "calls": self.calls,
            "owner": self.owner,
            "conversation_id": self.conversation_id,
            "decided": self.decided,
        }


def _call(part: ToolCallPart, requests: DeferredToolRequests, *, approval: bool) -> dict[str, Any]:
    return {
        "id": part.tool_call_id,
        "tool": part.tool_name,
        "args": part.args_as_dict(),
        "approval": approval,
        "metadata": requests.metadata.get(part.tool_call_id) or {},
    }


__all__ = ["UNANSWERED_RESULTS", "PydanticAIBridge"]

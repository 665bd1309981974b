"""OpenAI Agents SDK tool approvals answered through PawFlow, the run resumed from any process.

A tool made with ``needs_approval`` stops a run with interruptions (``ToolApprovalItem``).
:meth:`OpenAIAgentsBridge.ask` asks a person to approve the first of them and parks the run's
``RunState`` (as JSON) as the continuation's payload. Whichever process runs the bridge's
handler takes the answer: it approves or rejects the call (the reviewer's reason, when the
request asks for one, goes back to the model as ``rejection_message``), asks the next approval
of the same pause with the state so far, and once every call of the pause is decided resumes the
run with ``Runner.run`` — and asks again if the resumed run stops on new approvals. Each step
happens in the transaction that consumes the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from agents import (
    Agent,
    RunConfig,
    Runner,
    RunResult,
    RunResultStreaming,
    RunState,
    ToolApprovalItem,
)
from agents.run import DEFAULT_MAX_TURNS

from pawflow.bridges.loop import LoopThread
from pawflow.bridges.parking import decode, delivery_kind, encode, outcome_of
from pawflow.errors import InvalidInput
from pawflow.ids import new_id
from pawflow.records import Interaction, Outcome
from pawflow.store import Delivery, Park, Question, Store
from pawflow.store import Transaction as Tx

FRAMEWORK = "openai-agents"
MAX_ARGUMENTS_SHOWN = 2000
UNANSWERED_MESSAGES = {
    "cancelled": "The request to approve this tool call was cancelled.",
    "expired": "Nobody approved this tool call in time.",
}

ResultHandler = Callable[[RunResult], None]


def approval_request(item: ToolApprovalItem, *, ask_reason: bool = False) -> dict[str, Any]:
    """The PawFlow request that asks to approve one tool call, as keyword arguments of
    ``Store.ask``: a ``confirm``, or with ``ask_reason`` a ``form`` of ``approve`` and an
    optional ``reason`` (told to the model when the call is refused)."""
    tool = item.qualified_name or item.name or "a tool"
    arguments = item.arguments or ""
    if len(arguments) > MAX_ARGUMENTS_SHOWN:
        arguments = arguments[: MAX_ARGUMENTS_SHOWN - 1] + "…"
    agent = getattr(item.agent, "name", None) or "The agent"
    message = f"{agent} wants to call {tool}" + (f" with {arguments}" if arguments else "") + "."
    request: dict[str, Any] = {"title": f"Approve {tool}?", "message": message}
    if not ask_reason:
        return {"kind": "confirm", **request}
    schema = {
        "type": "object",
        "properties": {
            "approve": {"type": "boolean", "title": f"Allow {tool}"},
            "reason": {
                "type": "string",
                "title": "Reason",
                "description": "Told to the agent when you refuse",
            },
        },
        "required": ["approve"],
    }
    return {"kind": "form", "response_schema": schema, **request}


def approval_decision(outcome: Outcome) -> tuple[bool, str | None]:
    """Whether an answer approves the call, and the rejection message for the model (None
    leaves the SDK's own): ``true``/``false`` (a confirm), ``{approve, reason}`` (a form); a
    cancelled or expired request rejects it, saying so."""
    if outcome.unanswered is not None:
        return False, UNANSWERED_MESSAGES[outcome.unanswered]
    answer = outcome.answer
    if isinstance(answer, bool):
        return answer, None
    if isinstance(answer, Mapping) and isinstance(answer.get("approve"), bool):
        reason = answer.get("reason")
        approved = bool(answer["approve"])
        return approved, None if approved or not isinstance(reason, str) or not reason else reason
    raise InvalidInput(f"an approval needs a yes or no, not {answer!r}")


class OpenAIAgentsBridge:
    """Asks through ``store`` to approve the tool calls ``agent``'s runs stop on, and resumes
    the runs on the answers.

    ``name`` tells this bridge from others on the same store (its delivery kind is
    ``openai-agents.<name>``). Every process that should resume runs calls :meth:`listen`
    with the same agent (its tools, by name). ``run_config`` and ``max_turns`` are given to
    ``Runner.run`` on resuming; ``on_result`` receives each resumed run that finished (not
    stopped on approvals), inside the delivery: raising retries the delivery, run included.
    """

    def __init__(
        self,
        store: Store,
        agent: Agent[Any],
        *,
        name: str,
        run_config: RunConfig | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        ask_reason: bool = False,
        expires_in: str | int | timedelta | None = None,
        on_result: ResultHandler | None = None,
    ) -> None:
        self.store = store
        self.agent = agent
        self.kind = delivery_kind(FRAMEWORK, name)
        self.run_config = run_config
        self.max_turns = max_turns
        self.ask_reason = ask_reason
        self.expires_in = expires_in
        self.on_result = on_result
        self._loop = LoopThread(f"pawflow-{self.kind}")

    def listen(self) -> OpenAIAgentsBridge:
        """Resume runs in this process whenever one of their approvals is answered (and at
        once for those answered while no process listened)."""
        self.store.register_handler(self.kind, self)
        return self

    def close(self) -> None:
        """Stop listening and stop the event loop resumed runs use."""
        self.store.deliveries.unregister(self.kind)
        self._loop.close()

    # -- asking ---------------------------------------------------------------------------

    def ask(
        self, result: RunResult | RunResultStreaming, *, owner: str, conversation_id: str
    ) -> Interaction | None:
        """Ask ``owner`` (in ``conversation_id``) to approve the first call ``result`` stopped
        on, parking the run's state; None when the run did not stop on an approval."""
        if not result.interruptions:
            return None
        pause = _Pause.of(result.to_state(), result.interruptions, owner, conversation_id)
        with self.store.unit() as u:
            return self._ask(u.tx, pause)

    def _ask(self, tx: Tx, pause: _Pause) -> Interaction:
        request = approval_request(pause.asking_item, ask_reason=self.ask_reason)
        if self.expires_in is not None:
            request["expires_in"] = self.expires_in
        question = Question(
            pause.owner,
            pause.conversation_id,
            request.pop("kind"),
            request.pop("message"),
            requester={"type": "api", "name": self.kind, "tool": pause.asking_item.name},
            **request,
        )
        park = Park(
            f"{self.kind}:{new_id()}",
            lambda asked: encode({**pause.payload(), "request_id": asked.id}),
        )
        interaction = self.store.ask(question, park=park, tx=tx).interaction
        return interaction

    # -- resuming -------------------------------------------------------------------------

    def accepts(self, target: str) -> bool:
        return target.startswith(self.kind + ":")

    def deliver(self, delivery: Delivery) -> None:
        """Apply the decision; ask the next approval, or resume the run (and ask what it
        stops on next) — in the transaction that consumes the answer."""
        payload = decode(delivery.continuation)
        approved, message = approval_decision(outcome_of(delivery.continuation))
        step = self._loop.run(self._decide(payload, approved, message))
        if isinstance(step, _Pause):
            self._ask(delivery.tx, step)
        elif self.on_result is not None:
            self.on_result(step)

    async def _decide(
        self, payload: dict[str, Any], approved: bool, message: str | None
    ) -> _Pause | RunResult:
        state: RunState[Any, Agent[Any]] = await RunState.from_json(self.agent, payload["state"])
        items = state.get_interruptions()
        keys = _keys(items)
        asking = str(payload["asking"])
        if asking not in keys:
            raise InvalidInput(f"the kept run no longer waits on the approval of {asking}")
        item = items[keys.index(asking)]
        if approved:
            state.approve(item)
        else:
            state.reject(item, rejection_message=message)
        decided = [*payload["decided"], asking]
        owner, conversation_id = str(payload["owner"]), str(payload["conversation_id"])
        if any(key not in decided for key in keys):
            return _Pause.of(state, items, owner, conversation_id, decided=decided)
        result = await Runner.run(
            self.agent, state, run_config=self.run_config, max_turns=self.max_turns
        )
        if result.interruptions:
            return _Pause.of(result.to_state(), result.interruptions, owner, conversation_id)
        return result


@dataclass(frozen=True)
class _Pause:
    """A run stopped on approvals: its state, the one asked now, those decided before."""

    state: dict[str, Any]
    asking: str
    asking_item: ToolApprovalItem
    owner: str
    conversation_id: str
    decided: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        state: RunState[Any, Any],
        items: Sequence[ToolApprovalItem],
        owner: str,
        conversation_id: str,
        *,
        decided: Sequence[str] = (),
    ) -> _Pause:
        keys = _keys(items)
        index = next(i for i, key in enumerate(keys) if key not in decided)
        return cls(
            state.to_json(),
            keys[index],
            items[index],
            owner,
            conversation_id,
            list(decided),
        )

    def payload(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "asking": self.asking,
            "decided": self.decided,
            "owner": self.owner,
            "conversation_id": self.conversation_id,
        }


def _keys(items: Sequence[ToolApprovalItem]) -> list[str]:
    """Each interruption by its tool call's id (its place when it has none)."""
    return [item.call_id or f"#{index}" for index, item in enumerate(items)]


__all__ = [
    "UNANSWERED_MESSAGES",
    "OpenAIAgentsBridge",
    "approval_decision",
    "approval_request",
]

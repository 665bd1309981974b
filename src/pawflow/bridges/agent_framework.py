"""Microsoft Agent Framework function approvals answered through PawFlow, the run resumed on
its serialized session from any process.

A function made with ``@tool(approval_mode="always_require")`` stops a run with
``function_approval_request`` contents (``response.user_input_requests``).
:meth:`AgentFrameworkBridge.ask` asks a person to approve the first of them — a
``tool_approval`` request that offers approve and reject, what the framework's approval
response carries — and parks the run's ``AgentSession`` (its ``to_dict()``, the framework's
serialized thread) as the continuation's payload. Whichever process listens takes the answer,
asks the next approval of the same pause, and once every call is decided runs the agent again
on the restored session with the ``function_approval_response`` contents — asking again if
the run stops on new approvals. Each step happens in the transaction that consumes the answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from agent_framework import AgentResponse, AgentSession, Content, Message, SupportsAgentRun

from pawflow.bridges.loop import LoopThread
from pawflow.bridges.parking import decode, delivery_kind, encode, outcome_of
from pawflow.bridges.questions import decision_of, tool_approval_request
from pawflow.errors import InvalidInput
from pawflow.ids import new_id
from pawflow.records import Interaction
from pawflow.store import Delivery, Park, Question, Store
from pawflow.store import Transaction as Tx

FRAMEWORK = "agent-framework"
APPROVAL_REQUEST = "function_approval_request"

ResultHandler = Callable[[AgentResponse[Any], AgentSession], None]


class AgentFrameworkBridge:
    """Asks through ``store`` to approve the function calls ``agent``'s runs stop on, and
    resumes the runs on the answers.

    ``name`` tells this bridge from others on the same store (its delivery kind is
    ``agent-framework.<name>``). Every process that should resume runs builds the same agent
    (its tools, by name) and calls :meth:`listen`. ``on_result`` receives each resumed run
    that finished, with its session (to keep it where the application keeps sessions), inside
    the delivery: raising retries the delivery, run included.
    """

    def __init__(
        self,
        store: Store,
        agent: SupportsAgentRun,
        *,
        name: str,
        expires_in: str | int | timedelta | None = None,
        on_result: ResultHandler | None = None,
    ) -> None:
        self.store = store
        self.agent = agent
        self.kind = delivery_kind(FRAMEWORK, name)
        self.expires_in = expires_in
        self.on_result = on_result
        self._loop = LoopThread(f"pawflow-{self.kind}")

    def listen(self) -> AgentFrameworkBridge:
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
        self,
        response: AgentResponse[Any],
        session: AgentSession,
        *,
        owner: str,
        conversation_id: str,
    ) -> Interaction | None:
        """Ask ``owner`` (in ``conversation_id``) to approve the first call ``response``
        stopped on, parking ``session``; None when the run stopped on no approval."""
        requests = _approvals(response.user_input_requests)
        if not requests:
            return None
        pause = _Pause(session.to_dict(), requests, owner, conversation_id)
        encode(pause.payload())  # a session that is not JSON is refused before asking
        with self.store.unit() as u:
            return self._ask(u.tx, pause)

    def _ask(self, tx: Tx, pause: _Pause) -> Interaction:
        call = pause.asking["function_call"]
        tool = str(call.get("name") or "a function")
        description, schema = self._tool_definition(tool)
        request = tool_approval_request(
            tool,
            _arguments(call.get("arguments")),
            agent=getattr(self.agent, "name", None) or "The agent",
            description=description,
            schema=schema,
            decisions=("approve", "reject"),
        )
        if self.expires_in is not None:
            request["expires_in"] = self.expires_in
        question = Question(
            pause.owner,
            pause.conversation_id,
            request.pop("kind"),
            request.pop("message"),
            requester={"type": "api", "name": self.kind, "tool": tool},
            **request,
        )
        park = Park(
            f"{self.kind}:{new_id()}",
            lambda asked: encode({**pause.payload(), "request_id": asked.id}),
        )
        interaction = self.store.ask(question, park=park, tx=tx).interaction
        return interaction

    def _tool_definition(self, tool: str) -> tuple[str, dict[str, Any] | None]:
        """The function's description and the JSON Schema of its arguments, when the agent
        has it among its tools."""
        options = getattr(self.agent, "default_options", None) or {}
        for found in options.get("tools") or []:
            parameters = getattr(found, "parameters", None)
            if getattr(found, "name", None) == tool and callable(parameters):
                return str(getattr(found, "description", "") or ""), dict(parameters())
        return "", None

    # -- resuming -------------------------------------------------------------------------

    def accepts(self, target: str) -> bool:
        return target.startswith(self.kind + ":")

    def deliver(self, delivery: Delivery) -> None:
        """Apply the decision; ask the next approval, or resume the run on its session (and
        ask what it stops on next) — in the transaction that consumes the answer."""
        pause = _Pause.from_payload(decode(delivery.continuation))
        approved = decision_of(outcome_of(delivery.continuation)).runs
        decided = {**pause.decided, str(pause.asking["id"]): approved}
        if len(decided) < len(pause.requests):
            self._ask(delivery.tx, pause.with_decided(decided))
            return
        session = AgentSession.from_dict(pause.session)
        response = self._loop.run(self._resume(pause, decided, session))
        requests = _approvals(response.user_input_requests)
        if requests:
            following = _Pause(session.to_dict(), requests, pause.owner, pause.conversation_id)
            self._ask(delivery.tx, following)
        elif self.on_result is not None:
            self.on_result(response, session)

    async def _resume(
        self, pause: _Pause, decided: dict[str, bool], session: AgentSession
    ) -> AgentResponse[Any]:
        answers = [
            Content.from_dict(request).to_function_approval_response(decided[str(request["id"])])
            for request in pause.requests
        ]
        response: AgentResponse[Any] = await self.agent.run(
            [Message(role="user", contents=answers)], session=session
        )
        return response


@dataclass(frozen=True)
class _Pause:
    """A run stopped on approvals: its session, the requests, the decisions so far."""

    session: dict[str, Any]
    requests: list[dict[str, Any]]
    owner: str
    conversation_id: str
    decided: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> _Pause:
        return cls(
            dict(payload["session"]),
            list(payload["requests"]),
            str(payload["owner"]),
            str(payload["conversation_id"]),
            dict(payload.get("decided") or {}),
        )

    @property
    def asking(self) -> dict[str, Any]:
        return next(r for r in self.requests if str(r["id"]) not in self.decided)

    def with_decided(self, decided: dict[str, bool]) -> _Pause:
        return _Pause(self.session, self.requests, self.owner, self.conversation_id, decided)

    def payload(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "requests": self.requests,
            "owner": self.owner,
            "conversation_id": self.conversation_id,
            "decided": self.decided,
        }


def _approvals(contents: Sequence[Content]) -> list[dict[str, Any]]:
    return [content.to_dict() for content in contents if content.type == APPROVAL_REQUEST]


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            parsed = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(f"a function call's arguments are not JSON: {exc}") from exc
        return parsed if isinstance(parsed, dict) else {"arguments": parsed}
    return {}


__all__ = ["AgentFrameworkBridge"]

"""Google ADK tool confirmations and long-running tools answered through PawFlow, the run
resumed through the ADK runner on its persistent session from any process.

A run pauses on the long-running calls of its last invocation: a tool confirmation
(``FunctionTool(..., require_confirmation=True)``, or ``tool_context.request_confirmation(hint,
payload)``: an ``adk_request_confirmation`` call) or a ``LongRunningFunctionTool``'s call.
:meth:`AdkBridge.ask` reads them from the session the runner's session service keeps (a
persistent one — ``SqliteSessionService``, ``DatabaseSessionService`` — for another process to
resume it) and asks a person about the first:

- a plain confirmation is a ``tool_approval`` request (approve or reject, what a
  ``ToolConfirmation`` carries);
- a confirmation with a payload is a ``form``: ``confirmed`` and the payload's fields, its
  schema read from the payload (a JSON Schema as it is, an example by its values); the answer
  goes back as ``ToolConfirmation(confirmed=…, payload=…)``;
- a long-running call asks what its pending result describes
  (:func:`~pawflow.bridges.questions.interrupt_request`), else a ``text`` question; the answer
  is the call's function response.

The continuation keeps only where the session is and the answers so far; once every call of
the pause is answered, the runner runs on the session with the function responses — and the
bridge asks again if the run pauses again. Each step happens in the transaction that consumes
the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.genai import types

from pawflow.bridges.loop import LoopThread
from pawflow.bridges.parking import decode, delivery_kind, encode, outcome_of
from pawflow.bridges.questions import decision_of, interrupt_request, tool_approval_request
from pawflow.errors import InvalidInput
from pawflow.records import Interaction, Outcome
from pawflow.store import Delivery, Park, Question, Store
from pawflow.store import Transaction as Tx

FRAMEWORK = "google-adk"
CONFIRMATION = "adk_request_confirmation"
UNANSWERED_RESULTS = {
    "cancelled": "The request for this result was cancelled: nobody gave it.",
    "expired": "Nobody gave this result in time.",
}
"""The result a long-running call gets when its request is cancelled or expires."""

ResultHandler = Callable[[list[Event]], None]
_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))


class AdkBridge:
    """Asks through ``store`` about the calls ``runner``'s runs pause on, and resumes them
    through the runner on the answers.

    ``name`` tells this bridge from others on the same store (its delivery kind is
    ``google-adk.<name>``). Every process that should resume runs builds the same runner (the
    same agent, app name and persistent session service) and calls :meth:`listen`.
    ``on_result`` receives the events of each resumed run that paused no more, inside the
    delivery: raising retries the delivery, run included.
    """

    def __init__(
        self,
        store: Store,
        runner: Runner,
        *,
        name: str,
        expires_in: str | int | timedelta | None = None,
        on_result: ResultHandler | None = None,
    ) -> None:
        self.store = store
        self.runner = runner
        self.kind = delivery_kind(FRAMEWORK, name)
        self.expires_in = expires_in
        self.on_result = on_result
        self._loop = LoopThread(f"pawflow-{self.kind}")

    def listen(self) -> AdkBridge:
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
        self, *, user_id: str, session_id: str, owner: str, conversation_id: str
    ) -> Interaction | None:
        """Ask ``owner`` (in ``conversation_id``) about the first call the session's last run
        paused on; None when it paused on none, or when that pause is asked already (so asking
        again after a crash between the run and the ask doubles nothing)."""
        session = self._loop.run(self._session(user_id, session_id))
        calls = _paused_calls(session)
        if not calls:
            return None
        pause = _Pause(user_id, session_id, calls, owner, conversation_id)
        with self.store.unit() as u:
            u.tx.lock_key(self._session_target(session_id))
            for call in calls:
                if self.store.pending_continuations(self._target(pause, call), tx=u.tx) > 0:
                    return None
            return self._ask(u.tx, pause)

    def _ask(self, tx: Tx, pause: _Pause) -> Interaction:
        call = pause.asking
        request = _request(call, getattr(self.runner.agent, "name", None) or "The agent")
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
            self._target(pause, call),
            lambda asked: encode({**pause.payload(), "request_id": asked.id}),
        )
        interaction = self.store.ask(question, park=park, tx=tx).interaction
        return interaction

    async def _session(self, user_id: str, session_id: str) -> Session:
        session = await self.runner.session_service.get_session(
            app_name=self.runner.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise InvalidInput(f"no session {session_id} of {user_id} in {self.runner.app_name}")
        return session

    def _session_target(self, session_id: str) -> str:
        return f"{self.kind}:{session_id}"

    def _target(self, pause: _Pause, call: Mapping[str, Any]) -> str:
        return f"{self._session_target(pause.session_id)}:{call['id']}"

    # -- resuming -------------------------------------------------------------------------

    def accepts(self, target: str) -> bool:
        return target.startswith(self.kind + ":")

    def deliver(self, delivery: Delivery) -> None:
        """Keep the answer; ask the next call, or resume the run through the runner (and ask
        what it pauses on next) — in the transaction that consumes the answer."""
        pause = _Pause.from_payload(decode(delivery.continuation))
        delivery.tx.lock_key(self._session_target(pause.session_id))
        call = pause.asking
        decided = {**pause.decided, call["id"]: _response(call, outcome_of(delivery.continuation))}
        if len(decided) < len(pause.calls):
            self._ask(delivery.tx, pause.with_decided(decided))
            return
        events = self._loop.run(self._resume(pause, decided))
        session = self._loop.run(self._session(pause.user_id, pause.session_id))
        calls = _paused_calls(session)
        if calls:
            following = _Pause(
                pause.user_id, pause.session_id, calls, pause.owner, pause.conversation_id
            )
            self._ask(delivery.tx, following)
        elif self.on_result is not None:
            self.on_result(events)

    async def _resume(self, pause: _Pause, decided: dict[str, Any]) -> list[Event]:
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=call["id"], name=call["name"], response=decided[call["id"]]
                )
            )
            for call in pause.calls
        ]
        message = types.Content(role="user", parts=parts)
        return [
            event
            async for event in self.runner.run_async(
                user_id=pause.user_id, session_id=pause.session_id, new_message=message
            )
        ]


def _paused_calls(session: Session) -> list[dict[str, Any]]:
    """The long-running calls of the session's last invocation that no user's function
    response answered (a resumed run goes on in the invocation it paused), each with what
    the bridge asks about it."""
    if not session.events:
        return []
    last = session.events[-1].invocation_id
    calls: list[dict[str, Any]] = []
    pending: dict[str, Any] = {}
    answered: set[str] = set()
    for event in session.events:
        if event.invocation_id != last:
            continue
        for response in event.get_function_responses():
            if event.author == "user":
                answered.add(response.id or "")
            else:
                pending[response.id or ""] = response.response
        waiting = event.long_running_tool_ids or set()
        calls += [_call(c) for c in event.get_function_calls() if c.id in waiting]
    calls = [call for call in calls if call["id"] not in answered]
    for call in calls:
        if call["name"] != CONFIRMATION:
            call["pending"] = pending.get(call["id"])  # what the tool said while it waits
    return calls


def _call(function_call: types.FunctionCall) -> dict[str, Any]:
    arguments = dict(function_call.args or {})
    name = function_call.name or ""
    if name == CONFIRMATION:
        original = arguments.get("originalFunctionCall") or {}
        confirmation = arguments.get("toolConfirmation") or {}
        return {
            "id": function_call.id,
            "name": name,
            "tool": str(original.get("name") or "a tool"),
            "args": dict(original.get("args") or {}),
            "hint": str(confirmation.get("hint") or ""),
            "payload": confirmation.get("payload"),
        }
    return {"id": function_call.id, "name": name, "tool": name, "args": arguments}


def _request(call: Mapping[str, Any], agent: str) -> dict[str, Any]:
    if call["name"] == CONFIRMATION and call.get("payload") is None:
        return tool_approval_request(
            call["tool"],
            call["args"],
            agent=agent,
            description=call["hint"],
            decisions=("approve", "reject"),
        )
    if call["name"] == CONFIRMATION:
        message = call["hint"] or f"{agent} wants to run {call['tool']}: confirm it."
        title = f"Confirm {call['tool']}?"
        return {
            "kind": "form",
            "title": title,
            "message": message,
            "response_schema": payload_schema(call["payload"]),
        }
    pending = call.get("pending")
    if isinstance(pending, Mapping) and {"kind", "message", "question"} & set(pending):
        return interrupt_request(pending)
    shown = encode(call["args"]).decode("utf-8")
    return {"kind": "text", "message": f"{agent} waits on the result of {call['tool']}({shown})."}


def payload_schema(payload: object) -> dict[str, Any]:
    """The form that confirms a call and fills its confirmation's payload: ``confirmed``,
    then the payload's fields — a JSON Schema of an object as it is, an example object by the
    types of its values (each value its field's default)."""
    confirmed = {"type": "boolean", "title": "Confirm"}
    if isinstance(payload, Mapping) and payload.get("type") == "object":
        properties = dict(payload.get("properties") or {})
        required = list(payload.get("required") or [])
    elif isinstance(payload, Mapping):
        properties = {str(key): _field(value) for key, value in payload.items()}
        required = list(properties)
    else:
        raise InvalidInput("a confirmation's payload must be an object or its JSON Schema")
    return {
        "type": "object",
        "properties": {"confirmed": confirmed, **properties},
        "required": ["confirmed", *required],
    }


def _field(value: object) -> dict[str, Any]:
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return {"type": name, "default": value}
    raise InvalidInput(f"a confirmation's payload holds {value!r}: give its JSON Schema instead")


def _response(call: Mapping[str, Any], outcome: Outcome) -> dict[str, Any]:
    """The function response an answer makes of one call."""
    if call["name"] == CONFIRMATION and call.get("payload") is None:
        return {"confirmed": decision_of(outcome).runs}
    if call["name"] == CONFIRMATION:
        answer = outcome.answer if outcome.answered else {}
        if not isinstance(answer, Mapping):
            raise InvalidInput(f"a confirmation needs a form's answer, not {answer!r}")
        payload = {key: value for key, value in answer.items() if key != "confirmed"}
        return {"confirmed": answer.get("confirmed") is True, "payload": payload or None}
    if outcome.unanswered is not None:
        return {"result": UNANSWERED_RESULTS[outcome.unanswered]}
    answer = outcome.answer
    return dict(answer) if isinstance(answer, Mapping) else {"result": answer}


@dataclass(frozen=True)
class _Pause:
    """Where a paused run's session is, the calls it paused on, the answers so far."""

    user_id: str
    session_id: str
    calls: list[dict[str, Any]]
    owner: str
    conversation_id: str
    decided: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> _Pause:
        return cls(
            str(payload["user_id"]),
            str(payload["session_id"]),
            list(payload["calls"]),
            str(payload["owner"]),
            str(payload["conversation_id"]),
            dict(payload.get("decided") or {}),
        )

    @property
    def asking(self) -> dict[str, Any]:
        return next(call for call in self.calls if call["id"] not in self.decided)

    def with_decided(self, decided: dict[str, Any]) -> _Pause:
        return _Pause(
            self.user_id, self.session_id, self.calls, self.owner, self.conversation_id, decided
        )

    def payload(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "session_id": self.session_id,
            "calls": self.calls,
            "owner": self.owner,
            "conversation_id": self.conversation_id,
            "decided": self.decided,
        }


__all__ = ["UNANSWERED_RESULTS", "AdkBridge", "payload_schema"]

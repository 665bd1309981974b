"""One AG-UI run: a ``RunAgentInput`` in, the run's events out as server-sent events.

A run on thread ``threadId`` drives the caller's conversation of that id (or the one titled
``AG-UI <threadId>``, made on first use), answered by the agent the path names:

- with ``resume`` entries, it answers (``resolved``, the ``payload`` being the answer) or
  cancels (``cancelled``) each request an entry names, in order, through the same validation
  as ``respond_interaction``; an answer that fails it ends the run with ``RUN_ERROR`` (code
  ``invalid_answer``, the field errors in ``rawEvent``) and leaves that request pending; so
  does an answer that is not the caller's to give (code ``forbidden``, whom the request waits
  for in the message and ``rawEvent.waiting_for``; or ``already_voted``, the vote that stands
  in ``rawEvent.vote``). A request another client answered first is not an error: a ``CUSTOM`` event
  ``pawflow.resolved`` shows it as it is, and the run goes on;
- otherwise the input's last message, when it is the user's, is posted to the conversation.

Then the run follows the agent's turns, sending each agent message the input did not carry
as it is stored (``TEXT_MESSAGE_*``, its id the message's id), and ends with
``RUN_FINISHED``: its outcome is ``interrupt`` with one ``Interrupt`` per pending request of
the conversation (``id`` the request id, ``reason`` its kind, ``responseSchema``,
``expiresAt``, the whole record in ``metadata.pawflow``), else ``success``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    UserMessage,
)
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from pawflow.agent_runs import AgentThread, caller
from pawflow.errors import AlreadyVoted, Forbidden, InvalidInput, NotFound, PawFlowError
from pawflow.records import Interaction
from pawflow.server.context import ServerContext
from pawflow.server.errors import (
    HTTPProblem,
    pawflow_error_response,
    problem_response,
    respond,
    validation_errors,
)

PROTOCOL_VERSION = "1.0"
TITLE = "AG-UI {thread}"
"""The title of the conversation a new thread gets."""
VIA = "agui"


async def handle(ctx: ServerContext, request: Request) -> Response:
    """``POST /agui/{agent}``: authenticate, read the input, then stream the run."""
    try:
        principal = await caller(ctx, request)
        try:
            run = RunAgentInput.model_validate_json(await request.body())
        except ValidationError as exc:
            errors = validation_errors(exc.errors())
            return respond(422, "the body is not a valid RunAgentInput", errors=errors)
        agent = request.path_params["agent"]
        thread = await AgentThread.open(
            ctx, principal, agent, run.thread_id, title=TITLE.format(thread=run.thread_id)
        )
    except HTTPProblem as exc:
        return problem_response(exc)
    except PawFlowError as exc:
        return pawflow_error_response(exc)
    encoder = EventEncoder(accept=request.headers.get("accept", ""))

    async def stream() -> AsyncIterator[str]:
        async for event in events(thread, run):
            yield encoder.encode(event)

    return StreamingResponse(
        stream(),
        media_type=encoder.get_content_type(),
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def events(thread: AgentThread, run: RunAgentInput) -> AsyncIterator[BaseEvent]:
    """The events of one run."""
    yield RunStartedEvent(
        thread_id=run.thread_id, run_id=run.run_id, protocol_version=PROTOCOL_VERSION
    )
    try:
        if run.resume:
            for entry in run.resume:
                resolved = await thread.resolve(
                    entry.interrupt_id, entry.status, entry.payload, via=VIA
                )
                if not resolved.by_this_run:
                    yield CustomEvent(name="pawflow.resolved", value=_record(resolved.request))
        else:
            text = _last_user_text(run)
            if text:
                await thread.post(text)
        seen = frozenset(message.id for message in run.messages)
        async with aclosing(thread.follow(seen=seen)) as following:
            async for message in following:
                yield TextMessageStartEvent(message_id=message.id, role="assistant")
                yield TextMessageContentEvent(message_id=message.id, delta=message.content)
                yield TextMessageEndEvent(message_id=message.id)
        if not thread.finished:
            yield RunErrorEvent(
                message="the agent is still working: run again on this thread to see the rest",
                code="timeout",
            )
            return
        pending = await thread.pending()
    except InvalidInput as exc:
        errors = [error.to_dict() for error in exc.errors]
        yield RunErrorEvent(
            message=exc.message, code="invalid_answer", raw_event={"errors": errors}
        )
        return
    except NotFound as exc:
        yield RunErrorEvent(message=f"{exc.what} not found", code="not_found")
        return
    except Forbidden as exc:  # it waits for others: the request stays pending
        raw = {"waiting_for": exc.waiting_for}
        yield RunErrorEvent(message=exc.message, code="forbidden", raw_event=raw)
        return
    except AlreadyVoted as exc:  # a vote for that person stands: nothing changed
        yield RunErrorEvent(message=exc.message, code="already_voted", raw_event={"vote": exc.vote})
        return
    except HTTPProblem as exc:  # the token was revoked while the run waited
        yield RunErrorEvent(message=exc.message, code="unauthorized")
        return
    yield RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id, outcome=_outcome(pending))


def _outcome(pending: list[Interaction]) -> RunFinishedInterruptOutcome | RunFinishedSuccessOutcome:
    if not pending:
        return RunFinishedSuccessOutcome()
    return RunFinishedInterruptOutcome(interrupts=[interrupt(r) for r in pending])


def interrupt(record: Interaction) -> Interrupt:
    """A pending request as an AG-UI interrupt."""
    expires = record.expires_at.isoformat() if record.expires_at is not None else None
    return Interrupt(
        id=record.id,
        reason=record.kind,
        message=record.message,
        response_schema=record.response_schema,
        expires_at=expires,
        metadata={"pawflow": _record(record)},
    )


def _record(record: Interaction) -> dict[str, Any]:
    return record.to_dict()


def _last_user_text(run: RunAgentInput) -> str:
    if not run.messages:
        return ""
    last = run.messages[-1]
    if not isinstance(last, UserMessage):
        return ""
    content: Any = last.content
    if isinstance(content, str):
        return content.strip()
    return "\n".join(
        str(part.text) for part in content if getattr(part, "type", None) == "text"
    ).strip()


__all__ = ["events", "handle", "interrupt"]

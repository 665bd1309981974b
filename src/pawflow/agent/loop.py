"""The agent loop: reason → act → observe, with tools, under governance.

There is one loop. :meth:`AgentLoop.stream` runs it and yields events as they happen (text
as it arrives, tool calls and their results, the end); :meth:`AgentLoop.run` is the blocking
form and simply consumes that stream. Every model call goes through :meth:`_call_model`,
the only call site, which passes the request through ``governance.before_model_call``
first. Whenever a run halts instead of finishing — it asked the user something, needs an
approval, hit a limit, was denied, or the model failed — it writes a checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pawflow.agent.checkpoints import CheckpointStore
from pawflow.agent.governance import Budget, Governance, Halt
from pawflow.agent.models.base import (
    ChatMessage,
    Model,
    ModelOutput,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCall,
)
from pawflow.agent.tools import Toolbox, ToolContext, ToolOutcome, call_key
from pawflow.errors import ModelError, PawFlowError
from pawflow.ids import new_id
from pawflow.redaction import redact

log = logging.getLogger("pawflow.agent.loop")

MODEL_ERROR = "model_error"
NOT_RUN = "not run: the turn ended before this call"


@dataclass(frozen=True)
class ApprovedCall:
    """A consequential call the user decided on while the run was halted.

    ``decision`` is ``approve``, ``edit`` (run with ``arguments``), ``reject`` or
    ``respond`` (``reason`` is the result, the tool does not run); ``approved`` says it runs.
    """

    call: ToolCall
    approved: bool
    reason: str = ""  # why it does not run, or the person's result for ``respond``
    decision: str = ""
    arguments: dict[str, Any] | None = None  # the approved arguments (None: as proposed)
    decided_by: str | None = None
    request_id: str | None = None
    digest: str | None = None


@dataclass
class RunRequest:
    """What to run: the conversation so far (system prompt first) and where tools act."""

    agent: str
    messages: Sequence[ChatMessage]
    context: ToolContext
    run_id: str = field(default_factory=new_id)
    # Calls to settle before the model speaks (the user's decision on an approval).
    approved_calls: Sequence[ApprovedCall] = ()
    # The step a resumed run halted at: it goes on at the next one (0 for a new run).
    start_step: int = 0


@dataclass(frozen=True)
class RunResult:
    run_id: str
    status: Literal["completed", "halted"]
    text: str
    steps: int
    halt_reason: str | None = None
    checkpoint: tuple[str, str] | None = None
    error: bool = False
    messages: tuple[ChatMessage, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StepStarted:
    run_id: str
    step: int


@dataclass(frozen=True)
class TextChunk:
    run_id: str
    step: int
    text: str


@dataclass(frozen=True)
class ToolStarted:
    run_id: str
    step: int
    call: ToolCall


@dataclass(frozen=True)
class ToolFinished:
    run_id: str
    step: int
    call: ToolCall
    outcome: ToolOutcome


@dataclass(frozen=True)
class RunFinished:
    result: RunResult


LoopEvent = StepStarted | TextChunk | ToolStarted | ToolFinished | RunFinished


class AgentLoop:
    def __init__(
        self,
        model: Model,
        tools: Toolbox,
        governance: Governance | None = None,
        checkpoints: CheckpointStore | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.governance = governance or Governance()
        self.checkpoints = checkpoints

    def run(self, request: RunRequest) -> RunResult:
        """Run to the end and return the result: the streamed run, consumed."""
        result: RunResult | None = None
        for event in self.stream(request):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None  # the stream always ends with RunFinished
        return result

    def stream(self, request: RunRequest) -> Iterator[LoopEvent]:
        """Run, yielding events as they happen; the last one is always :class:`RunFinished`."""
        run_id = request.run_id
        ctx = request.context
        ctx.run_id = run_id
        messages = list(request.messages)
        budget = Budget()
        step = request.start_step

        for settled in request.approved_calls:
            messages.append(ChatMessage("assistant", None, tool_calls=(settled.call,)))
            yield ToolStarted(run_id, step, settled.call)
            outcome = self._settle(settled, ctx)
            messages.append(ChatMessage("tool", outcome.content, tool_call_id=settled.call.id))
            yield ToolFinished(run_id, step, settled.call, outcome)

        said: list[str] = []  # what the agent told the user along the way, step by step

        def reply(*last: str | None) -> str:
            return "\n\n".join(p.strip() for p in (*said, *last) if p and p.strip())

        while True:
            step += 1
            ctx.step = step
            yield StepStarted(run_id, step)
            request_now = ModelRequest(messages=tuple(messages), tools=self.tools.specs())
            response: ModelResponse | None = None
            try:
                for output in self._call_model(request_now, budget):
                    if isinstance(output, TextDelta):
                        if output.text:
                            yield TextChunk(run_id, step, output.text)
                    else:
                        response = output
                if response is None:
                    raise ModelError("the model ended its reply without a final response")
            except Halt as halt:
                text = reply(f"I stopped here: {halt.detail}.")
                yield self._halt(request, messages, step, halt.reason, text)
                return
            except ModelError as exc:
                log.warning("run %s: model failed: %s", run_id, exc)
                text = reply(f"Sorry, I could not get a reply from the model: {exc.message}")
                yield self._halt(request, messages, step, MODEL_ERROR, text, error=True)
                return
            except Exception as exc:  # a provider's bug still ends the turn with a message
                log.exception("run %s: the model call failed unexpectedly", run_id)
                failure = redact(f"{type(exc).__name__}: {exc}")
                text = reply(f"Sorry, the model call failed: {failure}")
                yield self._halt(request, messages, step, MODEL_ERROR, text, error=True)
                return
            self.governance.after_model_call(request_now, response, budget)
            messages.append(
                ChatMessage("assistant", response.text or None, tool_calls=response.tool_calls)
            )
            if not response.tool_calls:
                result = RunResult(
                    run_id, "completed", reply(response.text), step, messages=tuple(messages)
                )
                yield RunFinished(result)
                return

            ended: ToolOutcome | None = None
            for call in response.tool_calls:
                if ended is not None:
                    messages.append(ChatMessage("tool", NOT_RUN, tool_call_id=call.id))
                    continue
                yield ToolStarted(run_id, step, call)
                outcome = self.tools.invoke(call, ctx)
                messages.append(ChatMessage("tool", outcome.content, tool_call_id=call.id))
                yield ToolFinished(run_id, step, call, outcome)
                if outcome.end_turn:
                    ended = outcome
            if ended is not None:
                yield self._halt(
                    request,
                    messages,
                    step,
                    ended.halt_reason or "ended_turn",
                    reply(response.text, ended.reply),
                    data=dict(ended.data),
                )
                return
            said.append(response.text)

    def _call_model(self, request: ModelRequest, budget: Budget) -> Iterator[ModelOutput]:
        """The one place a model is called, always behind the governance hook."""
        governed = self.governance.before_model_call(request, budget)
        yield from self.model.stream(governed)

    def _settle(self, settled: ApprovedCall, ctx: ToolContext) -> ToolOutcome:
        call = settled.call
        record = _approval_record(settled)
        if not settled.approved:
            text = settled.reason or f"The user declined: {call.name} was not run."
            if settled.decision == "reject":
                with contextlib.suppress(ValueError):
                    ctx.rejected[call_key(call.name, call.parsed_arguments())] = text
            return ToolOutcome(text, data={"approval": record})
        arguments = settled.arguments
        run = call if arguments is None else replace(call, arguments=json.dumps(arguments))
        if ctx.started is not None:
            with ctx.store.unit() as u:
                first = ctx.started(u)
                if first and settled.request_id is not None:
                    u.approvals.record_execution(
                        settled.request_id,
                        tool=call.name,
                        arguments=_arguments(run),
                        run_id=ctx.run_id,
                    )
            if not first:
                return ToolOutcome(
                    f"{call.name} was started before an interruption; it is not run again and"
                    " its outcome is unknown.",
                    error=True,
                )
        outcome = self.tools.invoke(run, ctx, approved=True)
        ctx.call = call
        record["executed"] = _arguments(run)
        if settled.decision == "edit":
            by = settled.decided_by or "the user"
            edited = json.dumps(arguments, ensure_ascii=False)
            outcome = replace(
                outcome, content=f"{by} edited the arguments to {edited}.\n{outcome.content}"
            )
        return replace(outcome, data={**outcome.data, "approval": record})

    def _halt(
        self,
        request: RunRequest,
        messages: list[ChatMessage],
        step: int,
        reason: str,
        text: str,
        *,
        error: bool = False,
        data: dict[str, Any] | None = None,
    ) -> RunFinished:
        step_id = f"{step:04d}"
        saved: tuple[str, str] | None = None
        if self.checkpoints is not None:
            payload = {
                "v": 1,
                "agent": request.agent,
                "run_id": request.run_id,
                "step": step,
                "halt_reason": reason,
                "messages": [m.to_dict() for m in messages],
                "data": data or {},
            }
            try:
                self.checkpoints.put(
                    request.run_id,
                    step_id,
                    payload,
                    agent=request.agent,
                    halt_reason=reason,
                    session_id=request.context.session_id,
                )
                saved = (request.run_id, step_id)
            except PawFlowError as exc:
                log.error("run %s: checkpoint not written: %s", request.run_id, exc)
        return RunFinished(
            RunResult(
                request.run_id,
                "halted",
                text,
                step,
                halt_reason=reason,
                checkpoint=saved,
                error=error,
                messages=tuple(messages),
                data=data or {},
            )
        )


def _arguments(call: ToolCall) -> dict[str, Any]:
    try:
        return call.parsed_arguments()
    except ValueError:
        return {}


def _approval_record(settled: ApprovedCall) -> dict[str, Any]:
    """What the transcript keeps of a decision: proposed, approved, and who decided."""
    approved = settled.arguments if settled.arguments is not None else _arguments(settled.call)
    return {
        "request_id": settled.request_id,
        "tool": settled.call.name,
        "decision": settled.decision or ("approve" if settled.approved else "reject"),
        "decided_by": settled.decided_by,
        "proposed": _arguments(settled.call),
        "approved": approved if settled.approved else None,
        "executed": None,
        "digest": settled.digest,
    }

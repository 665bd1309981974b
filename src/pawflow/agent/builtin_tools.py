"""The tools every agent has: ``request_confirmation`` and ``ask_user``; and in-chat approval.

``request_confirmation`` publishes an interaction and, in the same transaction, parks a
continuation for ``agent:<name>`` on its signal. The agent then ends its turn; the answer
(or a cancel, or the expiry) comes back later as a wakeup, in a new turn. With
``wait_seconds`` it first waits that long for a quick answer and, if one comes, takes it in
the same turn through what the run's caller hands it (``ToolContext.take_answer``; the chat
takes the answer off its turn queue), so that no wakeup follows for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pawflow.agent.models.base import ToolCall
from pawflow.agent.tools import (
    AWAITING_APPROVAL,
    AWAITING_CONFIRMATION,
    AWAITING_USER_INPUT,
    Tool,
    ToolContext,
    ToolOutcome,
)
from pawflow.agent.waits import AgentWait
from pawflow.errors import InvalidInput
from pawflow.interactions.tool_approval import DECISIONS, make_surface
from pawflow.records import Interaction, Outcome, Requester
from pawflow.store import Park, Question

MAX_WAIT_SECONDS = 120


def target_of(agent: str) -> str:
    return f"agent:{agent}"


def publish_request(
    ctx: ToolContext,
    *,
    kind: str,
    message: str,
    options: list[str] | None = None,
    title: str | None = None,
    expires_in: str | None = None,
    purpose: Literal["confirmation", "approval"] = "confirmation",
    tool_call: dict[str, Any] | None = None,
    ui_surface: dict[str, Any] | None = None,
    policy: Mapping[str, Any] | None = None,
) -> Interaction:
    """Ask the user, and park the agent's continuation on the answer: one transaction.

    The store refuses a user without write access to the conversation, as it would anyone.
    """

    def payload(interaction: Interaction) -> bytes:
        return AgentWait(
            purpose=purpose,
            agent=ctx.agent,
            conversation_id=ctx.conversation_id,
            user=ctx.user,
            request_id=interaction.id,
            signal_id=interaction.signal_id,
            question=message,
            kind=interaction.kind,
            run_id=ctx.run_id,
            tool_call=tool_call,
        ).encode()

    question = Question(
        ctx.user,
        ctx.conversation_id,
        kind,
        message,
        options=options,
        title=title,
        expires_in=expires_in,
        requester=Requester(type="agent", name=ctx.agent),
        ui_surface=ui_surface,
        policy=policy,
    )
    return ctx.store.ask(question, park=Park(target_of(ctx.agent), payload)).interaction


# --- how outcomes read, to the model and in the wakeup --------------------------------


def outcome_sentence(question: str, outcome: Outcome) -> str:
    """How an outcome reads; an answer the ``on_expire`` policy gave never reads as a person's."""
    asked = json.dumps(question, ensure_ascii=False)
    if outcome.status == "defaulted":
        shown = json.dumps(outcome.answer, ensure_ascii=False)
        within = outcome.waited or "its deadline"
        return f"No one answered {asked} within {within}; the default `{shown}` was applied."
    if outcome.status == "answered":
        return f"The user answered {asked}: {json.dumps(outcome.answer, ensure_ascii=False)}"
    if outcome.status == "cancelled":
        return f"The user cancelled {asked} without answering."
    return f"The request {asked} expired without an answer."


def wakeup_text(agent: str, request_id: str, question: str, outcome: Outcome) -> str:
    """``[agent:<name>] [confirmation:<id>] The user answered <what was asked>: <answer JSON>``."""
    return f"[agent:{agent}] [confirmation:{request_id}] " + outcome_sentence(question, outcome)


# --- the tools ------------------------------------------------------------------------


def request_confirmation(
    ctx: ToolContext,
    message: str,
    mode: Literal["confirm", "choice", "multi"] = "confirm",
    options: list[str] | None = None,
    title: str | None = None,
    expires_in: str | None = None,
    wait_seconds: float | None = None,
) -> ToolOutcome:
    """Ask the user to confirm a decision, or to pick one or several options, durably.

    The question is shown in the chat and in the user's pending inbox; they may answer
    minutes or days later. Unless answered within wait_seconds, this returns "pending":
    end your turn then. You will be woken with the answer (or told it was cancelled or
    expired) and continue from there. Use it for decisions that must not be lost.

    Args:
        message: The question, complete enough to answer days later without context.
        mode: confirm (yes/no), choice (exactly one option) or multi (several options).
        options: The options for choice and multi.
        title: A short title for the question.
        expires_in: How long the question stays open, e.g. 2h, 3d, 1mo; absent = forever.
        wait_seconds: Wait this many seconds (at most 120) for a quick answer first.
    """
    if wait_seconds is not None and not 0 <= wait_seconds <= MAX_WAIT_SECONDS:
        raise InvalidInput(f"wait_seconds must be between 0 and {MAX_WAIT_SECONDS}")
    if mode in ("choice", "multi") and not options:
        raise InvalidInput(f"mode {mode} needs options")
    interaction = publish_request(
        ctx,
        kind=mode,
        message=message,
        options=options if mode != "confirm" else None,
        title=title,
        expires_in=expires_in,
        # The answer comes back as the result of this very call, not as a line of its own.
        tool_call=None if ctx.call is None else ctx.call.to_dict(),
    )
    data = {"request_id": interaction.id, "signal_id": interaction.signal_id}
    if wait_seconds and ctx.take_answer is not None:
        fired = ctx.store.wait_signal(interaction.signal_id, wait_seconds)
        if fired is not None and isinstance(fired.value, dict):
            with ctx.store.unit() as u:
                ours = ctx.take_answer(u, interaction.signal_id)
            if ours:
                outcome = Outcome.of(fired.value, at=fired.fired_at)
                return ToolOutcome(
                    outcome_sentence(message, outcome),
                    data={**data, "status": outcome.to_value()["status"], "answer": outcome.answer},
                )
    return ToolOutcome(
        f"pending: the question was published as request {interaction.id}. End your turn now;"
        " you will be woken with the answer.",
        end_turn=True,
        halt_reason=AWAITING_CONFIRMATION,
        reply=f"I've asked: {message} I'll carry on when you answer.",
        data=data,
    )


def ask_user(question: str) -> ToolOutcome:
    """Ask the user a quick question in the live exchange; the run pauses until they reply.

    Use it when you need something from the user to go on and they are here now. Their next
    message comes back as the result of this call and the run goes on from here. For
    decisions that must survive until a later day, use request_confirmation.

    Args:
        question: The question, as the user will read it.
    """
    return ToolOutcome(
        "asked the user; their reply comes as the next message",
        end_turn=True,
        halt_reason=AWAITING_USER_INPUT,
        reply=question,
        data={"question": question},
    )


def _shown(value: Any) -> str:
    """An argument as a person reads it: text as itself, anything else as JSON."""
    if isinstance(value, str) and value.strip() and len(value) <= 200:
        return value
    return json.dumps(value, ensure_ascii=False)


def call_fields(call: ToolCall) -> list[tuple[str, str]]:
    """The call's arguments as (name, value) lines, values as a person reads them."""
    try:
        arguments = call.parsed_arguments()
    except ValueError:
        return [("arguments", call.arguments)]
    return [(name, _shown(value)) for name, value in arguments.items()]


def describe_call(call: ToolCall) -> str:
    """``rollback with environment: production``: a call as a person reads it."""
    fields = call_fields(call)
    if not fields:
        return call.name
    return f"{call.name} with " + ", ".join(f"{name}: {value}" for name, value in fields)


def request_approval(call: ToolCall, tool: Tool, ctx: ToolContext) -> ToolOutcome:
    """Ask, in the chat, whether a consequential call may run; the turn ends on it."""
    shown = describe_call(call)
    question = f"Allow {ctx.agent} to run {shown}?"
    approval = tool.policy
    policy = dict(tool.approval_policy or {})  # who approves, and its expires_in
    interaction = publish_request(
        ctx,
        kind="confirm",
        message=question,
        title="Approval needed",
        purpose="approval",
        tool_call=call.to_dict(),
        ui_surface=make_surface(
            tool=call.name,
            agent=ctx.agent,
            description=tool.description,
            arguments=call.parsed_arguments(),
            schema=tool.parameters,
            decisions=DECISIONS if approval is None else approval.decisions,
        ),
        expires_in=policy.pop("expires_in", None),
        policy=policy or None,
    )
    return ToolOutcome(
        f"pending: {call.name} needs the user's approval (request {interaction.id}); it has"
        " not run. End your turn now; you will be woken with the decision.",
        end_turn=True,
        halt_reason=AWAITING_APPROVAL,
        reply=f"I need your approval to run {shown}.",
        data={"request_id": interaction.id, "signal_id": interaction.signal_id},
    )


def _request_confirmation_tool() -> Tool:
    made = Tool.from_function(request_confirmation)
    schema = json.loads(json.dumps(made.parameters))
    schema["properties"]["wait_seconds"].update(minimum=0, maximum=MAX_WAIT_SECONDS)
    schema["properties"]["options"]["minItems"] = 1
    return Tool(
        name=made.name,
        description=made.description,
        parameters=schema,
        function=request_confirmation,
        context_param=made.context_param,
        arguments=made.arguments,
    )


def builtin_tools() -> list[Tool]:
    """Fresh instances of the tools every agent gets."""
    return [_request_confirmation_tool(), Tool.from_function(ask_user)]

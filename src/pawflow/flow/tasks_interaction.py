"""Tasks that ask a person: confirmations, typed input, and notifications.

They publish only into the scope the runtime injects — the deploying user, in the
deployment's conversation. No property or FlowFile attribute names the user; the one
exception, an explicit ``conversation_id`` on ``requestConfirmation``, is static text and is
honoured only where the deploying user has write access. A deployed flow asks once per
FlowFile and visit of the task: run again after a crash, the task finds the question it
already asked (:func:`asking_key`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pawflow.errors import FieldError, InvalidInput, NotFound
from pawflow.flow.expressions import Template
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.registry import register_task
from pawflow.flow.task import Emit, Property, Task, TaskContext, TaskFailed
from pawflow.interactions import Kind, normalize_options, parse_kind, prepare_request
from pawflow.store import Question

_KINDS = tuple(kind.value for kind in Kind)


def requester(ctx: TaskContext) -> dict[str, str]:
    """The requester record of interactions a flow publishes: who resumes on the answer."""
    return {
        "type": "flow",
        "name": ctx.runtime.flow_name,
        "instance": ctx.runtime.instance_id or "batch",
        "task": ctx.task.id,
    }


def asking_key(ctx: TaskContext) -> str | None:
    """The idempotency key of a deployed flow's question: its deployment, task, FlowFile
    and visit, the same when the task runs again after a crash, so the FlowFile finds the
    question it already asked. None in a one-shot run (nothing of it is run again)."""
    if not ctx.runtime.deployed:
        return None
    return f"flow:{ctx.runtime.instance_id}:{ctx.task.id}:{ctx.flowfile.id}:{ctx.hops}"


def _request_errors(exc: InvalidInput) -> list[FieldError]:
    """The request's own field errors, placed under the task's properties."""
    return [
        FieldError(f"properties.{e.path}" if e.path else "properties", e.message)
        for e in exc.errors
    ]


def _options(task: Task, flowfile: FlowFile) -> list[str] | None:
    templates: list[Template] | None = task.value("options")
    if not templates:
        return None
    return [t.render(flowfile.lookup) for t in templates]


def _static_options(task: Task) -> list[str] | None:
    templates: list[Template] | None = task.value("options")
    if not templates or not all(t.is_static for t in templates):
        return None
    return [t.static_value or "" for t in templates]


@register_task
class RequestConfirmation(Task):
    """Ask a yes/no, one-of or several-of question; stamps ``confirmation.*`` attributes."""

    type_name = "requestConfirmation"
    properties = (
        Property("message", required=True),
        Property("mode", "choice", default="confirm", choices=("confirm", "choice", "multi")),
        Property("options", "list", description="comma-separated, for choice and multi"),
        Property("title"),
        Property("expires_in", "duration"),
        Property(
            "conversation_id",
            "static",
            description="publish here instead (needs the deploying user's write access)",
        ),
    )
    relationships = ("success", "failure")

    def check(self) -> list[FieldError]:
        if self.value("mode") != "confirm" and not self.value("options"):
            return [FieldError("properties.options", f"mode {self.value('mode')} needs options")]
        static = _static_options(self)
        if static is not None:
            try:
                prepare_request(parse_kind(self.value("mode")), normalize_options(static), None)
            except InvalidInput as exc:
                return _request_errors(exc)
        return []

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        scope = ctx.scope
        conversation_id = self.value("conversation_id") or scope.conversation_id
        try:
            record = ctx.store.ask(
                Question(
                    scope.user,
                    conversation_id,
                    self.value("mode"),
                    ctx.prop("message") or "",
                    options=_options(self, flowfile),
                    title=ctx.prop("title") or None,
                    expires_in=ctx.prop("expires_in") or None,
                    requester=requester(ctx),
                    signal_family="confirmation",
                    idempotency_key=asking_key(ctx),
                )
            ).interaction
        except NotFound as exc:  # the store's write rule: no write access, or no conversation
            raise TaskFailed(
                f"requestConfirmation: {scope.user} may not publish into conversation"
                f" {conversation_id!r} (it needs write access there)"
            ) from exc
        yield (
            "success",
            flowfile.evolve(
                update={
                    "confirmation.request_id": record.id,
                    "confirmation.signal_id": record.signal_id,
                }
            ),
        )


def _schema(raw: Any, path: str) -> tuple[dict[str, Any] | None, list[FieldError]]:
    if raw is None:
        return None, []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            return None, [FieldError(path, f"not valid JSON: {exc}")]
    if not isinstance(raw, Mapping):
        return None, [FieldError(path, "expected a JSON Schema object (a mapping)")]
    return dict(raw), []


@register_task
class RequestUserInput(Task):
    """Ask for a typed answer of any kind; stamps ``interaction.*`` attributes."""

    type_name = "requestUserInput"
    properties = (
        Property("message", required=True),
        Property("kind", "choice", default="text", choices=_KINDS),
        Property("options", "list", description="for choice and multi"),
        Property("response_schema", "object", description="JSON Schema subset (R-1.3)"),
        Property("title"),
        Property("expires_in", "duration"),
        Property("policy", "object", description="who answers, on_expire (governance.md)"),
    )
    relationships = ("success", "failure")

    def __init__(self, task_id: str, values: Mapping[str, Any]) -> None:
        super().__init__(task_id, values)
        self.schema: dict[str, Any] | None = None

    def check(self) -> list[FieldError]:
        self.schema, errors = _schema(self.value("response_schema"), "properties.response_schema")
        if errors:
            return errors
        kind = parse_kind(self.value("kind"))
        static = _static_options(self)
        if self.value("options") and static is None:
            return []  # options made of expressions are checked when the request is made
        try:
            prepare_request(
                kind, None if static is None else normalize_options(static), self.schema
            )
        except InvalidInput as exc:
            return _request_errors(exc)
        return []

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        scope = ctx.scope
        record = ctx.store.ask(
            Question(
                scope.user,
                scope.conversation_id,
                self.value("kind"),
                ctx.prop("message") or "",
                options=_options(self, flowfile),
                title=ctx.prop("title") or None,
                response_schema=self.schema,
                expires_in=ctx.prop("expires_in") or None,
                requester=requester(ctx),
                signal_family="interaction",
                idempotency_key=asking_key(ctx),
                policy=self.value("policy") or None,
            )
        ).interaction
        yield (
            "success",
            flowfile.evolve(
                update={
                    "interaction.request_id": record.id,
                    "interaction.signal_id": record.signal_id,
                }
            ),
        )


@register_task
class NotifyUser(Task):
    """Tell the user something without waiting: ``sent`` if a client is live, else ``queued``."""

    type_name = "notifyUser"
    properties = (
        Property("message", required=True),
        Property("title"),
        Property("urgency", "choice", default="normal", choices=("low", "normal", "high")),
    )
    relationships = ("sent", "queued", "failure")

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        scope = ctx.scope
        message, title = ctx.prop("message") or "", ctx.prop("title") or None
        with ctx.store.unit() as u:
            status = u.messages.notify_user(
                scope.user,
                message,
                title=title,
                urgency=self.value("urgency"),
                conversation_id=scope.conversation_id,
            )
        yield status, flowfile.evolve(update={"notify.status": status})

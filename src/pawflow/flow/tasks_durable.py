"""Durable tasks: wait on a signal, fire one, and sleep until a deadline — across restarts.

``durableWait`` and ``durableTimer`` park the whole FlowFile (content and attributes) in the
store and emit nothing; the store hands it back to the same task of the same deployed
instance when the signal fires, the timeout passes or the deadline comes, however long that
takes and however often the server restarts meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import ClassVar

from pawflow.clock import iso
from pawflow.durations import parse_deadline, parse_duration
from pawflow.errors import FieldError, NotFound, PawFlowError
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.registry import register_task
from pawflow.flow.task import Emit, Property, Resumption, Task, TaskContext, TaskFailed

# Signals that only an interaction's answer, cancel or expiry may fire.
RESERVED_FAMILIES = ("confirmation:", "interaction:")


def _signal_id(task: Task, flowfile: FlowFile, ctx: TaskContext) -> str:
    direct = ctx.prop("signal_id")
    if direct:
        return direct
    attribute = task.value("signal_id_attribute")
    if attribute:
        found = flowfile.attributes.get(attribute)
        if found:
            return found
        raise TaskFailed(f"{task.type_name}: the FlowFile has no attribute {attribute!r}")
    raise TaskFailed(f"{task.type_name}: the signal id is empty")


def _one_of(task: Task, first: str, second: str, *, required: bool) -> list[FieldError]:
    given = [name for name in (first, second) if task.value(name) is not None]
    if len(given) > 1:
        return [FieldError(f"properties.{second}", f"give {first} or {second}, not both")]
    if required and not given:
        return [FieldError(f"properties.{first}", f"give {first} or {second}")]
    return []


def _needs_deployment(task: Task, ctx: TaskContext) -> None:
    if not ctx.runtime.deployed:
        raise TaskFailed(
            f"{task.type_name} needs a deployed flow: a one-shot batch run cannot receive the"
            " FlowFile when it resumes (deploy it with pawflow flow deploy)"
        )


@register_task
class DurableWait(Task):
    """Park the FlowFile until a signal fires (or the timeout passes), then pass it on.

    It leaves with ``durable.wait.status`` (``signaled``, ``timeout``, ``cancelled``),
    ``durable.wait.signal_id`` and ``durable.wait.value`` (the signal's value as JSON; an
    interaction's signal carries ``{"status", "answer"}``). ``timeout`` and ``cancelled``
    go on by ``success`` unless connected.
    """

    type_name = "durableWait"
    properties = (
        Property("signal_id", description="the signal to wait on (expressions allowed)"),
        Property(
            "signal_id_attribute",
            "static",
            default="confirmation.signal_id",
            description="the attribute holding the signal id, when signal_id is unset",
        ),
        Property("timeout", "duration", description="absent or 0: wait forever"),
    )
    relationships = ("success", "timeout", "cancelled", "failure")
    fallbacks: ClassVar[Mapping[str, str]] = {"timeout": "success", "cancelled": "success"}

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        if ctx.resumption is not None:
            yield self._resumed(flowfile, ctx.resumption)
            return
        _needs_deployment(self, ctx)
        signal_id = _signal_id(self, flowfile, ctx)
        family = next((f for f in RESERVED_FAMILIES if signal_id.startswith(f)), None)
        if family is not None:
            # An interaction's answer is only for the user it was asked of.
            try:
                ctx.store.get_interaction(signal_id[len(family) :], user=ctx.scope.user)
            except NotFound:
                raise TaskFailed(
                    f"durableWait: {signal_id!r} is not the signal of a request of {ctx.scope.user}"
                ) from None
        timeout = ctx.prop("timeout") or None
        parse_duration(timeout)
        ctx.park(
            flowfile.evolve(update={"durable.wait.signal_id": signal_id}),
            signal_id=signal_id,
            timeout=timeout,
        )

    def _resumed(self, flowfile: FlowFile, resumed: Resumption) -> Emit:
        status = resumed.outcome if resumed.outcome in ("timeout", "cancelled") else "signaled"
        update = {
            "durable.wait.status": status,
            "durable.wait.value": json.dumps(resumed.value),
        }
        if resumed.signal_id:
            update["durable.wait.signal_id"] = resumed.signal_id
        return ("success" if status == "signaled" else status), flowfile.evolve(update=update)


@register_task
class DurableNotify(Task):
    """Fire a durable signal: every FlowFile parked on it resumes, in any flow or process.

    With no waiter the value is remembered, and the next wait passes straight through.
    The value is text, or JSON with ``value_type: json``.
    """

    type_name = "durableNotify"
    properties = (
        Property("signal_id"),
        Property("signal_id_attribute", "static"),
        Property("value"),
        Property("value_attribute", "static"),
        Property("value_type", "choice", default="text", choices=("text", "json")),
    )
    relationships = ("success", "failure")

    def check(self) -> list[FieldError]:
        return _one_of(self, "signal_id", "signal_id_attribute", required=True) + _one_of(
            self, "value", "value_attribute", required=False
        )

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        signal_id = _signal_id(self, flowfile, ctx)
        if signal_id.startswith(RESERVED_FAMILIES):
            raise TaskFailed(
                f"durableNotify: {signal_id!r} fires only when its request is answered,"
                " cancelled or expires"
            )
        attribute = self.value("value_attribute")
        text = flowfile.attributes.get(attribute) if attribute else ctx.prop("value")
        value: object = text
        if text is not None and self.value("value_type") == "json":
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise TaskFailed(f"durableNotify: the value is not valid JSON: {exc}") from exc
        resolved = ctx.store.notify_signal(signal_id, value)
        yield (
            "success",
            flowfile.evolve(
                update={
                    "durable.notify.signal_id": signal_id,
                    "durable.notify.resolved": str(resolved),
                }
            ),
        )


@register_task
class DurableTimer(Task):
    """Park the FlowFile until a deadline, without holding a worker; then leave by ``elapsed``.

    The deadline is ``duration`` after arrival or the absolute, timezone-aware ``until``.
    Firing ``cancel_signal_id`` before then releases it by ``cancelled`` instead.
    """

    type_name = "durableTimer"
    properties = (
        Property("duration", "duration"),
        Property("until", description="ISO-8601 with a timezone, e.g. 2026-12-01T09:00:00Z"),
        Property("cancel_signal_id"),
    )
    relationships = ("elapsed", "cancelled", "failure")

    def check(self) -> list[FieldError]:
        errors = _one_of(self, "duration", "until", required=True)
        until = self.value("until")
        if not errors and until is not None and until.is_static:
            try:
                parse_deadline(until.static_value or "")
            except PawFlowError as exc:
                errors.append(FieldError("properties.until", str(exc)))
        return errors

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        if ctx.resumption is not None:
            status = "elapsed" if ctx.resumption.outcome in ("elapsed", "timeout") else "cancelled"
            update = {"durable.timer.status": status, "route.relationship": status}
            yield status, flowfile.evolve(update=update)
            return
        _needs_deployment(self, ctx)
        cancel = ctx.prop("cancel_signal_id") or None
        until_text = ctx.prop("until")
        if until_text:
            deadline = parse_deadline(until_text)
        else:
            duration = ctx.prop("duration") or ""
            step = parse_duration(duration)
            if step is None:
                raise TaskFailed("durableTimer: the duration must be more than 0")
            deadline = ctx.now() + step
        parked = flowfile.evolve(update={"durable.timer.deadline": iso(deadline)})
        if cancel:
            # A deadline on a signal ends as "timeout": the timer elapsed.
            ctx.park(parked, signal_id=cancel, timeout=None, until=deadline)
        else:
            ctx.park(parked, until=deadline)

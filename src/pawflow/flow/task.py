"""What a task is: its properties, its relationships, and the context it runs in.

A task receives one FlowFile at a time and emits ``(relationship, FlowFile)`` pairs. Its
properties are declared once (``Property``) and compiled when the flow loads; text
properties may hold ``${…}`` expressions, rendered against the FlowFile being processed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pawflow.clock import Clock, SystemClock
from pawflow.durations import parse_duration
from pawflow.errors import FieldError, PawFlowError
from pawflow.errors import TaskFailed as TaskFailed
from pawflow.flow.expressions import ExpressionError, Template, parse_template
from pawflow.flow.flowfile import FlowFile

if TYPE_CHECKING:
    from pawflow.flow.board import SignalBoard
    from pawflow.store import Store

PropertyType = Literal[
    "text", "static", "int", "bool", "choice", "duration", "map", "list", "object"
]
Emit = tuple[str, FlowFile]

log = logging.getLogger("pawflow.flow")


@dataclass(frozen=True)
class Property:
    """One property a task type accepts.

    ``type``: ``text`` (expressions allowed), ``static`` (plain text), ``int``, ``bool``,
    ``choice`` (one of ``choices``), ``duration`` (text read as a duration), ``map`` (names
    to text), ``list`` (a YAML list or comma-separated text), ``object`` (any YAML value).
    """

    name: str
    type: PropertyType = "text"
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class FlowScope:
    """Whom a deployed flow acts for: its deploying user, in one conversation."""

    user: str
    conversation_id: str


@dataclass(frozen=True)
class Resumption:
    """Why a held or parked FlowFile came back to the task that held it."""

    outcome: str
    signal_id: str | None = None
    value: Any = None


@dataclass
class RuntimeContext:
    """What every task of one running flow shares."""

    flow_name: str
    store: Store | None = None
    scope: FlowScope | None = None
    instance_id: str | None = None
    clock: Clock = field(default_factory=SystemClock)
    board: SignalBoard | None = None

    @property
    def deployed(self) -> bool:
        return self.instance_id is not None

    @property
    def target(self) -> str:
        return f"flow:{self.instance_id}"

    def board_key(self, key: str) -> str:
        """In-process signals are kept apart per deploying user."""
        return key if self.scope is None else f"{self.scope.user}\x00{key}"


class Parker:
    """How a task parks a FlowFile durably; the deployed runtime provides one."""

    def park(
        self,
        task_id: str,
        flowfile: FlowFile,
        *,
        signal_id: str | None = None,
        timeout: str | None = None,
        until: str | datetime | None = None,
    ) -> None:
        raise NotImplementedError

    def hold(
        self, task_id: str, flowfile: FlowFile, key: str, deadline: datetime | None
    ) -> Resumption | None:
        raise NotImplementedError


class TaskContext:
    """What ``process`` may use besides the FlowFile: properties, the store, parking."""

    def __init__(
        self,
        task: Task,
        flowfile: FlowFile,
        runtime: RuntimeContext,
        parker: Parker,
        resumption: Resumption | None = None,
        *,
        attempt: int = 1,
        hops: int = 0,
    ) -> None:
        self.task = task
        self.flowfile = flowfile
        self.runtime = runtime
        self.resumption = resumption
        self.attempt = attempt
        """1 the first time this task runs on this FlowFile; more when it runs again after a
        crash (with ``flowfile.id``, what an idempotent task keys its effects by)."""
        self.hops = hops
        """How many tasks this FlowFile passed before this one: the same when the task runs
        again after a crash, more when a flow loops back to it."""
        self._parker = parker
        self.log = logging.getLogger(f"pawflow.flow.{runtime.flow_name}")

    def prop(self, name: str) -> str | None:
        """A text property rendered against the current FlowFile (``None`` when unset)."""
        return self.task.text(name, self.flowfile)

    def value(self, name: str) -> Any:
        """A property's compiled value (``int``, ``bool``, ``map`` of templates, …)."""
        return self.task.value(name)

    def now(self) -> datetime:
        return self.runtime.clock.now()

    @property
    def store(self) -> Store:
        if self.runtime.store is None:
            raise TaskFailed(
                f"{self.task.type_name} needs a store: deploy the flow, or run it with --db"
            )
        return self.runtime.store

    @property
    def scope(self) -> FlowScope:
        if self.runtime.scope is None:
            raise TaskFailed(
                f"{self.task.type_name} needs a user and a conversation: deploy the flow"
                " (pawflow flow deploy), or run it with --conversation"
            )
        return self.runtime.scope

    def park(
        self,
        flowfile: FlowFile,
        *,
        signal_id: str | None = None,
        timeout: str | None = None,
        until: str | datetime | None = None,
    ) -> None:
        """Park ``flowfile`` durably; it comes back to this task with a ``Resumption``.

        The park is recorded with this task's outcome, in the same transaction."""
        if not self.runtime.deployed:
            raise TaskFailed(
                f"{self.task.type_name} needs a deployed flow: a batch run cannot receive the"
                " FlowFile when it resumes (deploy it with pawflow flow deploy)"
            )
        self._parker.park(self.task.id, flowfile, signal_id=signal_id, timeout=timeout, until=until)

    def hold(self, flowfile: FlowFile, key: str, deadline: datetime | None) -> Resumption | None:
        """Hold ``flowfile`` in memory until ``key`` is notified in this process.

        Returns at once when the key was already notified; otherwise the FlowFile comes
        back to this task later, with a ``Resumption``.
        """
        return self._parker.hold(self.task.id, flowfile, key, deadline)


class Task:
    """Base of every task type. Subclasses declare ``type_name``, properties, relationships."""

    type_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    properties: ClassVar[tuple[Property, ...]] = ()
    relationships: ClassVar[tuple[str, ...]] = ("success", "failure")
    fallbacks: ClassVar[Mapping[str, str]] = {}
    """Relationships that go on by another one when nothing is connected to them."""
    batch: ClassVar[int | None] = None
    """At most this many FlowFiles per transaction on a deployed flow (None: the engine's)."""
    side_effects: ClassVar[bool] = False
    """The task acts outside PawFlow (mails, payments, calls): a deployed flow records each
    FlowFile's outcome before the next, so a crash runs it again on one FlowFile at most."""

    def __init__(self, task_id: str, values: Mapping[str, Any]) -> None:
        self.id = task_id
        self._values = dict(values)

    @classmethod
    def property_named(cls, name: str) -> Property | None:
        return next((p for p in cls.properties if p.name == name), None)

    def all_relationships(self) -> tuple[str, ...]:
        """The relationships this configured task can emit."""
        return self.relationships

    def check(self) -> list[FieldError]:
        """Problems between properties, found when the flow loads (paths under the task)."""
        return []

    def value(self, name: str) -> Any:
        return self._values.get(name)

    def text(self, name: str, flowfile: FlowFile) -> str | None:
        template = self._values.get(name)
        if template is None:
            return None
        if not isinstance(template, Template):
            return str(template)
        return template.render(flowfile.lookup)

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        raise NotImplementedError


# -- compiling property values ----------------------------------------------------------


def _as_text(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _template(value: object, path: str, errors: list[FieldError]) -> Template | None:
    text = _as_text(value)
    if text is None:
        errors.append(FieldError(path, "expected text"))
        return None
    try:
        return parse_template(text)
    except ExpressionError as exc:
        errors.append(FieldError(path, exc.message))
        return None


def compile_value(spec: Property, raw: object, path: str, errors: list[FieldError]) -> Any:
    """A YAML property value in the form ``spec`` asks for; problems go to ``errors``."""
    if spec.type == "text":
        return _template(raw, path, errors)
    if spec.type == "duration":
        template = _template(raw, path, errors)
        if template is not None and template.is_static:
            try:
                parse_duration(template.static_value)
            except PawFlowError as exc:
                errors.append(FieldError(path, str(exc)))
        return template
    if spec.type in ("static", "choice"):
        text = _as_text(raw)
        if text is None:
            errors.append(FieldError(path, "expected text"))
        elif "${" in text:
            errors.append(FieldError(path, "expressions are not allowed in this property"))
        elif spec.type == "choice" and text not in spec.choices:
            errors.append(FieldError(path, f"{text!r} is not one of {', '.join(spec.choices)}"))
        else:
            return text
        return None
    if spec.type == "int":
        if isinstance(raw, bool) or not isinstance(raw, int | str):
            errors.append(FieldError(path, "expected a whole number"))
            return None
        try:
            return int(raw)
        except ValueError:
            errors.append(FieldError(path, "expected a whole number"))
            return None
    if spec.type == "bool":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in ("true", "false", "yes", "no"):
            return raw.lower() in ("true", "yes")
        errors.append(FieldError(path, "expected true or false"))
        return None
    if spec.type == "map":
        if not isinstance(raw, Mapping):
            errors.append(FieldError(path, "expected a mapping of names to values"))
            return None
        compiled: dict[str, Template] = {}
        for key, item in raw.items():
            template = _template(item, f"{path}.{key}", errors)
            if template is not None:
                compiled[str(key)] = template
        return compiled
    if spec.type == "list":
        items = [s.strip() for s in raw.split(",")] if isinstance(raw, str) else raw
        if not isinstance(items, list):
            errors.append(FieldError(path, "expected a list, or comma-separated text"))
            return None
        templates = [_template(item, f"{path}[{i}]", errors) for i, item in enumerate(items)]
        return [t for t in templates if t is not None and (t.static_value or not t.is_static)]
    return raw  # object: any YAML value, checked by the task

"""The task registry: task types by name, and the decorator users register theirs with.

::

    from pawflow.flow import FlowFile, Property, TaskContext, flow_task

    @flow_task("shout", properties=[Property("suffix", default="!")])
    def shout(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
        return flowfile.evolve(content=flowfile.text().upper() + (ctx.prop("suffix") or ""))

A function task returns a FlowFile (sent to ``success``), a ``(relationship, FlowFile)``
pair, a list of either, or ``None`` (the FlowFile is dropped). Raising sends the FlowFile to
``failure`` with the reason in ``failure.reason``.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pawflow.errors import FieldError, InvalidInput
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.task import Emit, Property, Task, TaskContext, compile_value

T = TypeVar("T", bound=type[Task])
TaskFunction = Callable[[FlowFile, TaskContext], Any]

_import_lock = threading.Lock()


class TaskRegistry:
    """Task types by name. Names are unique: a registration never replaces a built-in."""

    def __init__(self, parent: TaskRegistry | None = None) -> None:
        self._types: dict[str, type[Task]] = {}
        self._parent = parent
        self._lock = threading.Lock()

    def register(self, task_type: T, *, replace: bool = False) -> T:
        name = task_type.type_name
        if not name:
            raise InvalidInput(f"{task_type.__name__} has no type_name")
        with self._lock:
            existing = self.get(name)
            if (
                existing is not None
                and existing is not task_type
                and not replace
                and not _same_definition(existing, task_type)
            ):
                raise InvalidInput(f"a task type named {name!r} is already registered")
            self._types[name] = task_type
        return task_type

    def get(self, name: str) -> type[Task] | None:
        found = self._types.get(name)
        if found is None and self._parent is not None:
            return self._parent.get(name)
        return found

    def names(self) -> list[str]:
        inherited = self._parent.names() if self._parent is not None else []
        return sorted({*inherited, *self._types})

    def task(
        self,
        name: str,
        *,
        properties: Sequence[Property] = (),
        relationships: Sequence[str] = ("success", "failure"),
        description: str = "",
        batch: int | None = None,
        side_effects: bool = False,
    ) -> Callable[[TaskFunction], TaskFunction]:
        """Register a function as the task type ``name``.

        ``side_effects=True`` (or ``batch=1``): the function acts outside PawFlow, so a
        deployed flow records each FlowFile's outcome before it runs on the next.
        """
        if batch is not None and (
            isinstance(batch, bool) or not isinstance(batch, int) or batch < 1
        ):
            raise InvalidInput(f"task {name}: batch must be a whole number of at least 1")

        def decorate(function: TaskFunction) -> TaskFunction:
            rels = tuple(relationships)
            if "failure" not in rels:
                rels = (*rels, "failure")
            task_type = type(
                f"FunctionTask_{name}",
                (FunctionTask,),
                {
                    "type_name": name,
                    "description": description or (function.__doc__ or "").strip(),
                    "properties": tuple(properties),
                    "relationships": rels,
                    "batch": batch,
                    "side_effects": bool(side_effects),
                    "function": staticmethod(function),
                    "__module__": function.__module__,
                    "__qualname__": f"{function.__qualname__}.task",
                },
            )
            self.register(task_type)
            return function

        return decorate

    def create(self, task_id: str, type_name: str, raw: Mapping[str, Any], path: str) -> Task:
        """A configured task; raises ``InvalidInput`` naming every bad property."""
        task_type = self.get(type_name)
        if task_type is None:
            hint = difflib.get_close_matches(type_name, self.names(), n=1)
            also = f" (did you mean {hint[0]}?)" if hint else ""
            raise InvalidInput(
                f"unknown task type {type_name!r}{also}",
                [FieldError(f"{path}.type", f"unknown task type {type_name!r}{also}")],
            )
        errors: list[FieldError] = []
        values: dict[str, Any] = {}
        known = {p.name: p for p in task_type.properties}
        for name, raw_value in raw.items():
            spec = known.get(str(name))
            if spec is None:
                hint = difflib.get_close_matches(str(name), list(known), n=1)
                also = f" (did you mean {hint[0]}?)" if hint else ""
                names = ", ".join(known) or "none"
                errors.append(
                    FieldError(
                        f"{path}.properties.{name}",
                        f"{type_name} has no property {name!r}{also}; its properties: {names}",
                    )
                )
                continue
            if raw_value is None:
                continue
            values[spec.name] = compile_value(
                spec, raw_value, f"{path}.properties.{spec.name}", errors
            )
        for spec in task_type.properties:
            if spec.name in values:
                continue
            if spec.required:
                errors.append(
                    FieldError(f"{path}.properties.{spec.name}", f"{type_name} needs {spec.name}")
                )
            elif spec.default is not None:
                values[spec.name] = compile_value(
                    spec, spec.default, f"{path}.properties.{spec.name}", errors
                )
        if not errors:
            task = task_type(task_id, values)
            errors = [FieldError(f"{path}.{e.path}", e.message) for e in task.check()]
            if not errors:
                return task
        raise InvalidInput(f"task {task_id!r} is misconfigured", errors)


def _same_definition(a: type[Task], b: type[Task]) -> bool:
    # The same module imported twice (a flow's imports re-read) registers an equal type.
    return a.__module__ == b.__module__ and a.__qualname__ == b.__qualname__


class FunctionTask(Task):
    """A task made of a decorated function."""

    function: Callable[[FlowFile, TaskContext], Any]

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        result = type(self).function(flowfile, ctx)
        return list(_emits(result, self.all_relationships(), self.type_name))


def _emits(result: Any, relationships: tuple[str, ...], name: str) -> Iterable[Emit]:
    if result is None:
        return
    items = result if isinstance(result, list) else [result]
    for item in items:
        if isinstance(item, FlowFile):
            yield "success", item
        elif (
            isinstance(item, tuple)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], FlowFile)
        ):
            if item[0] not in relationships:
                raise InvalidInput(f"task {name} emitted to unknown relationship {item[0]!r}")
            yield item[0], item[1]
        else:
            raise InvalidInput(
                f"task {name} returned {type(item).__name__}: expected a FlowFile,"
                " a (relationship, FlowFile) pair, a list of them, or None"
            )


default_registry = TaskRegistry()


def flow_task(
    name: str,
    *,
    properties: Sequence[Property] = (),
    relationships: Sequence[str] = ("success", "failure"),
    description: str = "",
    batch: int | None = None,
    side_effects: bool = False,
) -> Callable[[TaskFunction], TaskFunction]:
    """Register a Python function as a task type of the default registry.

    ``side_effects=True`` (or ``batch=1``) for a function with outside effects: a deployed
    flow records each FlowFile's outcome before the next, so a crash repeats one at most.
    """
    return default_registry.task(
        name,
        properties=properties,
        relationships=relationships,
        description=description,
        batch=batch,
        side_effects=side_effects,
    )


def register_task(task_type: T) -> T:
    """Class decorator: register a ``Task`` subclass in the default registry."""
    return default_registry.register(task_type)


def import_tasks(spec: str, base_dir: Path | None = None) -> None:
    """Import a module (``package.module``) or a file (``tasks.py``) that registers tasks."""
    with _import_lock:
        if spec.endswith(".py"):
            path = Path(spec)
            if not path.is_absolute() and base_dir is not None:
                path = base_dir / path
            path = path.resolve()
            if not path.is_file():
                raise InvalidInput(f"cannot import {spec!r}: no file {path}")
            name = "pawflow_flow_tasks_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
            if name in sys.modules:
                return
            module_spec = importlib.util.spec_from_file_location(name, path)
            if module_spec is None or module_spec.loader is None:
                raise InvalidInput(f"cannot import {spec!r}")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            try:
                module_spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
        else:
            try:
                importlib.import_module(spec)
            except ImportError as exc:
                raise InvalidInput(f"cannot import {spec!r}: {exc}") from exc

"""Flow definitions: YAML in, a validated graph of configured tasks out.

::

    name: greet
    start: make            # optional: the first task listed
    tasks:
      make:
        type: generateFlowFile
        properties: {content: hello}
        next: shout        # short for {success: shout}
      shout:
        type: log
        properties: {message: "${uuid} says hi"}

Every problem is reported at once, each with its place (``tasks.shout.properties.level``),
so a typo never surfaces later as a FlowFile lost at run time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pawflow.durations import parse_duration
from pawflow.errors import FieldError, InvalidInput, PawFlowError
from pawflow.errors import FlowDefinitionError as FlowDefinitionError
from pawflow.flow.registry import TaskRegistry, default_registry, import_tasks
from pawflow.flow.task import Task

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}")
TOP_KEYS = ("name", "description", "start", "queue_capacity", "idle_stop", "imports", "tasks")
TASK_KEYS = ("type", "description", "properties", "next", "batch", "side_effects")
DEFAULT_QUEUE_CAPACITY = 10_000


@dataclass(frozen=True)
class FlowDefinition:
    name: str
    start: str
    tasks: Mapping[str, Task]
    connections: Mapping[str, Mapping[str, tuple[str, ...]]]
    description: str = ""
    queue_capacity: int = DEFAULT_QUEUE_CAPACITY
    idle_stop: str | None = None
    imports: tuple[str, ...] = ()
    source: str = ""
    base_dir: Path | None = field(default=None, compare=False)
    batches: Mapping[str, int] = field(default_factory=dict)
    """Per task id, the most FlowFiles one transaction takes (``batch``, ``side_effects``)."""

    def batch_limit(self, task_id: str) -> int | None:
        """The most FlowFiles of ``task_id`` recorded together; None: no limit of its own."""
        return self.batches.get(task_id)

    def targets(self, task_id: str, relationship: str) -> tuple[str, ...]:
        """Where ``relationship`` of ``task_id`` leads; unconnected fallbacks follow on."""
        links = self.connections.get(task_id, {})
        seen = {relationship}
        while relationship not in links:
            fallback = self.tasks[task_id].fallbacks.get(relationship)
            if fallback is None or fallback in seen:
                return ()
            seen.add(fallback)
            relationship = fallback
        return links[relationship]


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses duplicate keys (a repeated task id would vanish)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in result:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", mark)
        result[key] = loader.construct_object(value_node, deep=True)
    return result


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _read_yaml(text: str, source_name: str) -> Any:
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise FlowDefinitionError(
            f"{source_name} is not valid YAML{where}: {problem}",
            [FieldError("", f"not valid YAML{where}: {problem}")],
        ) from exc


def load_flow(path: str | Path, *, registry: TaskRegistry | None = None) -> FlowDefinition:
    """Read and validate the flow in the YAML file ``path``."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc.strerror or exc}") from exc
    return parse_flow(
        text, registry=registry, base_dir=file.resolve().parent, source_name=str(file)
    )


def parse_flow(
    text: str,
    *,
    registry: TaskRegistry | None = None,
    base_dir: Path | None = None,
    source_name: str = "flow",
) -> FlowDefinition:
    """Validate a flow written in YAML; raises ``FlowDefinitionError`` with every problem."""
    tasks_registry = registry or default_registry
    document = _read_yaml(text, source_name)
    errors: list[FieldError] = []

    def fail() -> FlowDefinitionError:
        count = len(errors)
        noun = "problem" if count == 1 else "problems"
        return FlowDefinitionError(f"{source_name}: {count} {noun} in the flow", errors)

    if not isinstance(document, Mapping):
        errors.append(FieldError("", "a flow is a mapping with a 'tasks' key"))
        raise fail()
    for key in document:
        if key not in TOP_KEYS:
            errors.append(FieldError(str(key), f"unknown key; expected {', '.join(TOP_KEYS)}"))

    name = document.get("name", Path(source_name).stem if source_name != "flow" else "flow")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        errors.append(FieldError("name", "letters, digits, '_', '-', '.' (at most 100)"))
        name = "flow"
    description = document.get("description") or ""
    if not isinstance(description, str):
        errors.append(FieldError("description", "expected text"))
        description = ""
    capacity = document.get("queue_capacity", DEFAULT_QUEUE_CAPACITY)
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        errors.append(FieldError("queue_capacity", "expected a whole number of at least 1"))
        capacity = DEFAULT_QUEUE_CAPACITY
    idle_stop = document.get("idle_stop")
    if idle_stop is not None:
        try:
            parse_duration(str(idle_stop))
            idle_stop = str(idle_stop)
        except PawFlowError as exc:
            errors.append(FieldError("idle_stop", str(exc)))
            idle_stop = None

    imports = document.get("imports") or []
    if not isinstance(imports, list) or not all(isinstance(i, str) for i in imports):
        errors.append(FieldError("imports", "expected a list of modules or .py files"))
        imports = []
    for index, spec in enumerate(imports):
        try:
            import_tasks(spec, base_dir)
        except InvalidInput as exc:
            errors.append(FieldError(f"imports[{index}]", exc.message))
        except Exception as exc:
            errors.append(FieldError(f"imports[{index}]", f"{type(exc).__name__}: {exc}"))

    raw_tasks = document.get("tasks")
    if not isinstance(raw_tasks, Mapping) or not raw_tasks:
        errors.append(FieldError("tasks", "a flow needs at least one task (a mapping: id → task)"))
        raise fail()

    tasks: dict[str, Task] = {}
    batches: dict[str, int] = {}
    raw_next: dict[str, tuple[str, Any]] = {}
    for task_id, raw_task in raw_tasks.items():
        path = f"tasks.{task_id}"
        if not isinstance(task_id, str) or not NAME.fullmatch(task_id):
            errors.append(FieldError(path, "task ids are letters, digits, '_', '-', '.'"))
            continue
        if not isinstance(raw_task, Mapping):
            errors.append(FieldError(path, "expected a mapping with 'type'"))
            continue
        for key in raw_task:
            if key not in TASK_KEYS:
                errors.append(
                    FieldError(f"{path}.{key}", f"unknown key; expected {', '.join(TASK_KEYS)}")
                )
        type_name = raw_task.get("type")
        if not isinstance(type_name, str):
            errors.append(FieldError(f"{path}.type", "every task needs a type"))
            continue
        properties = raw_task.get("properties") or {}
        if not isinstance(properties, Mapping):
            errors.append(FieldError(f"{path}.properties", "expected a mapping"))
            continue
        try:
            tasks[task_id] = tasks_registry.create(task_id, type_name, properties, path)
        except InvalidInput as exc:
            errors.extend(exc.errors)
            continue
        limit = _batch_limit(tasks[task_id], raw_task, path, errors)
        if limit is not None:
            batches[task_id] = limit
        if raw_task.get("next") is not None:
            raw_next[task_id] = (path, raw_task["next"])

    connections: dict[str, dict[str, tuple[str, ...]]] = {}
    for task_id, (path, raw) in raw_next.items():
        connections[task_id] = _connections(
            tasks[task_id], raw, f"{path}.next", set(raw_tasks), errors
        )

    start = document.get("start", next(iter(raw_tasks)))
    if not isinstance(start, str) or start not in raw_tasks:
        errors.append(FieldError("start", f"no task named {start!r}"))
    if errors:
        raise fail()
    return FlowDefinition(
        name=name,
        start=start,
        tasks=tasks,
        connections=connections,
        description=description,
        queue_capacity=capacity,
        idle_stop=idle_stop,
        imports=tuple(imports),
        source=text,
        base_dir=base_dir,
        batches=batches,
    )


def _batch_limit(
    task: Task, raw: Mapping[str, Any], path: str, errors: list[FieldError]
) -> int | None:
    """The most FlowFiles a transaction takes for ``task``: the smallest of what its type
    and its YAML declare (``side_effects`` counts as 1); None when neither limits it."""
    limits = [limit for limit in (type(task).batch,) if limit is not None]
    if type(task).side_effects:
        limits.append(1)
    batch = raw.get("batch")
    if batch is not None:
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            errors.append(FieldError(f"{path}.batch", "expected a whole number of at least 1"))
        else:
            limits.append(batch)
    side_effects = raw.get("side_effects")
    if side_effects is not None:
        if not isinstance(side_effects, bool):
            errors.append(FieldError(f"{path}.side_effects", "expected true or false"))
        elif side_effects:
            limits.append(1)
    return min(limits) if limits else None


def _connections(
    task: Task, raw: Any, path: str, task_ids: set[Any], errors: list[FieldError]
) -> dict[str, tuple[str, ...]]:
    if isinstance(raw, str | list):
        raw = {"success": raw}
    if not isinstance(raw, Mapping):
        errors.append(FieldError(path, "expected a task id, or a mapping relationship → task(s)"))
        return {}
    relationships = task.all_relationships()
    links: dict[str, tuple[str, ...]] = {}
    for relationship, targets in raw.items():
        where = f"{path}.{relationship}"
        if isinstance(relationship, bool):
            errors.append(FieldError(where, "YAML reads yes/no/on/off as booleans: quote it"))
            continue
        if relationship not in relationships:
            errors.append(
                FieldError(
                    where,
                    f"{task.type_name} has no relationship {relationship!r};"
                    f" it has {', '.join(relationships)}",
                )
            )
            continue
        listed = [targets] if isinstance(targets, str) else targets
        if not isinstance(listed, list) or not all(isinstance(t, str) for t in listed):
            errors.append(FieldError(where, "expected a task id or a list of task ids"))
            continue
        for target in listed:
            if target not in task_ids:
                errors.append(FieldError(where, f"no task named {target!r}"))
        links[str(relationship)] = tuple(listed)
    return links

"""Flow YAML: validated at load, every problem named by its place."""

from __future__ import annotations

from pathlib import Path

import pytest

from pawflow.flow import (
    FlowDefinitionError,
    FlowFile,
    TaskContext,
    flow_task,
    load_flow,
    parse_flow,
)

GOOD = """
name: ok
tasks:
  a:
    type: updateAttribute
    properties: {set: {x: "1"}}
    next: b
  b:
    type: log
"""


def problems(text: str) -> str:
    with pytest.raises(FlowDefinitionError) as caught:
        parse_flow(text)
    return str(caught.value)


def test_a_good_flow_loads() -> None:
    flow = parse_flow(GOOD)
    assert flow.name == "ok"
    assert flow.start == "a"
    assert flow.targets("a", "success") == ("b",)
    assert flow.targets("b", "success") == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tasks: [", "not valid YAML at line 1"),
        ("tasks:\n  a: {type: log}\n  a: {type: log}\n", "duplicate key 'a'"),
        ("name: x\n", "tasks: a flow needs at least one task"),
        ("tasks:\n  a: {type: lgo}\n", "tasks.a.type: unknown task type 'lgo' (did you mean log?)"),
        ("tasks:\n  a: {kind: log}\n", "tasks.a.kind: unknown key"),
        (
            "tasks:\n  a: {type: log, properties: {mesage: hi}}\n",
            "tasks.a.properties.mesage: log has no property 'mesage' (did you mean message?)",
        ),
        (
            "tasks:\n  a: {type: log, properties: {level: loud}}\n",
            "tasks.a.properties.level: 'loud' is not one of debug, info, warning, error",
        ),
        (
            "tasks:\n  a: {type: log, properties: {message: '${x'}}\n",
            "tasks.a.properties.message: expected '}'",
        ),
        ("tasks:\n  a: {type: log, next: {sucess: a}}\n", "log has no relationship 'sucess'"),
        ("tasks:\n  a: {type: log, next: b}\n", "tasks.a.next.success: no task named 'b'"),
        ("tasks:\n  a: {type: requestConfirmation}\n", "requestConfirmation needs message"),
        (
            "tasks:\n  a: {type: requestConfirmation, properties: {message: m, mode: choice}}\n",
            "mode choice needs options",
        ),
        (
            "tasks:\n  a: {type: durableWait, properties: {timeout: soon}}\n",
            "tasks.a.properties.timeout: invalid duration 'soon'",
        ),
        (
            "tasks:\n  a: {type: durableTimer}\n",
            "tasks.a.properties.duration: give duration or until",
        ),
        (
            "tasks:\n  a: {type: durableTimer, properties: {until: '2026-01-01T00:00:00'}}\n",
            "must carry a timezone",
        ),
        (
            "tasks:\n  a: {type: requestUserInput, properties: {message: m, kind: form}}\n",
            "tasks.a.properties",
        ),
        (
            "tasks:\n  a:\n    type: routeOnAttribute\n    properties:\n"
            "      routes: {hot: {attribute: t, equal: x}}\n",
            "tasks.a.properties.routes.hot.equal: unknown key",
        ),
        (
            "tasks:\n  a:\n    type: routeOnAttribute\n    properties:\n"
            "      routes: {hot: {attribute: t, matches: '('}}\n",
            "tasks.a.properties.routes.hot.matches: not a valid regular expression",
        ),
        (
            "tasks:\n  a:\n    type: routeOnAttribute\n    properties:\n"
            "      routes: {yes: {attribute: t, exists: true}}\n",
            "quote it",
        ),
        ("tasks:\n  a: {type: log, batch: 0}\n", "tasks.a.batch: expected a whole number"),
        ("tasks:\n  a: {type: log, batch: many}\n", "tasks.a.batch: expected a whole number"),
        ("tasks:\n  a: {type: log, side_effects: 1}\n", "tasks.a.side_effects: expected true"),
        ("start: nowhere\ntasks:\n  a: {type: log}\n", "start: no task named 'nowhere'"),
        ("imports: [no_such_module_here]\ntasks:\n  a: {type: log}\n", "imports[0]: cannot import"),
    ],
)
def test_errors_name_the_task_and_property(text: str, expected: str) -> None:
    assert expected in problems(text)


def test_tasks_with_outside_effects_take_one_flowfile_at_a_time() -> None:
    flow = parse_flow(
        """
tasks:
  plain: {type: log, next: mail}
  mail: {type: log, side_effects: true, next: few}
  few: {type: log, batch: 5, next: both}
  both: {type: log, batch: 5, side_effects: true, next: declared}
  declared: {type: effectful, batch: 3}
"""
    )
    limits = {task_id: flow.batch_limit(task_id) for task_id in flow.tasks}
    assert limits == {"plain": None, "mail": 1, "few": 5, "both": 1, "declared": 1}


@flow_task("effectful", side_effects=True)
def effectful(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    return flowfile


def test_every_problem_is_reported_at_once() -> None:
    report = problems(
        "tasks:\n  a: {type: log, properties: {colour: red}}\n  b: {type: nope}\n"
        "  c: {type: log, next: zz}\n"
    )
    assert "3 problems" in report
    for place in ("tasks.a.properties.colour", "tasks.b.type", "tasks.c.next.success"):
        assert place in report


def test_routes_become_relationships() -> None:
    flow = parse_flow(
        "tasks:\n  r:\n    type: routeOnAttribute\n    properties:\n"
        "      routes: {hot: {attribute: t, equals: x}}\n    next: {hot: l, unmatched: l}\n"
        "  l: {type: log}\n"
    )
    assert flow.tasks["r"].all_relationships() == ("hot", "unmatched", "failure")


def test_load_flow_reads_a_file_and_names_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "broken.yaml"
    path.write_text("tasks:\n  a: {type: lgo}\n")
    with pytest.raises(FlowDefinitionError, match=r"broken\.yaml"):
        load_flow(path)
    with pytest.raises(Exception, match="cannot read"):
        load_flow(tmp_path / "missing.yaml")


def test_the_examples_load() -> None:
    for path in sorted(
        Path(__file__).parents[2].joinpath("src", "pawflow", "demo", "flows").glob("*.yaml")
    ):
        assert load_flow(path).tasks

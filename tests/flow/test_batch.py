"""One-shot batch runs: the general tasks, user tasks, the in-process wait pair."""

from __future__ import annotations

import json
import logging

import pytest

from pawflow import Store
from pawflow.flow import (
    FlowFile,
    FlowScope,
    Property,
    TaskContext,
    TaskRegistry,
    default_registry,
    load_flow,
    parse_flow,
    run_batch,
)


def run(text: str, *flowfiles: FlowFile, **kwargs: object):  # type: ignore[no-untyped-def]
    return run_batch(parse_flow(text), list(flowfiles) or None, **kwargs)  # type: ignore[arg-type]


def test_generate_update_and_fan_out_keep_lineage() -> None:
    result = run(
        """
tasks:
  make:
    type: generateFlowFile
    properties: {count: 3, content: "item of ${who}", attributes: {kind: demo}}
    next: mark
  mark:
    type: updateAttribute
    properties:
      set: {label: "${kind}-${generate.index}", who: changed, was: "${who}"}
      remove: [drop.me]
    next: [left, right]
  left: {type: log}
  right: {type: log}
""",
        FlowFile.create("seed", {"who": "ada", "drop.me": "x"}),
    )
    assert len(result.at("left")) == 3
    assert len(result.at("right")) == 3
    first = result.at("left")[0].flowfile
    assert first.content == b"item of ada"
    assert first.attributes["label"] == "demo-0"
    assert first.attributes["was"] == "ada"  # every value reads the attributes as they came
    assert "drop.me" not in first.attributes
    clone = next(e.flowfile for e in result.at("right") if e.flowfile.lineage[-1] == first.id)
    assert clone.attributes == first.attributes
    assert len({e.flowfile.id for e in result.endings}) == 6


ROUTE = """
tasks:
  route:
    type: routeOnAttribute
    properties:
      strategy: {strategy}
      routes:
        approved: {{attribute: durable.wait.value, path: $.answer.ok, equals: true}}
        big: {{value: "${{durable.wait.value:jsonPath('$.answer.amount')}}", gt: 100}}
        team: {{attribute: team, in: "ops, infra"}}
        ticket: {{attribute: ref, matches: "T-[0-9]+"}}
        urgent: {{attribute: urgent, exists: true}}
        both:
          - {{attribute: team, not_in: [ops]}}
          - {{attribute: team, exists: true}}
          - {{attribute: ref, not_equals: T-1}}
"""


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"durable.wait.value": json.dumps({"answer": {"ok": True}})}, "approved"),
        ({"durable.wait.value": json.dumps({"answer": {"ok": False, "amount": "250.5"}})}, "big"),
        ({"durable.wait.value": json.dumps({"answer": {"amount": "99"}})}, "unmatched"),
        ({"team": "infra", "ref": "T-1"}, "team"),
        ({"ref": "T-42"}, "ticket"),
        ({"team": "dev", "ref": "T-42x"}, "both"),
        ({"urgent": ""}, "urgent"),
        ({"team": "ops", "ref": "T-1"}, "team"),
        ({"durable.wait.value": "not json", "team": "ops", "ref": "T-1"}, "team"),
    ],
)
def test_route_on_equality_membership_regex_existence_and_json_fields(
    attributes: dict[str, str], expected: str
) -> None:
    [ending] = run(ROUTE.format(strategy="first"), FlowFile.create(attributes=attributes)).endings
    assert ending.relationship == expected
    assert ending.flowfile.attributes["route.relationship"] == expected


def test_route_all_sends_a_copy_down_every_matching_route() -> None:
    result = run(
        ROUTE.format(strategy="all"), FlowFile.create(attributes={"team": "ops", "ref": "T-9"})
    )
    assert sorted(e.relationship for e in result.endings) == ["team", "ticket"]


def test_log_writes_through_logging(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "pawflow.flow")
    run(
        "name: logs\ntasks:\n  say: {type: log, properties: {message: 'hi ${who}', "
        "level: warning}}\n",
        FlowFile.create(attributes={"who": "bo"}),
    )
    assert ("pawflow.flow.logs", logging.WARNING, "[say] hi bo") in caplog.record_tuples


def test_user_tasks_from_the_decorator() -> None:
    registry = TaskRegistry(parent=default_registry)

    @registry.task(
        "shout", properties=[Property("suffix", default="!")], relationships=("success", "quiet")
    )
    def shout(flowfile: FlowFile, ctx: TaskContext) -> object:
        if not flowfile.content:
            return "quiet", flowfile
        return flowfile.evolve(content=flowfile.text().upper() + (ctx.prop("suffix") or ""))

    @registry.task("explode")
    def explode(flowfile: FlowFile, ctx: TaskContext) -> object:
        raise RuntimeError("boom")

    flow = parse_flow(
        "tasks:\n  s: {type: shout, properties: {suffix: '${mark}'}, next: e}\n"
        "  e: {type: explode}\n",
        registry=registry,
    )
    result = run_batch(flow, [FlowFile.create("hey", {"mark": "?"}), FlowFile.create()])
    [quiet] = result.at("s", "quiet")
    [failed] = result.at("e", "failure")
    assert failed.flowfile.content == b"HEY?"
    assert failed.flowfile.attributes["failure.reason"] == "RuntimeError: boom"
    assert failed.flowfile.attributes["failure.task"] == "e"
    assert quiet.flowfile.content == b""
    assert result.failures == [failed]
    with pytest.raises(Exception, match="already registered"):
        registry.task("log")(shout)


def test_user_tasks_from_an_imported_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "my_tasks.py").write_text(
        "from pawflow.flow import flow_task\n\n"
        "@flow_task('reverse_text_for_test')\n"
        "def reverse(flowfile, ctx):\n"
        "    return flowfile.evolve(content=flowfile.content[::-1])\n"
    )
    flow_file = tmp_path / "flow.yaml"
    flow_file.write_text("imports: [my_tasks.py]\ntasks:\n  r: {type: reverse_text_for_test}\n")

    [ending] = run_batch(load_flow(flow_file), [FlowFile.create("abc")]).endings
    assert ending.flowfile.content == b"cba"
    load_flow(flow_file)  # importing again registers the same task, not a conflict


WAIT_NOTIFY = """
tasks:
  split:
    type: generateFlowFile
    properties: {count: 2}
    next: route
  route:
    type: routeOnAttribute
    properties:
      routes:
        waiter: {attribute: generate.index, equals: "0"}
    next: {waiter: wait, unmatched: notify}
  wait:
    type: waitForSignal
    properties: {signal_id: "job-${job}", timeout: 1m}
  notify:
    type: notify
    properties: {signal_id: "job-${job}", value: done}
"""


def test_wait_for_signal_is_released_by_notify_in_process() -> None:
    result = run(WAIT_NOTIFY, FlowFile.create(attributes={"job": "1"}))
    [waited] = result.at("wait")
    assert waited.relationship == "success"
    assert waited.flowfile.attributes["wait.status"] == "signaled"
    assert waited.flowfile.attributes["wait.value"] == "done"


def test_a_wait_nothing_can_release_expires() -> None:
    text = WAIT_NOTIFY.replace("unmatched: notify", "unmatched: wait")
    result = run(text, FlowFile.create(attributes={"job": "2"}))
    assert sorted(e.relationship for e in result.at("wait")) == ["expired", "expired"]


def test_backpressure_moves_the_fullest_part_first() -> None:
    text = """
queue_capacity: 2
tasks:
  make: {type: generateFlowFile, properties: {count: 50}, next: a}
  a: {type: updateAttribute, properties: {set: {a: "1"}}, next: b}
  b: {type: log, properties: {level: debug}}
"""
    result = run(text)
    assert len(result.at("b")) == 50
    assert all(e.flowfile.attributes["a"] == "1" for e in result.endings)


def test_durable_wait_in_a_batch_fails_saying_it_needs_a_deployment() -> None:
    result = run("tasks:\n  w: {type: durableWait, properties: {signal_id: s}}\n")
    [ending] = result.failures
    assert "durableWait needs a deployed flow" in ending.flowfile.attributes["failure.reason"]
    result = run("tasks:\n  t: {type: durableTimer, properties: {duration: 1m}}\n")
    assert (
        "durableTimer needs a deployed flow"
        in result.failures[0].flowfile.attributes["failure.reason"]
    )


def test_interaction_tasks_need_a_scope_in_a_batch() -> None:
    result = run("tasks:\n  a: {type: requestConfirmation, properties: {message: 'ok?'}}\n")
    reason = result.failures[0].flowfile.attributes["failure.reason"]
    assert "needs a user and a conversation" in reason


def test_a_batch_with_a_scope_publishes_into_it(store: Store) -> None:
    conversation = store.create_conversation("alice").id
    result = run(
        "tasks:\n  a: {type: requestConfirmation, properties: {message: 'ok?', mode: choice,"
        " options: 'x, y'}}\n  n: {type: durableNotify, properties: {signal_id: s, value: v}}\n",
        FlowFile.create(),
        store=store,
        scope=FlowScope("alice", conversation),
    )
    [ending] = result.endings
    question = store.get_interaction(
        ending.flowfile.attributes["confirmation.request_id"], user="alice"
    )
    assert [o["value"] for o in question.options or []] == ["x", "y"]
    assert question.requester.model_dump()["instance"] == "batch"

"""Deployed flows on the store: ask, park, answer days later, resume — on every backend."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Literal

import psycopg
import pytest

from pawflow import FakeClock, InvalidInput, Store, Undeliverable, telemetry
from pawflow.flow import FlowDefinitionError, FlowFile, FlowInstance, FlowService, parse_flow
from pawflow.flow import deployments as deps
from pawflow.records import Interaction
from pawflow.store import Question
from pawflow.store.engine.database import sql
from pawflow.testing import eventually, temporary_store
from tests.conftest import require_postgres
from tests.flow.conftest import deploy, parked

CHAIN = """
name: approve-deploy
tasks:
  ask:
    type: requestConfirmation
    properties:
      message: "Deploy ${version} to production?"
      title: Deploy
      expires_in: 3d
    next: wait
  wait:
    type: durableWait
    properties:
      timeout: 2d
    next:
      success: route
      timeout: late
  route:
    type: routeOnAttribute
    properties:
      routes:
        approved: {attribute: durable.wait.value, path: $.answer, equals: true}
        rejected: {attribute: durable.wait.value, path: $.answer, equals: false}
        closed: {attribute: durable.wait.value, path: $.status, in: [cancelled, expired]}
  late:
    type: log
"""


def pending(store: Store, user: str = "alice") -> list[Interaction]:
    return store.list_interactions(user=user, status="pending")


def test_answered_a_day_later_the_branch_resumes(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    flow = deploy(service, CHAIN, conversation)
    flow.instance.inject(FlowFile.create("payload", {"version": "1.4"}))
    question = eventually(lambda: pending(store))[0]
    assert question.message == "Deploy 1.4 to production?"
    assert question.conversation_id == conversation
    assert question.requester.type == "flow"
    assert question.signal_id.startswith("confirmation:")
    parked(store, flow.instance.target)
    assert flow.endings() == []

    clock.advance("1d")
    store.respond_interaction(question.id, True, user="alice")
    [ending] = flow.wait_endings(1, "route", "approved")
    attrs = ending.flowfile.attributes
    assert attrs["durable.wait.status"] == "signaled"
    assert json.loads(attrs["durable.wait.value"]) == {"status": "answered", "answer": True}
    assert attrs["durable.wait.signal_id"] == question.signal_id
    assert attrs["confirmation.request_id"] == question.id
    assert attrs["route.relationship"] == "approved"
    assert ending.flowfile.content == b"payload"
    assert store.pending_continuations(flow.instance.target) == 0


ASK_UNTIL_YES = """
name: ask-until-yes
tasks:
  ask:
    type: requestConfirmation
    properties: {message: "Ready?"}
    next: wait
  wait:
    type: durableWait
    next: route
  route:
    type: routeOnAttribute
    properties:
      routes:
        ready: {attribute: durable.wait.value, path: $.answer, equals: true}
    next: {unmatched: ask}
"""


def test_a_flow_that_loops_back_to_a_question_asks_it_again(
    store: Store, service: FlowService, conversation: str
) -> None:
    flow = deploy(service, ASK_UNTIL_YES, conversation)
    flow.instance.inject(FlowFile.create())
    first = eventually(lambda: pending(store))[0]
    store.respond_interaction(first.id, False, user="alice")
    # The same FlowFile at the same task, a later visit: a new question, not the first one.
    second = eventually(lambda: pending(store))[0]
    assert second.id != first.id
    store.respond_interaction(second.id, True, user="alice")
    flow.wait_endings(1, "route", "ready")
    assert len(store.list_interactions(user="alice")) == 2


@pytest.mark.parametrize(("how", "status"), [("cancel", "cancelled"), ("expire", "expired")])
def test_cancel_and_expiry_release_the_wait_with_their_status(
    store: Store,
    service: FlowService,
    conversation: str,
    clock: FakeClock,
    how: str,
    status: str,
) -> None:
    flow = deploy(service, CHAIN.replace("timeout: 2d", "timeout: 0"), conversation)
    flow.instance.inject(FlowFile.create())
    question = eventually(lambda: pending(store))[0]
    parked(store, flow.instance.target)
    if how == "cancel":
        store.cancel_interaction(question.id, user="alice")
    else:
        clock.advance("3d")
        store.sweep()
    [ending] = flow.wait_endings(1, "route", "closed")
    value = json.loads(ending.flowfile.attributes["durable.wait.value"])
    assert value == {"status": status, "answer": None}


def test_timeout_routes_timeout(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    flow = deploy(service, CHAIN, conversation)
    flow.instance.inject(FlowFile.create())
    eventually(lambda: pending(store))
    parked(store, flow.instance.target)
    clock.advance("47h")
    store.sweep()
    assert flow.endings() == []
    clock.advance("1h")
    store.sweep()
    [ending] = flow.wait_endings(1, "late")
    assert ending.flowfile.attributes["durable.wait.status"] == "timeout"
    assert ending.flowfile.attributes["durable.wait.value"] == "null"


def test_timeout_goes_on_by_success_when_not_connected(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    text = CHAIN.replace("      timeout: late\n", "")
    flow = deploy(service, text, conversation)
    flow.instance.inject(FlowFile.create())
    parked(store, flow.instance.target)
    clock.advance("2d")
    store.sweep()
    [ending] = flow.wait_endings(1, "route", "unmatched")
    assert ending.flowfile.attributes["durable.wait.status"] == "timeout"


NOTIFY_THEN_WAIT = """
name: gate
tasks:
  wait:
    type: durableWait
    properties: {signal_id: "release-${batch}"}
"""


def test_notify_before_wait_passes_straight_through(
    store: Store, service: FlowService, conversation: str
) -> None:
    store.notify_signal("release-7", {"go": True})
    flow = deploy(service, NOTIFY_THEN_WAIT, conversation)
    flow.instance.inject(FlowFile.create(attributes={"batch": "7"}))
    [ending] = flow.wait_endings(1, "wait", "success")
    assert json.loads(ending.flowfile.attributes["durable.wait.value"]) == {"go": True}


DURABLE_NOTIFY = """
name: notifier
tasks:
  fire:
    type: durableNotify
    properties:
      signal_id: "release-${batch}"
      value: '{"by": "${who}"}'
      value_type: json
"""


def test_durable_notify_releases_a_wait_of_another_flow(
    store: Store, service: FlowService, conversation: str
) -> None:
    waiting = deploy(service, NOTIFY_THEN_WAIT, conversation)
    notifier = deploy(service, DURABLE_NOTIFY, conversation)
    waiting.instance.inject(FlowFile.create(attributes={"batch": "9"}))
    parked(store, waiting.instance.target)
    notifier.instance.inject(FlowFile.create(attributes={"batch": "9", "who": "ops"}))
    [fired] = notifier.wait_endings(1, "fire", "success")
    assert fired.flowfile.attributes["durable.notify.resolved"] == "1"
    [ending] = waiting.wait_endings(1, "wait", "success")
    assert json.loads(ending.flowfile.attributes["durable.wait.value"]) == {"by": "ops"}


def test_durable_notify_refuses_interaction_signals(
    store: Store, service: FlowService, conversation: str
) -> None:
    flow = deploy(
        service, DURABLE_NOTIFY.replace("release-${batch}", "confirmation:${batch}"), conversation
    )
    question = store.ask(Question("alice", conversation, "confirm", "Really?")).interaction
    flow.instance.inject(FlowFile.create(attributes={"batch": question.id, "who": "x"}))
    [ending] = flow.wait_endings(1, "fire", "failure")
    assert "fires only when its request" in ending.flowfile.attributes["failure.reason"]
    assert store.get_interaction(question.id, user="alice").status == "pending"


def test_wait_refuses_the_signal_of_another_users_request(
    store: Store, service: FlowService, conversation: str
) -> None:
    theirs = store.create_conversation("mallory", "theirs")
    question = store.ask(Question("mallory", theirs.id, "confirm", "Theirs?")).interaction
    flow = deploy(service, "name: spy\ntasks:\n  wait: {type: durableWait}\n", conversation)
    flow.instance.inject(FlowFile.create(attributes={"confirmation.signal_id": question.signal_id}))
    [ending] = flow.wait_endings(1, "wait", "failure")
    assert "not the signal of a request of alice" in ending.flowfile.attributes["failure.reason"]


def test_an_attribute_cannot_redirect_the_request(
    store: Store, service: FlowService, conversation: str
) -> None:
    other = store.create_conversation("mallory", "elsewhere")
    flow = deploy(service, CHAIN, conversation)
    sneaky = {
        "conversation_id": other.id,
        "owner": "mallory",
        "user": "mallory",
        "confirmation.conversation_id": other.id,
        "version": "9",
    }
    flow.instance.inject(FlowFile.create(attributes=sneaky))
    question = eventually(lambda: pending(store))[0]
    assert question.owner == "alice"
    assert question.conversation_id == conversation
    assert pending(store, "mallory") == []


EXPLICIT = """
name: elsewhere
tasks:
  ask:
    type: requestConfirmation
    properties:
      message: Elsewhere?
      conversation_id: {target}
"""


@pytest.mark.parametrize(("access", "allowed"), [("write", True), ("read", False), (None, False)])
def test_explicit_conversation_needs_write_access(
    store: Store,
    service: FlowService,
    conversation: str,
    access: Literal["read", "write"] | None,
    allowed: bool,
) -> None:
    shared = store.create_conversation("bob", "Bob's")
    if access is not None:
        store.share_conversation(shared.id, user="bob", with_user="alice", access=access)
    flow = deploy(service, EXPLICIT.format(target=shared.id), conversation)
    flow.instance.inject(FlowFile.create())
    [ending] = flow.wait_endings(1, "ask")
    if allowed:
        assert ending.relationship == "success"
        question = store.get_interaction(
            ending.flowfile.attributes["confirmation.request_id"], user="alice"
        )
        assert question.conversation_id == shared.id
        assert question.owner == "alice"
    else:
        assert ending.relationship == "failure"
        assert "needs write access" in ending.flowfile.attributes["failure.reason"]
        assert pending(store) == []


def test_expressions_cannot_name_the_conversation(store: Store) -> None:
    with pytest.raises(FlowDefinitionError) as caught:
        parse_flow(EXPLICIT.format(target="${conversation}"))
    assert "tasks.ask.properties.conversation_id" in str(caught.value)


TIMER = """
name: reminder
tasks:
  sleep:
    type: durableTimer
    properties: {duration: 2h, cancel_signal_id: "cancel-${job}"}
    next:
      elapsed: remind
  remind:
    type: log
"""


def test_timer_elapses_once_at_its_deadline(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    flow = deploy(service, TIMER, conversation)
    flow.instance.inject(FlowFile.create(attributes={"job": "1"}))
    parked(store, flow.instance.target)
    clock.advance("119m")
    store.sweep()
    assert flow.endings() == []
    clock.advance("1m")
    store.sweep()
    store.sweep()
    [ending] = flow.wait_endings(1, "remind")
    assert ending.flowfile.attributes["durable.timer.status"] == "elapsed"
    assert ending.flowfile.attributes["route.relationship"] == "elapsed"
    assert ending.flowfile.attributes["durable.timer.deadline"] == "2026-01-01T02:00:00.000Z"
    clock.advance("1d")
    store.sweep()
    assert len(flow.endings()) == 1


def test_timer_cancelled_by_its_signal_leaves_by_cancelled(
    store: Store, service: FlowService, conversation: str
) -> None:
    flow = deploy(service, TIMER, conversation)
    flow.instance.inject(FlowFile.create(attributes={"job": "2"}))
    parked(store, flow.instance.target)
    store.notify_signal("cancel-2")
    [ending] = flow.wait_endings(1, "sleep", "cancelled")
    assert ending.flowfile.attributes["durable.timer.status"] == "cancelled"


def test_absolute_until_and_a_bad_one(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    text = TIMER.replace('{duration: 2h, cancel_signal_id: "cancel-${job}"}', "{until: '${at}'}")
    flow = deploy(service, text, conversation)
    flow.instance.inject(FlowFile.create(attributes={"at": "2026-01-01T05:00:00+02:00"}))
    flow.instance.inject(FlowFile.create(attributes={"at": "2026-01-01T05:00:00"}))
    [bad] = flow.wait_endings(1, "sleep", "failure")
    assert "timezone" in bad.flowfile.attributes["failure.reason"]
    parked(store, flow.instance.target)
    clock.advance("3h")
    store.sweep()
    [ending] = flow.wait_endings(1, "remind")
    assert ending.flowfile.attributes["durable.timer.deadline"] == "2026-01-01T03:00:00.000Z"


def test_stopped_instance_gets_the_flowfile_once_after_it_starts(
    store: Store, service: FlowService, conversation: str
) -> None:
    flow = deploy(service, CHAIN, conversation)
    flow.instance.inject(FlowFile.create())
    question = eventually(lambda: pending(store))[0]
    parked(store, flow.instance.target)
    deps.change_status(store, flow.id, "stopped")
    service.reconcile()
    assert service.instance(flow.id) is None

    store.respond_interaction(question.id, False, user="alice")
    store.sweep()
    assert store.pending_continuations(f"flow:{flow.id}") == 1  # resolved, waiting for it

    deps.change_status(store, flow.id, "running")
    service.reconcile()
    [ending] = flow.wait_endings(1, "route", "rejected")
    store.sweep()
    service.reconcile()
    assert flow.instance.wait_idle()
    assert len(flow.endings()) == 1
    assert store.pending_continuations(f"flow:{flow.id}") == 0
    assert ending.flowfile.attributes["durable.wait.status"] == "signaled"


FAN_IN = """
name: many
queue_capacity: 200
tasks:
  wait:
    type: durableWait
    properties: {signal_id: go}
"""


def test_a_thousand_parked_flowfiles_all_arrive_once(sqlite_store: Store, clock: FakeClock) -> None:
    store = sqlite_store
    conversation = store.create_conversation("alice").id
    with FlowService(store, reconcile_interval=None) as service:
        flow = deploy(service, FAN_IN, conversation)
        sent = [FlowFile.create(attributes={"n": str(i)}) for i in range(1000)]
        for flowfile in sent:
            eventually(partial(_try_inject, flow.instance, flowfile))
        parked(store, flow.instance.target, 1000)
        assert flow.instance.wait_idle()
        assert store.notify_signal("go", "now") == 1000

        def all_arrived() -> bool:
            # Backpressure defers some deliveries; time moves on and the sweeper retries.
            clock.advance("5m")
            store.sweep()
            return len(flow.endings()) >= 1000

        eventually(all_arrived, timeout=60)
        ids = [e.flowfile.id for e in flow.endings()]
        assert sorted(ids) == sorted(f.id for f in sent)
        assert store.pending_continuations(flow.instance.target) == 0


def _try_inject(instance: FlowInstance, flowfile: FlowFile) -> bool:
    try:
        instance.inject(flowfile)
    except Undeliverable:
        return False
    return True


INPUT = """
name: survey
tasks:
  ask:
    type: requestUserInput
    properties:
      kind: {kind}
      message: "Your answer, ${{name}}?"
      {extra}
    next: wait
  wait:
    type: durableWait
    properties: {{signal_id_attribute: interaction.signal_id}}
"""


@pytest.mark.parametrize(
    ("kind", "extra", "answer", "expected"),
    [
        ("integer", "response_schema: {minimum: 1, maximum: 10}", "7", 7),
        ("choice", "options: red, green", "green", "green"),
        ("multi", "options: [a, b, c]", ["c", "a"], ["a", "c"]),
        ("date", "", "2026-03-01", "2026-03-01"),
        (
            "form",
            "response_schema: {type: object, properties: {amount: {type: number}}, "
            "required: [amount]}",
            {"amount": "12.50"},
            {"amount": "12.5"},
        ),
    ],
)
def test_request_user_input_every_kind_resumes_with_the_typed_answer(
    store: Store,
    service: FlowService,
    conversation: str,
    kind: str,
    extra: str,
    answer: object,
    expected: object,
) -> None:
    flow = deploy(service, INPUT.format(kind=kind, extra=extra), conversation)
    flow.instance.inject(FlowFile.create(attributes={"name": "Alice"}))
    question = eventually(lambda: pending(store))[0]
    assert question.kind == kind
    assert question.signal_id.startswith("interaction:")
    store.respond_interaction(question.id, answer, user="alice")
    [ending] = flow.wait_endings(1, "wait")
    value = json.loads(ending.flowfile.attributes["durable.wait.value"])
    assert value["answer"] == expected
    assert ending.flowfile.attributes["interaction.request_id"] == question.id


NOTIFY_USER = """
name: tell
tasks:
  tell:
    type: notifyUser
    properties: {message: "Build ${n} is done", title: Builds, urgency: high}
"""


def test_notify_user_is_sent_to_a_live_client_and_queued_otherwise(
    store: Store, service: FlowService, conversation: str
) -> None:
    flow = deploy(service, NOTIFY_USER, conversation)
    flow.instance.inject(FlowFile.create(attributes={"n": "1"}))
    [queued] = flow.wait_endings(1, "tell", "queued")
    with store.unit() as u:
        u.messages.mark_live("tab-1", "alice", timedelta(minutes=1))
    flow.instance.inject(FlowFile.create(attributes={"n": "2"}))
    [sent] = flow.wait_endings(1, "tell", "sent")
    assert sent.flowfile.attributes["notify.status"] == "sent"
    with store.unit(write=False) as u:
        history = u.messages.history(conversation, user="alice")
    assert [m.content for m in history] == ["Build 1 is done", "Build 2 is done"]
    assert queued.flowfile.attributes["notify.status"] == "queued"


IDLE = """
name: idler
idle_stop: 10m
tasks:
  sleep:
    type: durableTimer
    properties: {duration: 1h}
"""


def test_idle_stop_waits_for_undelivered_timers(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    flow = deploy(service, IDLE, conversation)
    flow.instance.inject(FlowFile.create())
    parked(store, flow.instance.target)
    assert flow.instance.wait_idle()
    clock.advance("30m")
    service.reconcile()
    assert service.instance(flow.id) is not None  # a parked timer keeps it running
    clock.advance("31m")
    store.sweep()
    flow.wait_endings(1, "sleep", "elapsed")
    assert flow.instance.wait_idle()
    clock.advance("11m")
    service.reconcile()
    assert service.instance(flow.id) is None
    stopped = deps.get_deployment(store, flow.id)
    assert (stopped.status, stopped.status_reason) == ("stopped", "idle")


QUIET_IDLER = """
name: quiet-idler
idle_stop: 10m
tasks:
  note:
    type: log
"""


def test_an_injection_wakes_a_flow_stopped_for_idleness(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    flow = deploy(service, QUIET_IDLER, conversation)
    assert flow.instance.wait_idle()
    clock.advance("11m")
    service.reconcile()
    assert service.instance(flow.id) is None
    assert deps.get_deployment(store, flow.id).status_reason == "idle"

    # Injected as it stopped (or after): the FlowFile is not left waiting for a start.
    deps.inject(store, flow.id, FlowFile.create())
    assert deps.get_deployment(store, flow.id).status == "running"
    service.reconcile()
    flow.wait_endings(1, "note", "success")

    # Stopped by hand, it keeps what is injected until someone starts it.
    deps.change_status(store, flow.id, "stopped")
    service.reconcile()
    deps.inject(store, flow.id, FlowFile.create())
    assert deps.get_deployment(store, flow.id).status == "stopped"
    assert store.pending_continuations(f"flow:{flow.id}") == 1


def lock_waits(store: Store) -> int:
    """How many sessions of the store's PostgreSQL database wait for a lock."""
    with store.transaction(write=False) as tx:
        row = sql(tx).one(
            "SELECT count(*) AS n FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
    return 0 if row is None else int(row["n"])


@pytest.mark.postgres
def test_an_injection_at_the_moment_of_an_idle_stop_is_delivered(tmp_path: Path) -> None:
    """The idle stop is held just before it writes the deployment's status (another
    session has the row locked); a FlowFile is injected then. It runs."""
    require_postgres()
    clock = FakeClock()
    with (
        temporary_store("postgres", tmp_path, clock=clock) as store,
        FlowService(store, reconcile_interval=None) as service,
    ):
        conversation = store.create_conversation("alice", "Flows").id
        flow = deploy(service, QUIET_IDLER, conversation)
        assert flow.instance.wait_idle()
        clock.advance("11m")
        with psycopg.connect(store.db.url) as locker:  # type: ignore[attr-defined]
            locker.execute("SELECT 1 FROM flow_deployments WHERE id = %s FOR UPDATE", (flow.id,))
            stopping = threading.Thread(target=service.reconcile)
            stopping.start()
            eventually(lambda: lock_waits(store) == 1)  # the stop waits for the row
            injecting = threading.Thread(
                target=deps.inject, args=(store, flow.id, FlowFile.create())
            )
            injecting.start()
            eventually(lambda: not injecting.is_alive() or lock_waits(store) == 2)
            locker.rollback()
        stopping.join(timeout=30)
        injecting.join(timeout=30)
        service.reconcile()
        flow.wait_endings(1, "note", "success")
        assert store.pending_continuations(f"flow:{flow.id}") == 0


def test_injection_backpressure_is_retried(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    text = """
name: narrow
queue_capacity: 1
tasks:
  wait:
    type: durableWait
    properties: {signal_id: open}
"""
    flow = deploy(service, text, conversation)
    for _ in range(5):
        deps.inject(store, flow.id, FlowFile.create(), "wait")
    parked(store, flow.instance.target, 5)

    def everything_done() -> bool:
        clock.advance("5m")
        store.notify_signal("open")
        store.sweep()
        return len(flow.endings()) == 5

    eventually(everything_done, timeout=30)
    assert store.pending_continuations(flow.instance.target) == 0


def test_redeploying_keeps_the_id_and_restarts_with_the_new_definition(
    store: Store, service: FlowService, conversation: str
) -> None:
    first = deploy(service, NOTIFY_THEN_WAIT, conversation)
    again = deploy(service, NOTIFY_THEN_WAIT, conversation)
    assert (again.id, again.deployment.version) == (first.id, 1)
    changed = deploy(
        service, NOTIFY_THEN_WAIT + "    next: done\n  done: {type: log}\n", conversation
    )
    assert (changed.id, changed.deployment.version) == (first.id, 2)
    assert "done" in changed.instance.flow.tasks


def test_deploy_needs_write_access(store: Store, conversation: str) -> None:
    store.share_conversation(conversation, user="alice", with_user="reader", access="read")
    with pytest.raises(InvalidInput, match="needs write access"):
        deps.deploy(store, NOTIFY_THEN_WAIT, conversation_id=conversation, user="reader")


NARROW_FAN_IN = """
name: narrow-fan-in
queue_capacity: 3
tasks:
  wait:
    type: durableWait
    properties: {signal_id: go}
    next: done
  done: {type: log}
"""


def test_a_full_queue_takes_held_flowfiles_as_it_drains_not_after_a_timer(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    """60 FlowFiles resumed by one answer into queues of 3: the clock never moves, so only
    a drained queue asking for what it refused can bring them all in."""
    flow = deploy(service, NARROW_FAN_IN, conversation)
    sent = [FlowFile.create(attributes={"n": str(i)}) for i in range(60)]
    for flowfile in sent:
        eventually(partial(_try_inject, flow.instance, flowfile))
    parked(store, flow.instance.target, 60)
    assert flow.instance.wait_idle()
    deferred = telemetry.DELIVERIES.value(target="flow", result="deferred")
    assert store.notify_signal("go", "now") == 60

    endings = flow.wait_endings(60, "done", "success")
    assert sorted(e.flowfile.id for e in endings) == sorted(f.id for f in sent)
    assert store.pending_continuations(flow.instance.target) == 0
    # Held back is not failed: no attempt was counted against any of them.
    assert telemetry.DELIVERIES.value(target="flow", result="deferred") == deferred

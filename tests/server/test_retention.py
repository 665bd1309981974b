"""The retention sweep: finished A2A tasks, settled pushes, webhook deliveries and the
notifications of requests settled long ago are forgotten; nothing queued or still read is
(both backends, on the store's clock)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from pawflow.clock import FakeClock
from pawflow.server.retention import settled_step
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer
from pawflow.store import PushConfig, Question, Store

RETENTION = timedelta(days=30)
BATCH = 2
"""Small, so that each kind takes several batches in one pass."""


def _task(store: Store, task_id: str, state: str) -> None:
    """A task of ada's in ``state`` with one push config, and its update queued to it."""
    config = PushConfig(task_id, "c1", "ada", "https://a.test/", None, None, None, "{}")
    with store.unit() as u:
        assert u.a2a_tasks.save(
            task_id,
            user="ada",
            agent="scribe",
            context_id="ctx",
            state=state,
            task="{}",
        )
        assert u.a2a_tasks.set_push(config)
        assert u.a2a_push.enqueue(task_id, state, "{}") == 1


def _send_everything(store: Store, *, copies: bool = True) -> None:
    """What the dispatcher does when every send succeeds: claim what is due until nothing
    is, and record each as sent (a notification's copy as updated, unless not ``copies``:
    as if its channel could not be reached)."""
    while True:
        with store.unit() as u:
            pushes = u.a2a_push.claim_due(100)
            for push in pushes:
                assert u.a2a_push.mark_sent(push, 204)
            hooks = u.webhooks.claim_due(100)
            for hook in hooks:
                assert u.webhooks.mark_sent(hook, 204)
            rows = u.outbox.claim_due(100)
            for row in rows:
                assert u.outbox.mark_sent(row, None)
            updated = u.outbox.claim_settle(100) if copies else []
            for copy in updated:
                assert u.outbox.mark_settled(copy)
        if not (pushes or hooks or rows or updated):
            return


def test_finished_tasks_and_settled_pushes_are_forgotten_after_the_retention(
    store: Store, clock: FakeClock
) -> None:
    store.ensure_user("ada")
    _task(store, "done", "TASK_STATE_WORKING")
    _send_everything(store)
    _task(store, "done", "TASK_STATE_COMPLETED")
    _task(store, "working", "TASK_STATE_WORKING")
    _task(store, "rejected", "TASK_STATE_REJECTED")
    _task(store, "unsent", "TASK_STATE_FAILED")
    _send_everything(store)
    clock.advance("20d")
    _task(store, "recent", "TASK_STATE_CANCELED")
    _send_everything(store)
    with store.unit() as u:  # a late push of a finished task, not sent yet
        assert u.a2a_push.enqueue("unsent", "TASK_STATE_FAILED", "{}") == 1
    clock.advance("11d")
    store.add_sweep_step(settled_step(RETENTION, batch=BATCH))

    report = store.sweep()

    assert report["a2a_tasks_pruned"] == 3  # done, rejected, unsent
    assert report["a2a_pushes_pruned"] == 5  # done's two, working's, rejected's, unsent's
    with store.unit(write=False) as u:
        left = {
            task_id: (
                u.a2a_tasks.get(task_id, user="ada", agent="scribe"),
                [c.id for c in u.a2a_tasks.push_configs(task_id)],
                [p.status for p in u.a2a_push.log(task_id)],
            )
            for task_id in ("done", "working", "rejected", "unsent", "recent")
        }
    assert {task_id: (task is not None, *rest) for task_id, (task, *rest) in left.items()} == {
        "done": (False, [], []),
        "working": (True, ["c1"], []),  # a live task; its old pushes go by their age
        "rejected": (False, [], []),
        "unsent": (False, [], ["queued"]),  # still due (it fails: its config is gone)
        "recent": (True, ["c1"], ["sent"]),
    }
    again = store.sweep()
    assert (again["a2a_tasks_pruned"], again["a2a_pushes_pruned"]) == (0, 0)


def test_notifications_go_once_their_request_was_settled_longer_ago_than_the_retention(
    store: Store, clock: FakeClock
) -> None:
    store.ensure_user("ada")
    with store.unit() as u:
        u.outbox.set_reach("ada", email="ada@example.org")
        hook = u.webhooks.create(
            "ada", "https://hooks.test/", ("interaction.created", "interaction.cancelled")
        )
    conversation = store.create_conversation("ada", "retention")

    def ask(text: str) -> str:
        return store.ask(Question("ada", conversation.id, "confirm", text)).interaction.id

    old, pending, skipped, updating = ask("old"), ask("pending"), ask("skipped"), ask("updating")
    store.cancel_interaction(skipped, user="ada")  # before its mail went: skipped
    _send_everything(store)
    store.cancel_interaction(old, user="ada")
    _send_everything(store)  # old's mail is updated to say it was cancelled
    with store.unit() as u:
        [mail] = [row for row in u.outbox.deliveries(old) if row.channel == "email"]
        link = u.answer_links.create(old, "ada", expires_at=None, outbox_id=mail.id)
    store.cancel_interaction(updating, user="ada")  # its mail's copy is never updated
    clock.advance("20d")
    recent = ask("recent")
    _send_everything(store, copies=False)
    store.cancel_interaction(recent, user="ada")
    _send_everything(store, copies=False)
    clock.advance("11d")
    store.add_sweep_step(settled_step(RETENTION, batch=BATCH))

    report = store.sweep()

    # old's and skipped's mail and webhook rows; updating's webhook row (its mail's copy is
    # still to be updated)
    assert report["notifications_pruned"] == 5
    # the created and cancelled deliveries of old, skipped and updating; pending's created
    assert report["webhook_deliveries_pruned"] == 7
    with store.unit(write=False) as u:
        kept = {
            name: sorted((row.channel, row.status) for row in u.outbox.deliveries(request))
            for name, request in [
                ("old", old),
                ("pending", pending),
                ("skipped", skipped),
                ("updating", updating),
                ("recent", recent),
            ]
        }
        log = [(d.request_id, d.event, d.status) for d in u.webhooks.log("ada", hook.id)]
        still = u.answer_links.find(link)
    assert kept == {
        "old": [],
        "pending": [("email", "sent"), ("webhook", "sent")],  # its request is still pending
        "skipped": [],
        "updating": [("email", "sent")],
        "recent": [("email", "sent"), ("webhook", "sent")],
    }
    assert sorted(log) == [
        (recent, "interaction.cancelled", "sent"),
        (recent, "interaction.created", "sent"),
    ]
    assert still is not None and still.request_id == old  # a link outlives its mail
    with store.unit(write=False) as u:
        details = u.accountability.details(old, user="ada")
    assert "delivered" in [entry["action"] for entry in details["audit"]]
    assert store.sweep()["notifications_pruned"] == 0


def test_the_server_forgets_after_its_setting(make_server: Callable[..., LiveServer]) -> None:
    assert ServerSettings().settled_retention == RETENTION
    assert ServerSettings.from_env(
        {"PAWFLOW_SETTLED_RETENTION": "2w"}
    ).settled_retention == timedelta(days=14)
    clock = FakeClock()
    server = make_server(clock=clock, settled_retention="1d")
    server.store.ensure_user("ada")
    _task(server.store, "done", "TASK_STATE_COMPLETED")
    clock.advance("23h")
    assert server.store.sweep()["a2a_tasks_pruned"] == 0
    clock.advance("2h")
    assert server.store.sweep()["a2a_tasks_pruned"] == 1


def _steps_of_a_pass(store: Store) -> int:
    """The virtual machine steps SQLite takes for one retention pass: what it reads, counted
    by SQLite itself (not timed)."""
    db: Any = store.db
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0  # go on

    with store.unit(write=False) as u:  # the connection this thread's units run on
        conn = db._connection()
        conn.set_progress_handler(count, 1)
        del u
    try:
        settled_step(RETENTION, batch=BATCH)(store)
    finally:
        conn.set_progress_handler(None, 1)
    return steps[0]


def test_a_pass_never_reads_the_old_notifications_of_requests_still_pending(
    sqlite_store: Store, clock: FakeClock
) -> None:
    """Old mail of requests still pending costs a pass nothing: it takes as many steps with
    33 such mails as with 3."""
    store = sqlite_store
    store.ensure_user("ada")
    with store.unit() as u:
        u.outbox.set_reach("ada", email="ada@example.org")
    conversation = store.create_conversation("ada", "retention")

    def ask(count: int) -> list[str]:
        asked = [
            store.ask(Question("ada", conversation.id, "confirm", f"#{n}?")).interaction.id
            for n in range(count)
        ]
        _send_everything(store)
        return asked

    settled, pending = ask(1), ask(3)
    store.cancel_interaction(settled[0], user="ada")
    _send_everything(store)
    clock.advance("31d")
    assert settled_step(RETENTION, batch=BATCH)(store)["notifications_pruned"] == 1
    few = _steps_of_a_pass(store)
    pending += ask(30)
    clock.advance("31d")

    assert _steps_of_a_pass(store) == few  # the pending requests' mail is never read
    with store.unit(write=False) as u:
        assert u.outbox.deliveries(settled[0]) == []
        assert all(u.outbox.deliveries(request) for request in pending)  # kept, unread

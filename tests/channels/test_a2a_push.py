"""A2A push notifications through the outbox's dispatcher: retried with backoff, checked for
SSRF before every attempt, stopped when their config is deleted (both backends)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pawflow import serve
from pawflow.clock import FakeClock
from pawflow.store import Store
from pawflow.store.reach import a2a_push, a2a_tasks
from pawflow.store.reach.a2a_tasks import PushConfig
from pawflow.testing import temporary_store
from tests.channels.receiver import receiver
from tests.channels.test_email import QUIET
from tests.conftest import require_postgres

TASK = "task-1"
UPDATE = '{"statusUpdate":{"taskId":"task-1","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}'


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, FakeClock]]:
    if request.param == "postgres":
        require_postgres()
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0))
    with temporary_store(request.param, tmp_path, clock=clock) as opened:
        opened.ensure_user("ada")
        yield opened, clock


def _config(url: str, config_id: str = "c1") -> PushConfig:
    return PushConfig(
        task_id=TASK,
        id=config_id,
        user="ada",
        url=url,
        token="tok",
        auth_scheme="Bearer",
        auth_credentials="secret-9",
        config="{}",
    )


def _push(store: Store, *configs: PushConfig) -> list[a2a_push.PushDelivery]:
    with store.transaction() as tx:
        for config in configs:
            assert a2a_tasks.set_push(tx, config, store.now())
        a2a_push.enqueue(tx, TASK, "TASK_STATE_INPUT_REQUIRED", UPDATE, store.now())
        return a2a_push.log(tx, TASK)


def _log(store: Store) -> dict[str, a2a_push.PushDelivery]:
    with store.transaction(write=False) as tx:
        return {d.config_id: d for d in a2a_push.log(tx, TASK)}


def test_a_push_is_retried_with_backoff_then_sent_with_its_token(
    store: tuple[Store, FakeClock],
) -> None:
    opened, clock = store
    settings = QUIET.replace(egress_allowed_hosts="127.0.0.1")
    with receiver(statuses=[500]) as inbox:
        [queued] = _push(opened, _config(f"{inbox.url}/push"))
        dispatcher = serve.dispatcher(opened, settings)
        assert dispatcher.step() == 1
        failed = _log(opened)["c1"]
        assert failed.status == "queued" and failed.response_status == 500
        assert failed.last_error == "HTTP 500" and failed.attempts == 1
        assert dispatcher.step() == 0  # not before its backoff
        clock.advance("5s")
        assert dispatcher.step() == 1
        sent = _log(opened)["c1"]
        assert sent.status == "sent" and sent.response_status == 204 and sent.attempts == 2
        first, second = inbox.received()
        for got in (first, second):
            assert got.body.decode() == UPDATE
            assert got.headers["x-a2a-notification-token"] == "tok"
            assert got.headers["authorization"] == "Bearer secret-9"
            assert got.headers["webhook-id"] == queued.id
            assert "webhook-signature" not in got.headers


def test_an_inward_url_fails_for_good_and_a_deleted_config_stops_its_pushes(
    store: tuple[Store, FakeClock],
) -> None:
    opened, _ = store
    with receiver() as inbox:
        # The server allows nothing inside: the loopback receiver is refused before sending.
        _push(opened, _config(f"{inbox.url}/push", "inside"), _config("https://x.test/", "gone"))
        with opened.transaction() as tx:
            assert a2a_tasks.delete_push(tx, TASK, user="bob", config_id="gone") == 0
            assert a2a_tasks.delete_push(tx, TASK, user="ada", config_id="gone") == 1
        assert serve.dispatcher(opened, QUIET).step() == 2
        log = _log(opened)
        assert log["inside"].status == "failed"
        assert "PAWFLOW_EGRESS_ALLOWED_HOSTS" in (log["inside"].last_error or "")
        assert log["gone"].status == "failed"
        assert log["gone"].last_error == "the push config was deleted"
        assert inbox.received() == []


def test_a_config_id_is_its_user_s(store: tuple[Store, FakeClock]) -> None:
    opened, _ = store
    opened.ensure_user("bob")
    with opened.transaction() as tx:
        assert a2a_tasks.set_push(tx, _config("https://a.test/"), opened.now())
        theirs = PushConfig(**{**_config("https://b.test/").__dict__, "user": "bob"})
        assert not a2a_tasks.set_push(tx, theirs, opened.now())
        assert [c.url for c in a2a_tasks.push_configs(tx, TASK, user="ada")] == ["https://a.test/"]
        assert a2a_tasks.push_configs(tx, TASK, user="bob") == []

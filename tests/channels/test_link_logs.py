"""An answer link's secret, and a webhook URL's path, never reach a log line of a real
``pawflow serve`` (one process for both, each test with a user of its own)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from pawflow import open_store
from pawflow.store import Question
from pawflow.store.reach import answer_links, webhooks
from pawflow.testing import eventually
from tests.channels.receiver import receiver
from tests.served import Served

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("link-logs")
    process = Served(
        f"sqlite:///{directory / 'pawflow.db'}",
        directory,
        env={
            "PAWFLOW_LOG_LEVEL": "info",
            "PAWFLOW_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
            "PAWFLOW_OUTBOX_INTERVAL": "0.2",
        },
    )
    process.start()
    yield process
    process.kill()


def test_the_access_log_masks_an_answer_link(served: Served) -> None:
    seen = len(served.output)
    with open_store(served.db) as store:
        store.ensure_user("ada")
        conversation = store.create_conversation("ada", "logs")
        asked = store.ask(Question("ada", conversation.id, "confirm", "Logged?")).interaction
        with store.transaction() as tx:
            secret = answer_links.create(tx, asked.id, "ada", now=store.now(), expires_at=None)
    for path in (f"/a/{secret}", f"/a/{secret}/confirm?pick=0", f"/a/{secret}x"):
        httpx.get(served.url + path)
    httpx.post(f"{served.url}/a/{secret}", data={"pick": "0"})
    eventually(lambda: sum("/a/" in line for line in served.output[seen:]) >= 4, timeout=20)
    logged = "".join(served.output)
    assert "/a/***" in logged
    assert secret[4:20] not in logged


def test_a_webhook_is_logged_by_its_host_alone(served: Served) -> None:
    secret_path = "/services/T0PAWFLOW/B0PAWFLOW/s3cretWebhookPathPart"
    with receiver() as inbox:
        with open_store(served.db) as store:
            store.ensure_user("bea")
            conversation = store.create_conversation("bea", "logs")
            with store.transaction() as tx:
                webhooks.create(
                    tx, "bea", inbox.url + secret_path, ("interaction.created",), store.now()
                )
            store.ask(Question("bea", conversation.id, "confirm", "Logged?"))
        eventually(inbox.received, timeout=60)
        eventually(
            lambda: any(f"HTTP Request: POST {inbox.url} " in s for s in served.output),
            timeout=30,
        )
    assert [got.path for got in inbox.received()] == [secret_path]
    logged = "".join(served.output)
    assert "s3cretWebhookPathPart" not in logged and "/services/" not in logged

"""An answer link's secret, and a webhook URL's path, never reach a log line of a real
``pawflow serve``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from pawflow import open_store
from pawflow.store import Question
from pawflow.store.reach import answer_links, webhooks
from pawflow.testing import eventually
from tests.channels.receiver import receiver
from tests.served import Served

pytestmark = pytest.mark.slow


def test_the_access_log_masks_an_answer_link(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pawflow.db'}"
    with open_store(url) as store:
        store.ensure_user("ada")
        conversation = store.create_conversation("ada", "logs")
        asked = store.ask(Question("ada", conversation.id, "confirm", "Logged?")).interaction
        with store.transaction() as tx:
            secret = answer_links.create(tx, asked.id, "ada", now=store.now(), expires_at=None)
    served = Served(url, tmp_path, env={"PAWFLOW_LOG_LEVEL": "info"})
    served.start()
    try:
        for path in (f"/a/{secret}", f"/a/{secret}/confirm?pick=0", f"/a/{secret}x"):
            httpx.get(served.url + path)
        httpx.post(f"{served.url}/a/{secret}", data={"pick": "0"})
        eventually(lambda: sum("/a/" in line for line in served.output) >= 4, timeout=20)
    finally:
        served.kill()
    logged = "".join(served.output)
    assert "/a/***" in logged
    assert secret[4:20] not in logged


def test_a_webhook_is_logged_by_its_host_alone(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pawflow.db'}"
    secret_path = "/services/T0PAWFLOW/B0PAWFLOW/s3cretWebhookPathPart"
    with receiver() as inbox:
        with open_store(url) as store:
            store.ensure_user("ada")
            conversation = store.create_conversation("ada", "logs")
            with store.transaction() as tx:
                webhooks.create(
                    tx, "ada", inbox.url + secret_path, ("interaction.created",), store.now()
                )
            store.ask(Question("ada", conversation.id, "confirm", "Logged?"))
        served = Served(
            url,
            tmp_path,
            env={"PAWFLOW_LOG_LEVEL": "info", "PAWFLOW_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"},
        )
        served.start()
        try:
            eventually(inbox.received, timeout=60)
            eventually(lambda: any("HTTP Request: POST" in s for s in served.output), timeout=30)
        finally:
            served.kill()
    assert [got.path for got in inbox.received()] == [secret_path]
    logged = "".join(served.output)
    assert f"HTTP Request: POST {inbox.url} " in logged
    assert "s3cretWebhookPathPart" not in logged and "/services/" not in logged

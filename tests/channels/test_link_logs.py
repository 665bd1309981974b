"""An answer link's secret never reaches a log line of a real ``pawflow serve``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from pawflow import open_store
from pawflow.store import answer_links
from pawflow.testing import eventually
from tests.served import Served

pytestmark = pytest.mark.slow


def test_the_access_log_masks_an_answer_link(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pawflow.db'}"
    with open_store(url) as store:
        store.ensure_user("ada")
        conversation = store.create_conversation("ada", "logs")
        asked = store.request_interaction("ada", conversation.id, "confirm", "Logged?")
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

"""``PAWFLOW_LOG_FORMAT=json``: a full run of ``pawflow serve --demo`` at the debug level logs
one JSON object per line, with the ids of the work at hand, and not one of the secrets the
run made or was given: API tokens, sign-in links, login cookies, CSRF tokens, the metrics
token, a model key.

The sign-in link and the demo token that a first run prints for its operator go to standard
output, by design; the log is standard error.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from pawflow import open_store
from pawflow.client import Client
from pawflow.flow import FlowFile
from pawflow.flow import deployments as deps
from pawflow.server.credentials import issue_signin_link, issue_token
from pawflow.server.testing import free_port
from pawflow.testing import eventually
from tests.operations.test_prometheus import FLOW

pytestmark = pytest.mark.slow

METRICS_TOKEN = "metrics-secret-7f3a9c1e5b"
MODEL_KEY = "sk-model-secret-0c9d8e7f6a"


@pytest.mark.timeout(120)
def test_a_full_run_logs_json_lines_with_ids_and_no_secret(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'pawflow.db'}"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    secrets: dict[str, str] = {"metrics token": METRICS_TOKEN, "model key": MODEL_KEY}
    env = {
        **os.environ,
        "PAWFLOW_LOG_FORMAT": "json",
        "PAWFLOW_LOG_LEVEL": "debug",
        "PAWFLOW_METRICS": "on",
        "PAWFLOW_METRICS_TOKEN": METRICS_TOKEN,
        "PAWFLOW_MODEL_API_KEY": MODEL_KEY,
        "PAWFLOW_SWEEP_INTERVAL": "0.5",
        "OTEL_TRACES_EXPORTER": "console",  # spans to standard output: trace ids in the log
    }
    out, err = (tmp_path / "stdout.txt"), (tmp_path / "stderr.txt")
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "pawflow", "serve", "--demo", "--db", db, "--port", str(port)],
            stdout=stdout,
            stderr=stderr,
            cwd=tmp_path,
            env=env,
        )
    try:

        def up() -> bool:
            assert process.poll() is None, err.read_text()
            with contextlib.suppress(httpx.TransportError):
                return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
            return False

        eventually(up, timeout=60, interval=0.05)
        printed = out.read_text()
        secrets["demo link"] = printed.split("/signin?token=", 1)[1].split()[0]
        secrets["demo token"] = printed.split("export PAWFLOW_TOKEN=", 1)[1].split()[0]
        with open_store(db) as store:
            secrets["api token"] = issue_token(store, "ada")
            link = issue_signin_link(store, "ada", base_url=url, ttl=timedelta(minutes=5))
        secrets["sign-in link"] = link.split("token=", 1)[1]
        secrets["unknown token"] = "pf_" + "x" * 40

        with httpx.Client(base_url=url) as browser:
            assert browser.get(f"/signin?token={secrets['sign-in link']}").status_code == 200
            same_origin = {"Origin": url}  # as a browser sends with the sign-in form
            signed_in = browser.post(
                "/signin", data={"token": secrets["sign-in link"]}, headers=same_origin
            )
            assert signed_in.status_code in (200, 303), signed_in.text
            secrets["login cookie"] = browser.cookies["pawflow_session"]
            secrets["csrf token"] = browser.cookies["pawflow_csrf"]
            assert browser.get("/api/session").status_code == 200
            spent = browser.post(
                "/signin", data={"token": secrets["sign-in link"]}, headers=same_origin
            )
            assert spent.status_code >= 400  # spent: refused
        bad = {"Authorization": f"Bearer {secrets['unknown token']}"}
        assert httpx.get(f"{url}/api/session", headers=bad).status_code == 401
        scrape = {"Authorization": f"Bearer {METRICS_TOKEN}"}
        assert httpx.get(f"{url}/metrics", headers=scrape).status_code == 200
        assert httpx.get(f"{url}/metrics", headers=bad).status_code == 401

        with Client(url, secrets["api token"]) as client, open_store(db) as store:
            conversation = client.create_conversation("Work").id
            asked = client.request_interaction(conversation, "confirm", "Deploy?")
            client.respond_interaction(asked.id, True)
            expiring = client.request_interaction(conversation, "text", "Name?", expires_in="1s")
            deployment, _ = deps.deploy(store, FLOW, conversation_id=conversation)
            deps.inject(store, deployment.id, FlowFile.create(attributes={"n": "1"}))
            flow_asked = eventually(
                lambda: [
                    i for i in client.iter_interactions(status="pending") if i.kind == "confirm"
                ],
                timeout=30,
            )[0]
            client.respond_interaction(flow_asked.id, True)
            eventually(lambda: "flow resumed" in err.read_text(), timeout=30)
            eventually(lambda: f"request {flow_asked.id} answered" in err.read_text())
            eventually(lambda: f"request {expiring.id} expired" in err.read_text(), timeout=30)
        with Client(url, secrets["demo token"]) as demo:
            [talk] = [c for c in demo.list_conversations() if c.title == "Demo"]
            demo.send_message(talk.id, "hello")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)

    lines = err.read_text().splitlines()
    assert len(lines) > 20
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= set(entry), entry
    log = err.read_text()
    for what, secret in secrets.items():
        assert secret not in log, f"the log carries the {what}"

    def having(*ids: str) -> list[dict[str, str]]:
        return [entry for entry in entries if all(key in entry for key in ids)]

    answered = [e for e in having("request_id", "conversation_id", "trace_id", "span_id")]
    assert any(e["request_id"] == asked.id and "answered" in e["message"] for e in answered)
    resumed = having("request_id", "deployment_id", "trace_id")
    assert any(
        e["request_id"] == flow_asked.id and e["deployment_id"] == deployment.id for e in resumed
    )
    assert any(e["logger"] == "uvicorn.access" for e in entries)  # uvicorn's lines too
    assert any(e["request_id"] == expiring.id for e in having("request_id", "conversation_id"))
